/*
 * The optimisation passes, one per file, and the pipeline that orders them
 * (pipeline.c).  Every pass takes one function and rewrites it in place.
 */
#ifndef ASC_PASSES_H
#define ASC_PASSES_H

#include <stdio.h>

#include "compiler/ir/ir.h"

void asc__pass_fold(asc__cctx *c, asc__irfunc *f);
void asc__pass_dce(asc__cctx *c, asc__irfunc *f);
void asc__pass_cse(asc__cctx *c, asc__irfunc *f);
void asc__pass_licm(asc__cctx *c, asc__irfunc *f);
void asc__pass_unroll(asc__cctx *c, asc__irfunc *f);
void asc__pass_strength(asc__cctx *c, asc__irfunc *f);
void asc__pass_parallelize(asc__cctx *c, asc__irfunc *f);
void asc__pass_privatize(asc__cctx *c, asc__irfunc *f);
/* False when ASC_PRIVATIZE=0 turns the privatize pass off (it is then
 * left out of the standard pipeline; part of the kernel cache key). */
bool asc__privatize_enabled(void);
/* Naive matrix-product loop nests -> gemm_exact (gemmrec.c); false when
 * ASC_GEMMREC=0 leaves it out of the pipeline (part of the cache key). */
void asc__pass_gemmrec(asc__cctx *c, asc__irfunc *f);
bool asc__gemmrec_enabled(void);
/* Loop interchange with scalar expansion (interchange.c); false when
 * ASC_INTERCHANGE=0 leaves it out of the pipeline (part of the cache key). */
void asc__pass_interchange(asc__cctx *c, asc__irfunc *f);
bool asc__interchange_enabled(void);
/* Unroll-and-jam of the rows around an interchanged nest (unrolljam.c);
 * ASC_UNROLLJAM=0 leaves it out (part of the cache key). */
void asc__pass_unrolljam(asc__cctx *c, asc__irfunc *f);
bool asc__unrolljam_enabled(void);
/* Cache tiling of crossing 2-deep nests (tile.c), after parallelize;
 * ASC_TILE=0 leaves it out (part of the cache key).  asc__tile_wants: the
 * nest I > J will be tiled (parallelize then keeps J serial, uncollapsed);
 * false unless f->tile_planned. */
void asc__pass_tile(asc__cctx *c, asc__irfunc *f);
bool asc__tile_enabled(void);
bool asc__tile_wants(asc__cctx *c, asc__irfunc *f, asc__irins *I,
                     asc__irins *J);

/* Time tiling of iterated sweeps (wavefront.c), before parallelize;
 * ASC_WAVEFRONT=0 leaves it out (part of the cache key). */
void asc__pass_wavefront(asc__cctx *c, asc__irfunc *f);
bool asc__wavefront_enabled(void);

/* Tile sizes (docs/optimizer.md, "Tile sizes").  The loop-nest passes
 * size their tiles for the L1 data cache of the machine the code is for
 * (ascDeviceProp.l1CacheSize, from hwloc; the JIT passes the launching
 * device's, ascc --l1-cache=BYTES|host), 0 when unknown, which means
 * ASC_DEFAULT_L1D_BYTES.
 *
 *   interchange's accumulator tile:  L1 / 16, rounded down to a multiple
 *                                    of 64 bytes, within 512 .. 8192 bytes
 *   the tile pass's row of a tile:   the largest power of two R with
 *                                    R * R <= L1 / 2, within 64 .. 512 bytes;
 *                                    T = R / element size, within 8 .. 64
 *
 * 32 KiB gives 2048 and 128 bytes (512 float32 accumulators, 32 x 32
 * float32 tiles). */
#define ASC_DEFAULT_L1D_BYTES 32768
int64_t asc__acc_tile_bytes(uint64_t l1d_bytes);
int64_t asc__tile_row_bytes(uint64_t l1d_bytes);

/* Invariant loads out of loops whose stores cannot reach them (hoist.c),
 * after the loop-nest passes; ASC_HOIST=0 leaves it out (part of the
 * cache key). */
void asc__pass_hoist(asc__cctx *c, asc__irfunc *f);
bool asc__hoist_enabled(void);

/* Exact float max / min reductions of a serial loop in vector lanes
 * (redlanes.c), after hoist; ASC_REDLANES=0 leaves it out (part of the
 * cache key). */
void asc__pass_redlanes(asc__cctx *c, asc__irfunc *f);
bool asc__redlanes_enabled(void);

/* Vector math calls of a loop that cannot vectorise (it raises, or
 * carries a float sum) computed ahead a chunk at a time (vmchunk.c), after
 * hoist; ASC_VMCHUNK=0 leaves it out (part of the cache key). */
void asc__pass_vmchunk(asc__cctx *c, asc__irfunc *f);
bool asc__vmchunk_enabled(void);

typedef struct asc__pipeline_opts {
  /* Comma-separated pass names to run instead of the standard pipeline
   * (tests); NULL for the standard one. */
  const char *only;
  /* Comma-separated pass names after which the IR is printed ("all" for
   * every pass); NULL reads ASC_DUMP. */
  const char *dump;
  FILE *dump_to;          /* NULL: stderr */
  /* Verify between passes: always in builds without NDEBUG, else when
   * this is set or ASC_VERIFY=1. */
  bool verify;
  /* The L1 data cache the tiles are sized for, bytes; 0: unknown
   * (ASC_DEFAULT_L1D_BYTES). */
  uint64_t l1d_bytes;
} asc__pipeline_opts;

/* Runs the passes over every function of m. */
void asc__ir_pipeline(asc__cctx *c, asc__irmodule *m,
                      const asc__pipeline_opts *opts);

#endif /* ASC_PASSES_H */
