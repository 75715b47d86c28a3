/*
 * ascc — the ahead-of-time compiler CLI.  ascc.c parses nothing but the
 * command name and hands the arguments to the part that owns the option.
 */
#ifndef ASCC_H
#define ASCC_H

/* `ascc [--emit=tokens|ast|types|ir|c|so] [--signature S] [-o OUT] FILE.py`.
 * Returns the process exit status (0 ok, 1 compile error, 2 usage). */
int ascc_emit_main(int argc, char **argv);

/* `ascc --cache-info` / `ascc --cache-clear`. */
int ascc_cache_info(void);
int ascc_cache_clear(void);

#endif
