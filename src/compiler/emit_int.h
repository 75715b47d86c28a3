/*
 * Shared by the files of the C emitter (emit_c.c: the module, kernels and
 * serial loops; emit_ins.c: instructions; emit_pfor.c: pfor bodies and
 * their calls) and by nothing else.
 */
#ifndef ASC_EMIT_INT_H
#define ASC_EMIT_INT_H

#include <stdarg.h>
#include <stdio.h>

#include "compiler/emit_c.h"

enum { F_LOOP, F_TRY, F_EXCEPT, F_FINALLY, F_CRIT };

typedef struct frame {
  int kind;
  int label;
  const asc__irins *ins;
  bool used;            /* its exception label is jumped to */
} frame;

/* A collapsed nest (passes/parallelize.c) recovers its loop indices from
 * the flat iteration k: u0 = (u64)k, then q_j = u_j % t_j and
 * u_{j+1} = u_j / t_j with every t_j invariant.  A body that starts so
 * computes them once per chunk and then counts them up like an odometer:
 * a chain of 64-bit divisions per iteration is what made a collapsed
 * conv2d slower than the same nest written as loops. */
#define MAXODO 8
typedef struct odometer {
  const asc__irins *cast;           /* u0 = cast k; NULL: no match */
  int n;                            /* levels */
  const asc__irins *mod[MAXODO];    /* q_j = mod u_j, t_j */
  const asc__irins *div[MAXODO];    /* u_{j+1} = floordiv u_j, t_j */
} odometer;

typedef struct emitter {
  asc__cctx *c;
  asc__buf *o;
  const asc__emit_src *src;
  const asc__irfunc *f;
  int kidx;             /* kernel index in the module */
  int labels;           /* label counter, per C function */
  frame *frames;
  int nframes, capframes;
  int depth;            /* indentation */
  int32_t last_line;
  asc__lineidx lines;   /* of src->text, built on first use */
  int npfor;            /* pfor bodies emitted so far */
  /* Every body function of the module, for the balance of a build in two
   * parts (emit_c.c, balance_parts): where the digit of its
   * `#if ASC_PART != 1` is in o, and its length. */
  struct asc__emit_part { size_t digit, len; } *parts;
  int32_t nparts, capparts;
  /* The pfor instructions in body order: body function J is pfors[J].  A
   * loop emitted twice (polled and plain) calls the same body twice. */
  const asc__irins **pfors;
  int32_t capfors;
  /* 1 + the J of each pfor (and sweep), by its induction register, which
   * belongs to one loop */
  asc__regtab pfor_num;
  bool in_body;         /* emitting a pfor body function */
  int sdepth;           /* serial loops around the code being emitted */
  /* The innermost loop around the code being emitted that counts its
   * iterations' work against the next poll (emit_for), and the registers
   * its body assigns: loops inside it whose bounds it does not change
   * are counted by it; NULL when none. */
  const asc__irins *work_loop;
  asc__regtab *work_defs;
  bool body_reduces;    /* that body has reductions */
  const asc__irins *pfor;  /* the pfor whose body is being emitted */
  int64_t *shared_off;  /* per register: byte offset in ctx->shared */
  uint64_t shared_bytes;
  bool uses_barrier;
  bool raise_used;      /* L_raise is jumped to */
  const asc__irins **def; /* per register: its only definition, or NULL */
  /* per register: 1 defined by new_array, 2 by set_array (an array the
   * kernel created, bound to a name), else 0 */
  uint8_t *heap;
  odometer odo;         /* the pfor body being emitted, when it matched */
  bool nt_helpers;      /* emit_ntstore.h is in the output already */
} emitter;

static inline void out(emitter *e, const char *fmt, ...) ASC_PRINTF(2, 3);
static inline void out(emitter *e, const char *fmt, ...) {
  char small[512];
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0)
    ASC_CHECK(e->c, !"vsnprintf");
  if ((size_t)n < sizeof small) {
    asc__buf_put(e->o, small, (size_t)n);
  } else {
    char *big = asc__arena_alloc(e->c, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    asc__buf_put(e->o, big, (size_t)n);
  }
  if (e->o->oom)
    asc__cctx_throw(e->c, ASC_FAIL_OOM);
}

static inline void ind(emitter *e) {
  for (int d = 0; d < e->depth; d++)
    asc__buf_puts(e->o, "  ");
}

#define LINE(e, ...)                                                          \
  do {                                                                        \
    ind(e);                                                                   \
    out(e, __VA_ARGS__);                                                      \
    asc__buf_puts((e)->o, "\n");                                             \
  } while (0)

/* Tensor data pointers are restrict unless the launch may pass
 * overlapping tensors. */
static inline const char *restrict_kw(const emitter *e) {
  return (e->src && e->src->may_alias) || (e->f && e->f->may_alias)
             ? ""
             : "restrict ";
}

