/* Placeholder until the compiler stages land. */
#include <stdio.h>

#include "ascc.h"

int ascc_emit_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "ascc: the compiler is not built in yet\n");
  return 2;
}
