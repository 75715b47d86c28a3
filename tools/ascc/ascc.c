/*
 * ascc: compile Python kernel files ahead of time, dump compiler stages,
 * manage the kernel cache.
 */
#include <stdio.h>
#include <string.h>

#include "asc/asc.h"
#include "ascc.h"

static void usage(FILE *f) {
  fputs(
      "usage: ascc [--emit=MODE] [--signature SIG]... [-o OUT] [-O0..-O3]\n"
      "            [--fastmath[=FLAGS]] [--boundscheck] [-march=CPU]\n"
      "            [--l1-cache=BYTES|host] FILE.py\n"
      "       ascc --cache-info | --cache-clear | --version | -h | --help\n"
      "\n"
      "Compiles the @asc.kernel functions of FILE.py ahead of time.\n"
      "\n"
      "modes (--emit=MODE):\n"
      "  so      (default) one shared object holding every kernel specialised\n"
      "          for each signature that names it; load it with\n"
      "          ascModuleLoad and launch with ascModuleGetKernel +\n"
      "          ascLaunchKernel, no compiler needed at run time.  A launch\n"
      "          that fits no signature fails with ascErrorInvalidValue\n"
      "          listing the ones compiled.  -o default: FILE.so here\n"
      "  h       a C header: a typed launch wrapper per specialisation,\n"
      "          asc_launch_KERNEL_DTYPES(stream, blocks, args...), and\n"
      "          asc_FILE_load(path) / asc_FILE_unload()\n"
      "  c       the C source that --emit=so compiles\n"
      "  ir      the optimised IR (ASC_DUMP=pass,... shows it after passes);\n"
      "          also reads a .ir file\n"
      "  types   the types inferred for one --signature\n"
      "  ast     the syntax tree\n"
      "  tokens  the tokens\n"
      "  h, c, ir, types, ast and tokens print to stdout unless -o is given\n"
      "\n"
      "options:\n"
      "  --signature SIG  a specialisation to compile (repeatable; also read\n"
      "                   from '# asc: signature SIG' lines in FILE.py; a\n"
      "                   kernel whose parameters are all annotated needs\n"
      "                   none).  SIG is KERNEL(PARAM, ...), each PARAM one of\n"
      "                     f32[:, :]    2-d float32 tensor, any layout\n"
      "                     f32[:, ::1]  2-d float32 tensor, C-contiguous\n"
      "                     f32[2]       the same as f32[:, ::1]\n"
      "                     i64 float32  a scalar of that dtype (f16 bf16 f32\n"
      "                                  f64 i8..i64 u8..u64 bool, or long\n"
      "                                  names such as float32)\n"
      "                     int float    a Python int / float (weak scalar)\n"
      "                     i64=4        a ConstExpr parameter's value\n"
      "                   end SIG with ' aliased' for a specialisation that\n"
      "                   accepts tensors that overlap in memory\n"
      "  -o OUT           output file\n"
      "  -O0 .. -O3       C optimisation level (default -O3)\n"
      "  --fastmath[=FLAGS]  floating-point permissions for kernels whose\n"
      "                   decorator does not say fastmath=: FLAGS is a comma\n"
      "                   list of contract,reassoc,nnan,ninf,nsz,arcp,afn;\n"
      "                   alone it allows all (results may differ; see\n"
      "                   docs/fastmath.md)\n"
      "  --boundscheck    IndexError on out-of-bounds tensor accesses\n"
      "  -march=CPU       target CPU, passed to the C compiler (default: the\n"
      "                   compiler's default target, so the module runs on\n"
      "                   any machine of the architecture; -march=native\n"
      "                   tunes for this one)\n"
      "  --l1-cache=BYTES|host  the L1 data cache the loop-nest passes size\n"
      "                   their tiles for (K or M suffix; host: this\n"
      "                   machine's, from hwloc; default 32K, as the JIT\n"
      "                   when the device's is unknown; docs/optimizer.md)\n"
      "  --cache-info     show the JIT kernel cache; --cache-clear empties it\n"
      "  --version        print the libasc version\n"
      "\n"
      "example:\n"
      "  ascc -O3 --signature 'vadd(f32[:], f32[:], f32[:])' \\\n"
      "       --signature 'vadd(f64[::1], f64[::1], f64[::1])' -o vadd.so vadd.py\n"
      "  ascc --emit=h -o vadd.h --signature ... vadd.py\n"
      "  ascc --emit=types --signature 'vadd(f32[1], f32[1], f32[1])' vadd.py\n"
      "\n"
      "exit status: 0 ok, 1 compile errors, 2 usage or I/O errors\n",
      f);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
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
