/*
 * The compiler's options: everything a compilation depends on besides its
 * input text and signature, in one struct that the caller fills and hands
 * to the compilation context (asc__cctx_set_opts; a context starts with
 * the defaults).  The compiler reads no
 * environment (as Halide takes a Target): the jit fills the struct from
 * the ASC_* variables once per compilation (jit/options.c), ascc from its
 * command line and the same variables.
 *
 * `code` holds what the generated code depends on.  Its fields come from
 * one list, ASC_CODEGEN_OPTS, and the kernel cache key hashes every field
 * of that list (asc__jit_key), so a field added to it is in the key.  The
 * other fields change how the compiler runs, never what it produces, and
 * are not in the key (docs/decisions.md, "One options struct").
 */
#ifndef ASC_COMPILER_OPTIONS_H
#define ASC_COMPILER_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The L1 data cache the loop-nest passes size their tiles for when the
 * machine's is unknown (docs/optimizer.md, "Tile sizes"). */
#define ASC_DEFAULT_L1D_BYTES 32768
/* Streaming stores (docs/arrays.md): the fewest bytes a parallel loop must
 * write for its stores to stream, unless ASC_NTSTORE says otherwise. */
#define ASC_NTSTORE_DEFAULT_BYTES (8ull << 20)
/* The time one compilation may spend in libasc itself (front end, passes,
 * emit) unless ASC_COMPILE_TIMEOUT_MS says otherwise.  The C compiler has
 * its own limit, ASC_CC_TIMEOUT_MS. */
#define ASC_COMPILE_DEFAULT_TIMEOUT_MS 60000u
/* The bytes one compilation's arenas may hold unless ASC_COMPILE_MEMORY
 * says otherwise.  Memory grows linearly with the kernel, some 40-70 KiB
 * a whole-array statement, so only a runaway, or a kernel of some 60,000
 * whole-array statements (whose C the C compiler would take far longer
 * than its limit to build), reaches it. */
#define ASC_COMPILE_DEFAULT_MEMORY (4ull << 30)

/* X(field): every field a uint64_t, hashed by name and value. */
#define ASC_CODEGEN_OPTS(X)                                                   \
  X(fastmath)          /* ASC_FASTMATH_* bits of kernels whose decorator      \
                          says no fastmath= (ascCompileOptions.fastmath) */   \
  X(passes_off)        /* bit k: row k of the pass list (asc__pass_table)     \
                          is left out (its switch, e.g. ASC_TILE=0) */        \
  X(ntstore_min_bytes) /* streaming stores from this many bytes; 0 never */   \
  X(acc_tile_bytes)    /* interchange's accumulator tile */                   \
  X(tile_row_bytes)    /* the row of a tile of the tile pass */          \
  X(nofuse)            /* 1: every array statement makes its arrays        \
                          (ASC_FUSE=0; lower_fuse.c) */                       \
  X(selfuse)           /* a selection reduced whole is one predicated loop: \
                          0 never (ASC_FUSE_SELECT=0), 1 of a 1-D mask   \
                          (default), 2 any (=1; lower_reduce.c) */       \
  X(corder_sums)       /* 1: float sums add in C order, not numpy's        \
                          pairwise order (ASC_PAIRWISE=0;                  \
                          lower_pairwise.c) */

typedef struct asc__codegen_opts {
#define ASC__CODEGEN_FIELD(name) uint64_t name;
  ASC_CODEGEN_OPTS(ASC__CODEGEN_FIELD)
#undef ASC__CODEGEN_FIELD
} asc__codegen_opts;

typedef struct asc__compile_opts {
  asc__codegen_opts code;
  /* How long the compilation may take, ms (asc__cctx_budget). */
  uint64_t timeout_ms;
  /* How many bytes the compilation's arenas may hold (asc__arena_alloc,
   * asc__scratch_alloc). */
  uint64_t memory_bytes;
  /* Comma-separated pass names to run instead of the standard pipeline
   * (IR tests); NULL for the standard one. */
  const char *only;
  /* Comma-separated pass names after which the IR is printed ("all" for
   * every pass; ASC_DUMP), to dump_to (NULL: stderr). */
  const char *dump;
  FILE *dump_to;
  /* Verify the IR after every pass: always in builds without NDEBUG,
   * else when this is set (ASC_VERIFY=1). */
  bool verify;
} asc__compile_opts;

/* The defaults: every pass on, no fastmath, tiles for
 * ASC_DEFAULT_L1D_BYTES, streaming stores from ASC_NTSTORE_DEFAULT_BYTES,
 * ASC_COMPILE_DEFAULT_TIMEOUT_MS, ASC_COMPILE_DEFAULT_MEMORY. */
void asc__compile_opts_init(asc__compile_opts *o);

/* Sizes the loop-nest passes' tiles for an L1 data cache of l1d_bytes
 * (0: unknown, ASC_DEFAULT_L1D_BYTES; docs/optimizer.md, "Tile sizes"):
 *
 *   interchange's accumulator tile:  L1 / 16, rounded down to a multiple
 *                                    of 64 bytes, within 512 .. 8192 bytes
 *   the tile pass's row of a tile:   the largest power of two R with
 *                                    R * R <= L1 / 2, within 64 .. 512 bytes;
 *                                    T = R / element size, within 8 .. 64
 *
 * 32 KiB gives 2048 and 128 bytes (512 float32 accumulators, 32 x 32
 * float32 tiles).  Two sizes that give the same tiles give the same code,
 * and the same cache key. */
void asc__compile_opts_set_l1d(asc__compile_opts *o, uint64_t l1d_bytes);

#endif /* ASC_COMPILER_OPTIONS_H */
