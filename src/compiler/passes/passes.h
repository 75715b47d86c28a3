/*
 * The optimisation passes, one per file, the pipeline that orders them
 * (pipeline.c), and the analyses they share.
 */
#ifndef ASC_PASSES_H
#define ASC_PASSES_H

#include <stdio.h>
#include <string.h>

#include "compiler/ir/ir.h"

/* The passes, in the order the standard pipeline runs them (pipeline.c
 * draws it): X(name, switch).  Pass `name` is the function
 * asc__pass_<name> of passes/<name>.c; a pass that runs more than once
 * has a row each time.  switch: the environment variable whose value 0
 * leaves the row out (the jit reads it into asc__compile_opts, whose
 * passes_off bits key the kernel cache), NULL for a row that always runs.
 * A new pass is one row here and its file. */
#define ASC_PASSES(X)                                                         \
  X(fold, NULL)                                                               \
  X(dce, NULL)                                                                \
  X(unroll, NULL)                                                             \
  X(fold, NULL)                                                               \
  X(cse, NULL)                                                                \
  X(licm, NULL)                                                               \
  X(gemmrec, "ASC_GEMMREC")                                                   \
  X(interchange, "ASC_INTERCHANGE")                                           \
  X(wavefront, "ASC_WAVEFRONT")                                               \
  X(parallelize, NULL)                                                        \
  X(tile, "ASC_TILE")                                                         \
  X(unrolljam, "ASC_UNROLLJAM")                                               \
  X(privatize, "ASC_PRIVATIZE")                                               \
  X(hoist, "ASC_HOIST")                                                       \
  X(redlanes, "ASC_REDLANES")                                                 \
  X(vmchunk, "ASC_VMCHUNK")                                                   \
  X(strength, NULL)                                                           \
  X(fold, NULL)                                                               \
  X(licm, NULL)                                                               \
  X(dce, NULL)

/* Every pass takes one function and rewrites it in place. */
#define ASC__PASS_DECL(name, sw)                                              \
  void asc__pass_##name(asc__cctx *c, asc__irfunc *f);
ASC_PASSES(ASC__PASS_DECL)
#undef ASC__PASS_DECL

typedef struct asc__pass {
  const char *name;
  void (*run)(asc__cctx *c, asc__irfunc *f);
  const char *off_env;       /* the switch; NULL: always runs */
} asc__pass;

/* The rows of ASC_PASSES, in order; *n receives how many. */
const asc__pass *asc__pass_table(int *n);

/* The asc__codegen_opts.passes_off bits of the rows of pass `name` (0
 * when there is none). */
static inline uint64_t asc__pass_bits(const char *name) {
#define ASC__PASS_NAME(name, sw) #name,
  const char *const names[] = {ASC_PASSES(ASC__PASS_NAME)};
#undef ASC__PASS_NAME
  uint64_t b = 0;
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
    if (strcmp(names[k], name) == 0)
      b |= (uint64_t)1 << k;
  return b;
}

/* Will the pipeline running on c run pass `name`?  Its options say: the
 * switches, or, while it runs an `only` list, that list.  Passes and
 * analyses ask it about later passes. */
static inline bool asc__pass_planned(const asc__cctx *c, const char *name) {
  uint64_t b = asc__pass_bits(name);
  return b != 0 && (c->opts.code.passes_off & b) != b;
}

/* Runs the passes over every function of m, as c's options say. */
void asc__ir_pipeline(asc__cctx *c, asc__irmodule *m);

/* ------------------------------------------------- shared analyses
 * Code the passes share lives in files of its own, never in a pass: a
 * pass calls no other pass and nothing of pipeline.c.  Dependences and
 * loop nests: depend.h (depend.c).  Tiling (tiling.c): */

/* The nest I > J the tile pass looks at: J when I (a for or pfor without
 * reductions, step 1) holds pure set-up and then the serial loop J of
 * straight-line instructions; else NULL. */
asc__irins *asc__tile_shape(asc__cctx *c, asc__irfunc *f, asc__irins *I);
/* NULL when the nest I > J may be tiled in tiles of *T, else why not;
 * *quiet when it is not a candidate at all (no note). */
const char *asc__tile_decide(asc__cctx *c, asc__irfunc *f, asc__irins *I,
                             asc__irins *J, int64_t *T, bool *quiet);
/* Will the tile pass tile the nest I > J?  parallelize asks before it
 * collapses I and J; false unless the pipeline plans the tile pass. */
bool asc__tile_wants(asc__cctx *c, asc__irfunc *f, asc__irins *I,
                     asc__irins *J);

#endif /* ASC_PASSES_H */