static inline const char *ctype(int dt) {
  static const char *const t[] = {"_Bool",    "int8_t",   "int16_t",
                                  "int32_t",  "int64_t",  "uint8_t",
                                  "uint16_t", "uint32_t", "uint64_t",
                                  "asc_f16",  "asc_bf16", "float",
                                  "double",   "float _Complex",
                                  "double _Complex"};
  return dt >= 0 && dt < (int)ASC_ARRAY_SIZE(t) ? t[dt] : "void";
}

static inline const char *sfx(int dt) { return asc__dt_name(dt); }

static inline void push(emitter *e, int kind, int label, const asc__irins *i) {
  e->frames = asc__arena_grow(e->c, e->frames, e->nframes, &e->capframes,
                              sizeof *e->frames, 16);
  e->frames[e->nframes].kind = kind;
  e->frames[e->nframes].label = label;
  e->frames[e->nframes].ins = i;
  e->frames[e->nframes].used = false;
  e->nframes++;
}

static inline const char *rname(emitter *e, int32_t r) {
  const asc__irreg *g = &e->f->regs[r];
  char buf[64];
  size_t n = 0;
  for (const char *p = g->name; *p && n < 40; p++)
    buf[n++] = *p == '.' ? '_' : *p;
  buf[n] = 0;
  return asc__arena_printf(e->c, "%c%d_%s",
                           g->ty.kind == ASC_IRK_TENSOR ? 'd' : 'v', (int)r,
                           buf);
}

static inline const char *tname(emitter *e, int32_t r) {
  const char *d = rname(e, r);
  return asc__arena_printf(e->c, "t%s", d + 1);
}

/* -------------------------------------------------------------- emit_c.c */

/* Escaped C string literal of user bytes. */
const char *asc__emit_cstr(emitter *e, const char *s);
/* The comment for Python source line `line`, once per line. */
void asc__emit_line_comment(emitter *e, int32_t line);
/* Raises exception kind with msg at line: to the handler in scope. */
void asc__emit_raise(emitter *e, int kind, int32_t line, const char *msg);
/* A cancellation poll: a stopped launch unwinds like an exception. */
void asc__emit_poll(emitter *e, int32_t line);
/* A serial counted loop (emit_c.c says where its polls go); iv is its
 * induction variable, of C type ity. */
void asc__emit_for(emitter *e, const asc__irins *i, const char *iv,
                   const char *ity);
/* A loop the wavefront pass marked: its sweeps a row at a time when
 * their rows are apart, else asc__emit_for. */
void asc__emit_wavefront(emitter *e, const asc__irins *T, const char *ity);
/* The local_array / shared_array instruction in b that defines r. */
const asc__irins *asc__emit_array_def(const asc__irblock *b, int32_t r);
/* Gives back the arrays bound to names (heap 2) that mark says the code
 * being emitted defines: a parallel loop body's, as it returns. */
void asc__emit_release_arrays(emitter *e, asc__regtab *mark);

/* The C expression of IR value v. */
const char *asc__emit_val(emitter *e, asc__irval v);
/* The label an exception jumps to from here. */
const char *asc__emit_exc_target(emitter *e);
/* The identity of reduction op on dt, as a C expression. */
const char *asc__emit_ident_of(emitter *e, int op, int dt);
/* mark[r]: bit 0 when r occurs (def or use) in b, bit 1 when it is
 * defined; isiv[r]: r is a loop's induction.  The bodies of pfors inside
 * b only when pfor_bodies (the entry scans its own registers; a pfor body
 * all of its own). */
void asc__emit_scan(const asc__irblock *b, asc__regtab *mark,
                    asc__regtab *isiv, bool pfor_bodies);
/* Declares the scalar registers mark says are defined (emit_c.c). */
void asc__emit_declare_scalars(emitter *e, asc__regtab *mark,
                               const asc__regtab *isiv,
                               const asc__irins *skip_red);
/* The C name prefix of the kernel being emitted. */
const char *asc__emit_kname(emitter *e);

/* ------------------------------------------------------------ emit_ins.c */

/* The C expression of a binary operation on C expressions a and b (both of
 * type dt).  Division checks are emitted by the caller. */
const char *asc__emit_binexpr(emitter *e, int op, int dt, const char *a,
                              const char *b);
/* True when v is certainly positive (emit_ins.c says when). */
bool asc__emit_known_positive(emitter *e, asc__irval v, int depth);
/* Emits the instructions of b. */
void asc__emit_block(emitter *e, const asc__irblock *b);
/* Instantiates the asc_vm_* math functions the kernels of m call. */
void asc__emit_vecmath(emitter *e, const asc__irmodule *m);

/* ------------------------------------------------------------ emit_pfor.c */

/* Emits the body function of every pfor in b (outermost first). */
void asc__emit_collect_bodies(emitter *e, const asc__irblock *b);
/* Emits the call of pfor i's body function. */
void asc__emit_pfor_call(emitter *e, const asc__irins *i);
/* Declares pfor (or sweep) i's environment as <ev><J> and fills it (its
 * captures, lo, step, n); returns J, the number of its body function. */
int asc__emit_pfor_env(emitter *e, const asc__irins *i, const char *ev);

#endif /* ASC_EMIT_INT_H */
