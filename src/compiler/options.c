/*
 * The compiler's options (options.h): defaults and the tile-size rules.
 */
#include <string.h>

#include "compiler/options.h"

static int64_t acc_tile_bytes(uint64_t l1d) {
  uint64_t b = l1d / 16 / 64 * 64;
  return b < 512 ? 512 : b > 8192 ? 8192 : (int64_t)b;
}

static int64_t tile_row_bytes(uint64_t l1d) {
  uint64_t half = l1d / 2, r = 64;
  while (r < 512 && (r * 2) * (r * 2) <= half)
    r *= 2;
  return (int64_t)r;
}

void asc__compile_opts_set_l1d(asc__compile_opts *o, uint64_t l1d_bytes) {
  uint64_t l1d = l1d_bytes != 0 ? l1d_bytes : ASC_DEFAULT_L1D_BYTES;
  o->code.acc_tile_bytes = (uint64_t)acc_tile_bytes(l1d);
  o->code.tile_row_bytes = (uint64_t)tile_row_bytes(l1d);
}

void asc__compile_opts_init(asc__compile_opts *o) {
  memset(o, 0, sizeof *o);
  o->code.ntstore_min_bytes = ASC_NTSTORE_DEFAULT_BYTES;
  asc__compile_opts_set_l1d(o, 0);
  o->timeout_ms = ASC_COMPILE_DEFAULT_TIMEOUT_MS;
  o->memory_bytes = ASC_COMPILE_DEFAULT_MEMORY;
}
