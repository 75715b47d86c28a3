/*
 * ascc: compile Python kernel files ahead of time, dump compiler stages,
 * manage the kernel cache.
 */
#include <stdio.h>
#include <string.h>

#include "asc/asc.h"
#include "ascc.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ascc [--emit=tokens|ast|types|ir|c|so] [--signature SIG] "
          "[-o OUT] FILE.py\n"
          "       ascc --cache-info | --cache-clear | --version\n"
          "  SIG is e.g. 'conv2d(f32[4], f32[4], f32[4])'\n");
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "--help") == 0) {
    usage(stdout);
    return 0;
  }
  if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
    printf("ascc (libasc) %s\n", ASC_VERSION_STRING);
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "--cache-info") == 0)
    return ascc_cache_info();
  if (argc == 2 && strcmp(argv[1], "--cache-clear") == 0)
    return ascc_cache_clear();
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  return ascc_emit_main(argc, argv);
}
