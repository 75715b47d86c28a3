/*
 * IR -> C for parallel loops: each pfor's body becomes a C function over
 * an environment struct of its captures (with the odometer of a collapsed
 * nest), and the pfor itself a call of ctx->rt->parallel_for.  emit_c.c
 * and emit_ins.c emit everything else; emit_int.h is what the three
 * share.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit_ntstore_text.h"
#include "compiler/emit_c.h"
#include "compiler/emit_int.h"

static int32_t uses_in(const asc__irblock *b, int32_t r) {
  int32_t n = 0;
  for (const asc__irins *i = b->first; i; i = i->next) {
    for (int32_t k = 0; k < i->nargs; k++)
      n += i->args[k].kind == ASC_IRV_REG && i->args[k].reg == r;
    for (int32_t k = 0; k < i->nred; k++)
      n += i->red[k].reg == r;
    for (int k = 0; k < asc__ir_nregions(i); k++)
      n += uses_in(&i->body[k], r);
  }
  return n;
}

/* The instruction op(r, ...) of b itself (not nested), if one. */
static const asc__irins *top_use(const asc__irblock *b, int op, int32_t r) {
  for (const asc__irins *i = b->first; i; i = i->next)
    if (i->op == op && i->nargs == 2 && i->args[0].kind == ASC_IRV_REG &&
        i->args[0].reg == r)
      return i;
  return NULL;
}

static bool u64_reg1(const asc__irfunc *f, int32_t r) {
  return r >= 0 && f->regs[r].ty.kind != ASC_IRK_TENSOR &&
         f->regs[r].ty.dtype == ascUInt64 && f->regs[r].ndefs == 1;
}

/* Fills e->odo when pfor p's body starts from the index chain of a
 * collapsed nest (see odometer); defs: registers the body assigns. */
static void match_odometer(emitter *e, const asc__irins *p,
                           const asc__regtab *defs) {
  const asc__irfunc *f = e->f;
  const asc__irblock *b = &p->body[0];
  odometer *o = &e->odo;
  int32_t u;
  memset(o, 0, sizeof *o);
  for (const asc__irins *i = b->first; i && !o->cast; i = i->next)
    if (i->op == ASC_IR_CAST && i->args[0].kind == ASC_IRV_REG &&
        i->args[0].reg == p->dst && u64_reg1(f, i->dst))
      o->cast = i;
  if (o->cast == NULL)
    return;
  u = o->cast->dst;
  while (o->n < MAXODO && uses_in(b, u) == 2) {
    const asc__irins *m = top_use(b, ASC_IR_MOD, u);
    const asc__irins *d = top_use(b, ASC_IR_FLOORDIV, u);
    asc__irval t;
    if (m == NULL || d == NULL || !asc__irv_eq(m->args[1], d->args[1]) ||
        !u64_reg1(f, m->dst) || !u64_reg1(f, d->dst))
      break;
    /* invariant, and never zero: no ZeroDivisionError can move */
    t = m->args[1];
    if ((t.kind == ASC_IRV_REG && (asc__regtab_get(defs, t.reg) & 2) != 0) ||
        !asc__emit_known_positive(e, t, 0))
      break;
    o->mod[o->n] = m;
    o->div[o->n] = d;
    o->n++;
    u = d->dst;
  }
  if (o->n == 0)
    o->cast = NULL;
}

/* What a pfor body uses and defines (asc__emit_scan), and its captures:
 * the registers it uses from outside, in increasing order. */
typedef struct pscan {
  asc__regtab defs, isiv;
  int32_t *cap;
  int32_t ncap;
} pscan;

static void captures(emitter *e, const asc__irins *i, pscan *ps) {
  int32_t n;
  const int32_t *rs;
  asc__regtab_init(e->c, &ps->defs, 0);
  asc__regtab_init(e->c, &ps->isiv, 0);
  asc__emit_scan(&i->body[0], &ps->defs, &ps->isiv, true);
  rs = asc__regtab_keys(&ps->defs, &n);
  ps->cap = asc__arena_alloc(e->c, sizeof *ps->cap * (size_t)(n + 1));
  ps->ncap = 0;
  for (int32_t q = 0; q < n; q++) {
    int32_t r = rs[q];
    intptr_t m = asc__regtab_get(&ps->defs, r);
    bool red = false;
    for (int32_t k = 0; k < i->nred; k++)
      red |= i->red[k].reg == r;
    if (r == i->dst || red)
      continue;
    if ((m & 1) && (!(m & 2) || e->f->regs[r].param))
      ps->cap[ps->ncap++] = r;
  }
  /* bounds are evaluated outside */
}

static void find_worker_id(asc__irins *i, void *ctx) {
  if (i->op == ASC_IR_WORKER_ID)
    *(bool *)ctx = true;
}

/* `#pragma GCC ivdep`, unless the body updates per-worker private copies
 * (worker_id, the privatize pass): two iterations of one chunk may add to
 * the same element, which a vectorised scatter would lose. */
static void ivdep(emitter *e, const asc__irins *p) {
  bool priv = false;
  asc__ir_walk(&p->body[0], find_worker_id, &priv);
  if (!priv)
    out(e, "#pragma GCC ivdep\n");
}

/* ---------------------------------------------------- streaming stores */

/* What each instruction of a streaming body becomes in its vector loop. */
enum { NT_INDEX, NT_LOAD, NT_OP, NT_STORE };
enum { NT_MAXINS = 128 };

/* A pfor body whose stores can stream (nt_plan says when): its
 * instructions, their roles, for loads and the store the C of the offset
 * of their index `iv * stride + offset` (NULL: none), and the run-time
 * strides that must all be 1. */
typedef struct ntplan {
  int dt;                      /* the element type of every value */
  int n;
  const asc__irins *ins[NT_MAXINS];
  uint8_t role[NT_MAXINS];
  const char *off[NT_MAXINS];
  int nstride;
  const char *stride[NT_MAXINS];
} ntplan;

static bool nt_invariant(const asc__regtab *defs, int32_t iv, asc__irval v) {
  return v.kind == ASC_IRV_CONST ||
         (v.kind == ASC_IRV_REG && v.reg != iv && (asc__regtab_get(defs, v.reg) & 2) == 0);
}

/* Position in the plan of the only definition of register v, when that
 * is an instruction of the body; -1 otherwise. */
static int nt_pos(const emitter *e, const ntplan *p, asc__irval v) {
  const asc__irins *d;
  if (v.kind != ASC_IRV_REG || (d = e->def[v.reg]) == NULL)
    return -1;
  for (int j = 0; j < p->n; j++)
    if (p->ins[j] == d)
      return j;
  return -1;
}

static void nt_add_stride(emitter *e, ntplan *p, asc__irval s) {
  const char *c = asc__emit_val(e, s);
  for (int j = 0; j < p->nstride; j++)
    if (strcmp(p->stride[j], c) == 0)
      return;
  p->stride[p->nstride++] = c;
}

/* v is iv, or iv * s with s invariant (a constant s must be 1); the
 * multiplication becomes an index instruction. */
static bool nt_scaled(emitter *e, ntplan *p, const asc__regtab *defs, int32_t iv,
                      asc__irval v) {
  int j;
  const asc__irins *d;
  if (v.kind == ASC_IRV_REG && v.reg == iv)
    return true;
  if ((j = nt_pos(e, p, v)) < 0 || (d = p->ins[j])->op != ASC_IR_MUL)
    return false;
  for (int a = 0; a < 2; a++) {
    asc__irval x = d->args[a], s = d->args[1 - a];
    if (x.kind != ASC_IRV_REG || x.reg != iv || !nt_invariant(defs, iv, s))
      continue;
    if (s.kind == ASC_IRV_CONST && s.c.i != 1)
      return false;
    if (s.kind != ASC_IRV_CONST)
      nt_add_stride(e, p, s);
    p->role[j] = NT_INDEX;
    return true;
  }
  return false;
}

/* The index of load or store q (plan position at) is iv * stride +
 * offset with stride and offset invariant. */
static bool nt_index(emitter *e, ntplan *p, const asc__regtab *defs, int32_t iv,
                     int at) {
  asc__irval v = p->ins[at]->args[1];
  const asc__irins *d;
  int j;
  if (nt_scaled(e, p, defs, iv, v))
    return true;
  if ((j = nt_pos(e, p, v)) < 0 || (d = p->ins[j])->op != ASC_IR_ADD)
    return false;
  for (int a = 0; a < 2; a++)
    if (nt_invariant(defs, iv, d->args[1 - a]) &&
        nt_scaled(e, p, defs, iv, d->args[a])) {
      p->off[at] = asc__emit_val(e, d->args[1 - a]);
      p->role[j] = NT_INDEX;
      return true;
    }
  return false;
}

static bool nt_vec_dtype(int dt) {
  return dt == ascFloat32 || dt == ascFloat64 || dt == ascInt32 ||
         dt == ascUInt32 || dt == ascInt64 || dt == ascUInt64;
}

/* An operand of a vector operation: a value the vector loop computes
 * (a load or an operation before it), or an invariant of type dt. */
static int nt_operand(const emitter *e, const ntplan *p, const asc__regtab *defs,
                      int32_t iv, int at, asc__irval v) {
  int j = nt_pos(e, p, v);
  if (j >= 0)
    return j < at && (p->role[j] == NT_LOAD || p->role[j] == NT_OP) ? 1 : -1;
  if (nt_invariant(defs, iv, v) && asc__irv_dtype(e->f, v) == p->dt)
    return 0;
  return -1;
}

/* Streaming stores for pfor q (lo 0, step 1, no reductions, not a
 * collapsed nest), when its body is straight-line code of one element
 * type among f32, f64, i32, u32, i64, u64 (nt_vec_dtype): loads at
 * `iv * stride + offset`, + - * (and / of floats), negation and copies of
 * those values and of invariants, then, last, its only store, at such an
 * index.  Straight-line: nothing can raise, so vector lanes computed
 * ahead never store what an exception should have kept from memory; the
 * loads of an iteration come before its store, as in the plain loop, and
 * other iterations of a parallel loop touch other elements.  Not in
 * kernels whose tensors may overlap, nor under fastmath (the vector code
 * must round exactly like the plain loop). */
static bool nt_plan(emitter *e, const asc__irins *q, const asc__regtab *defs,
                    ntplan *p) {
  const asc__irfunc *f = e->f;
  const asc__irblock *b = &q->body[0];
  const asc__irins *st = b->last;
  int32_t iv = q->dst, t;
  memset(p, 0, sizeof *p);
  if (e->c->opts.code.ntstore_min_bytes == 0 || restrict_kw(e)[0] == '\0' ||
      f->fastmath != 0 || st == NULL || st->op != ASC_IR_STORE ||
      f->regs[iv].ty.dtype != ascInt64 || st->args[0].kind != ASC_IRV_REG)
    return false;
  t = st->args[0].reg;
  p->dt = f->regs[t].ty.dtype;
  if (f->regs[t].ty.kind != ASC_IRK_TENSOR ||
      (f->regs[t].ty.flags & ASC_IRT_LOCAL) || !nt_vec_dtype(p->dt))
    return false;
  for (const asc__irins *i = b->first; i; i = i->next) {
    if (p->n == NT_MAXINS || asc__ir_nregions(i) != 0)
      return false;
    p->role[p->n] = NT_OP;
    p->ins[p->n++] = i;
  }
  /* the indices first: they claim their multiplications and additions */
  for (int j = 0; j < p->n; j++) {
    const asc__irins *i = p->ins[j];
    if (i->op != ASC_IR_LOAD && i->op != ASC_IR_STORE)
      continue;
    if (i->op == ASC_IR_STORE && i != st)
      return false;
    if (i->args[0].kind != ASC_IRV_REG ||
        f->regs[i->args[0].reg].ty.dtype != p->dt ||
        (i->op == ASC_IR_LOAD && f->regs[i->dst].ty.dtype != p->dt) ||
        !nt_index(e, p, defs, iv, j))
      return false;
    p->role[j] = i == st ? NT_STORE : NT_LOAD;
  }
  for (int j = 0; j < p->n; j++) {
    const asc__irins *i = p->ins[j];
    int nvec = 0;
    if (p->role[j] == NT_INDEX || p->role[j] == NT_LOAD)
      continue;
    if (p->role[j] == NT_STORE)
      return nt_operand(e, p, defs, iv, j, i->args[2]) == 1;
    switch (i->op) {
    case ASC_IR_DIV:
      if (!asc__dt_is_float(p->dt))
        return false;
      /* fall through */
    case ASC_IR_ADD:
    case ASC_IR_SUB:
    case ASC_IR_MUL:
    case ASC_IR_NEG:
    case ASC_IR_MOV:
      break;
    default:
      return false;
    }
    if (i->dst < 0 || f->regs[i->dst].ty.dtype != p->dt ||
        e->def[i->dst] != i)
      return false;
    for (int32_t a = 0; a < i->nargs; a++) {
      int k = nt_operand(e, p, defs, iv, j, i->args[a]);
      if (k < 0)
        return false;
      nvec += k;
    }
    if (nvec == 0)
      return false;   /* a splat: not worth a vector of its own */
  }
  return false;
}

static const char *nt_vname(emitter *e, int32_t r) {
  return asc__arena_printf(e->c, "w%d", (int)r);
}

static const char *nt_vop(emitter *e, const ntplan *p, asc__irval v) {
  int j = nt_pos(e, p, v);
  if (j >= 0)
    return nt_vname(e, v.reg);
  /* an invariant: the scalar, which the operation broadcasts */
  return asc__arena_printf(e->c, "(%s)%s", ctype(p->dt), asc__emit_val(e, v));
}

/* The streaming path of a body nt_plan took, in front of its plain loop:
 * when every stride of the plan is 1 and the whole loop writes at least
 * the options' ntstore_min_bytes, the iterations up to the destination's
 * next 64-byte boundary run as plain code, then 64 bytes at a time as vectors
 * streamed out; the plain loop that follows runs the rest (less than 64
 * bytes). */
static void emit_nt_path(emitter *e, const asc__irins *q, const ntplan *p) {
  const asc__irins *st = p->ins[p->n - 1];
  int32_t t = st->args[0].reg;
  const char *T = ctype(p->dt), *S = sfx(p->dt);
  const char *d = rname(e, t);
  const char *off =
      p->off[p->n - 1] ? asc__arena_printf(e->c, " + %s", p->off[p->n - 1])
                       : "";
  const char *cond = "";
  int32_t iv = q->dst;
  for (int j = 0; j < p->nstride; j++)
    cond = asc__arena_printf(e->c, "%s%s == 1 && ", cond, p->stride[j]);
  LINE(e, "/* streaming stores: contiguous, at least %llu bytes in all */",
       (unsigned long long)e->c->opts.code.ntstore_min_bytes);
  LINE(e, "if (%senv->n >= (int64_t)(%lluull / sizeof(%s))) {", cond,
       (unsigned long long)e->c->opts.code.ntstore_min_bytes, T);
  e->depth++;
  LINE(e, "for (; k < hi && ((uintptr_t)&%s[k%s] & 63) != 0; k++) {", d, off);
  e->depth++;
  LINE(e, "%s %s = (%s)(k);", ctype(ascInt64), rname(e, iv),
       ctype(ascInt64));
  push(e, F_LOOP, -1, q);
  asc__emit_block(e, &q->body[0]);
  e->nframes--;
  e->depth--;
  LINE(e, "}");
  LINE(e, "for (; hi - k >= (int64_t)(64 / sizeof(%s)); "
          "k += (int64_t)(64 / sizeof(%s))) {", T, T);
  e->depth++;
  for (int j = 0; j < p->n; j++) {
    const asc__irins *i = p->ins[j];
    const char *o = p->off[j] ? asc__arena_printf(e->c, " + %s", p->off[j])
                              : "";
    switch (p->role[j]) {
    case NT_INDEX:
      break;
    case NT_LOAD:
      LINE(e, "asc_v_%s %s;", S, nt_vname(e, i->dst));
      LINE(e, "memcpy(&%s, &%s[k%s], 64);", nt_vname(e, i->dst),
           rname(e, i->args[0].reg), o);
      break;
    case NT_STORE:
      LINE(e, "asc_nt_store64(&%s[k%s], &%s);", d, o,
           nt_vname(e, i->args[2].reg));
      break;
    default:
      if (i->op == ASC_IR_NEG || i->op == ASC_IR_MOV)
        LINE(e, "asc_v_%s %s = %s%s;", S, nt_vname(e, i->dst),
             i->op == ASC_IR_NEG ? "-" : "", nt_vop(e, p, i->args[0]));
      else
        LINE(e, "asc_v_%s %s = %s %s %s;", S, nt_vname(e, i->dst),
             nt_vop(e, p, i->args[0]),
             i->op == ASC_IR_ADD   ? "+"
             : i->op == ASC_IR_SUB ? "-"
             : i->op == ASC_IR_MUL ? "*"
                                   : "/",
             nt_vop(e, p, i->args[1]));
      break;
    }
  }
  e->depth--;
  LINE(e, "}");
  LINE(e, "asc_nt_fence();");
  e->depth--;
  LINE(e, "}");
  e->last_line = 0;
}

static void emit_pfor_body(emitter *e, const asc__irins *i, int J) {
  const asc__irfunc *f = e->f;
  const char *K = asc__emit_kname(e);
  pscan ps;
  const asc__regtab *defs = &ps.defs;
  int32_t iv = i->dst;
  int it = f->regs[iv].ty.dtype;
  bool simple = i->args[0].kind == ASC_IRV_CONST && i->args[0].c.i == 0 &&
                i->args[2].kind == ASC_IRV_CONST && i->args[2].c.i == 1;
  /* on the stack: dead once the body is emitted, and a kernel has a
   * body per whole-array statement */
  ntplan plan, *nt = &plan;
  int32_t pidx;
  bool streams;
  captures(e, i, &ps);
  streams = simple && i->nred == 0 && i->wave != ASC_WAVE_SWEEP &&
            (match_odometer(e, i, defs), e->odo.cast == NULL) &&
            nt_plan(e, i, defs, nt);
  e->odo.cast = NULL;

  if (streams && !e->nt_helpers) {
    asc__buf_puts(e->o, asc__emit_ntstore);
    e->nt_helpers = true;
  }

  /* env */
  out(e, "typedef struct %s_env%d {\n", K, J);
  out(e, "  asc_kctx *ctx;\n  int64_t lo, step, n, nb;\n");
  for (int32_t q = 0; q < ps.ncap; q++) {
    int32_t r = ps.cap[q];
    if (f->regs[r].ty.kind == ASC_IRK_TENSOR) {
      out(e, "  %s%s *%s;\n",
          (f->regs[r].ty.flags & ASC_IRT_READONLY) ? "const " : "",
          ctype(f->regs[r].ty.dtype), rname(e, r));
      if (!(f->regs[r].ty.flags & ASC_IRT_LOCAL))
        out(e, "  const asc_ktensor *%s;\n", tname(e, r));
    } else {
      out(e, "  %s %s;\n", ctype(f->regs[r].ty.dtype), rname(e, r));
    }
  }
  for (int32_t k = 0; k < i->nred; k++)
    out(e, "  %s *part_%s;\n", ctype(f->regs[i->red[k].reg].ty.dtype),
        rname(e, i->red[k].reg));
  out(e, "} %s_env%d;\n\n", K, J);

  /* body */
  e->labels = 0;
  e->nframes = 0;
  e->sdepth = 0;
  e->in_body = true;
  e->pfor = i;
  e->last_line = 0;
  if (i->line > 0)
    out(e, "/* body of the parallel loop at line %d */\n", (int)i->line);
  /* the bodies' half of a build in two parts (ASC_PART, jit/cc.c) */
  out(e, "ASC_BODY int64_t %s_body%d(void *envp, int64_t lo, int64_t hi, "
         "int32_t tid, asc_kexc *exc);\n#if ASC_PART != 1\n", K, J);
  e->parts = asc__arena_grow(e->c, (void *)e->parts, e->nparts, &e->capparts,
                             sizeof *e->parts, 16);
  pidx = e->nparts++;
  e->parts[pidx].digit = e->o->len - 2;
  e->parts[pidx].len = e->o->len;
  out(e, "ASC_BODY int64_t %s_body%d(void *envp, int64_t lo, int64_t hi, "
         "int32_t tid, asc_kexc *exc) {\n", K, J);
  e->depth = 1;
  LINE(e, "%s_env%d *env = (%s_env%d *)envp;", K, J, K, J);
  LINE(e, "asc_kctx *ctx = env->ctx;");
  LINE(e, "const int32_t *asc_stop = ASC_STOP_OF(ctx); (void)asc_stop;");
  LINE(e, "int64_t asc_work = ASC_POLL_WORK; (void)asc_work;");
  for (int32_t q = 0; q < ps.ncap; q++) {
    int32_t r = ps.cap[q];
    if (f->regs[r].ty.kind == ASC_IRK_TENSOR) {
      bool ro = (f->regs[r].ty.flags & ASC_IRT_READONLY) != 0;
      LINE(e, "%s%s *%s%s = env->%s; (void)%s;", ro ? "const " : "",
           ctype(f->regs[r].ty.dtype), restrict_kw(e), rname(e, r),
           rname(e, r), rname(e, r));
      if (!(f->regs[r].ty.flags & ASC_IRT_LOCAL))
        LINE(e, "const asc_ktensor *%s = env->%s; (void)%s;", tname(e, r),
             tname(e, r), tname(e, r));
    } else {
      LINE(e, "%s %s = env->%s;", ctype(f->regs[r].ty.dtype), rname(e, r),
           rname(e, r));
    }
  }
  asc__emit_declare_scalars(e, &ps.defs, &ps.isiv, i);
  LINE(e, "int64_t k = lo;");
  /* locals, so stores through the tensors cannot make gcc reload them */
  LINE(e, "const int64_t start = env->lo, step = env->step;");
  LINE(e, "(void)tid; (void)ctx; (void)exc; (void)start; (void)step;");
  e->raise_used = false;
  if (i->nred > 0) {
    LINE(e, "for (; k < hi; k++) {");
    e->depth++;
    LINE(e, "int64_t k0 = asc_part(env->n, env->nb, k);");
    LINE(e, "int64_t k1 = asc_part(env->n, env->nb, k + 1);");
    for (int32_t q = 0; q < i->nred; q++) {
      int32_t r = i->red[q].reg;
      LINE(e, "%s %s = %s;", ctype(f->regs[r].ty.dtype), rname(e, r),
           asc__emit_ident_of(e, i->red[q].op, f->regs[r].ty.dtype));
    }
    /* a partition runs in chunks, with a poll between them */
    LINE(e, "for (int64_t kc = k0; kc < k1;) {");
    e->depth++;
    LINE(e, "const int64_t kce = ASC_CHUNK_UP(int64_t, kc, k1, "
            "ASC_POLL_CHUNK);");
    /* iterations of a parallel loop are independent by definition */
    ivdep(e, i);
    LINE(e, "for (int64_t kk = kc; kk < kce; kk++) {");
    e->depth++;
    LINE(e, "%s %s = (%s)(%s);", ctype(it), rname(e, iv), ctype(it),
         simple ? "kk" : "start + kk * step");
  } else if (simple && (match_odometer(e, i, defs), e->odo.cast != NULL)) {
    const odometer *o = &e->odo;
    const char *step = "";
    LINE(e, "if (k < hi) { /* indices of the collapsed loops, counted up */");
    e->depth++;
    LINE(e, "%s = (uint64_t)k;", rname(e, o->cast->dst));
    for (int j = 0; j < o->n; j++) {
      const char *u = asc__emit_val(e, o->mod[j]->args[0]);
      const char *t = asc__emit_val(e, o->mod[j]->args[1]);
      LINE(e, "%s = %s %% %s;", rname(e, o->mod[j]->dst), u, t);
      LINE(e, "%s = %s / %s;", rname(e, o->div[j]->dst), u, t);
    }
    e->depth--;
    LINE(e, "}");
    for (int j = 0; j < o->n; j++) {
      const char *q = rname(e, o->mod[j]->dst);
      const char *t = asc__emit_val(e, o->mod[j]->args[1]);
      step = j == 0 ? asc__arena_printf(e->c, "++%s == %s", q, t)
                    : asc__arena_printf(e->c, "%s &&\n%*s(%s = 0, ++%s == %s)",
                                        step, e->depth * 2 + 6, "",
                                        rname(e, o->mod[j - 1]->dst), q, t);
    }
    step = asc__arena_printf(e->c, "%s &&\n%*s(%s = 0, ++%s)", step,
                             e->depth * 2 + 6, "",
                             rname(e, o->mod[o->n - 1]->dst),
                             rname(e, o->div[o->n - 1]->dst));
    /* iterations of a parallel loop are independent by definition */
    ivdep(e, i);
    LINE(e, "for (; k < hi; k++, (void)(%s)) {", step);
    e->depth++;
    LINE(e, "%s %s = (%s)(k); (void)%s;", ctype(it), rname(e, iv), ctype(it),
         rname(e, iv));
  } else {
    if (streams)
      emit_nt_path(e, i, nt);
    /* iterations of a parallel loop are independent by definition */
    ivdep(e, i);
    LINE(e, "for (; k < hi; k++) {");
    e->depth++;
    LINE(e, "%s %s = (%s)(%s);", ctype(it), rname(e, iv), ctype(it),
         simple ? "k" : "start + k * step");
  }
  push(e, F_LOOP, -1, i);
  asc__emit_block(e, &i->body[0]);
  e->nframes--;
  if (i->nred > 0) {
    e->depth--;
    LINE(e, "}");
    LINE(e, "if (kce != k1 && ASC_POLL(asc_stop)) {");
    e->depth++;
    LINE(e, "asc_stopped(exc, %d);", (int)i->line);
    LINE(e, "goto %s;", asc__emit_exc_target(e));
    e->depth--;
    LINE(e, "}");
    LINE(e, "kc = kce;");
    e->depth--;
    LINE(e, "}");
    for (int32_t q = 0; q < i->nred; q++)
      LINE(e, "env->part_%s[k] = %s;", rname(e, i->red[q].reg),
           rname(e, i->red[q].reg));
  }
  e->depth--;
  LINE(e, "}");
  asc__emit_release_arrays(e, &ps.defs);
  LINE(e, "return 0;");
  if (e->raise_used) {
    out(e, "L_raise:\n");
    asc__emit_release_arrays(e, &ps.defs);
    LINE(e, "return k + 1;");
  }
  out(e, "}\n#endif\n\n");
  e->parts[pidx].len = e->o->len - e->parts[pidx].len;
  e->in_body = false;
  e->odo.cast = NULL;
  e->depth = 0;
}

void asc__emit_collect_bodies(emitter *e, const asc__irblock *b) {
  for (const asc__irins *i = b->first; i; i = i->next) {
    /* a sweep of a wavefront (passes/wavefront.c) is called a row at a
     * time, a `for` sweep too */
    if (i->op == ASC_IR_PFOR ||
        (i->op == ASC_IR_FOR && i->wave == ASC_WAVE_SWEEP)) {
      e->pfors = asc__arena_grow(e->c, (void *)e->pfors, e->npfor,
                                 &e->capfors, sizeof *e->pfors, 8);
      e->pfors[e->npfor] = i;
      asc__regtab_set(&e->pfor_num, i->dst, e->npfor + 1);
      emit_pfor_body(e, i, e->npfor++);
      continue;
    }
    for (int k = 0; k < asc__ir_nregions(i); k++)
      asc__emit_collect_bodies(e, &i->body[k]);
  }
}

int asc__emit_pfor_env(emitter *e, const asc__irins *i, const char *ev) {
  const asc__irfunc *f = e->f;
  const char *K = asc__emit_kname(e);
  int J = (int)asc__regtab_get(&e->pfor_num, i->dst) - 1;
  pscan ps;
  if (J < 0 || J >= e->npfor || e->pfors[J] != i)
    for (J = 0; J < e->npfor && e->pfors[J] != i; J++)
      ;
  ASC_CHECK(e->c, J < e->npfor);
  captures(e, i, &ps);
  LINE(e, "%s_env%d %s%d;", K, J, ev, J);
  LINE(e, "%s%d.ctx = ctx;", ev, J);
  for (int32_t q = 0; q < ps.ncap; q++) {
    int32_t r = ps.cap[q];
    LINE(e, "%s%d.%s = %s;", ev, J, rname(e, r), rname(e, r));
    if (f->regs[r].ty.kind == ASC_IRK_TENSOR &&
        !(f->regs[r].ty.flags & ASC_IRT_LOCAL))
      LINE(e, "%s%d.%s = %s;", ev, J, tname(e, r), tname(e, r));
  }
  LINE(e, "%s%d.lo = (int64_t)%s;", ev, J, asc__emit_val(e, i->args[0]));
  LINE(e, "%s%d.step = (int64_t)%s;", ev, J, asc__emit_val(e, i->args[2]));
  LINE(e, "%s%d.n = asc_trip(%s%d.lo, (int64_t)%s, %s%d.step);", ev, J, ev,
       J, asc__emit_val(e, i->args[1]), ev, J);
  return J;
}

/* The work, in simple operations, below which a parallel loop runs on
 * the calling thread without waking the team (docs/parallelize.md,
 * "Small loops"; bench/par_threshold.py measures the crossover): waking
 * the team and joining it costs about what this much work does on one
 * core.  A loop's iterations are handed out at least this much work at a
 * time, so a loop of under twice it runs on one thread. */
#define PAR_MIN_WORK 131072
#define COST_CALL 16 /* exp, log, sin: a vector-math call */

/* The operations one run of block b costs, its loops left out (they are
 * counted by work_of). */
static int64_t block_cost(const asc__irblock *b) {
  int64_t c = 0;
  for (const asc__irins *i = b->first; i; i = i->next) {
    if (i->op == ASC_IR_FOR)
      continue;
    c += i->op == ASC_IR_CALL ? COST_CALL : 1;
    for (int k = 0; k < asc__ir_nregions(i); k++)
      c += block_cost(&i->body[k]);
  }
  return c;
}

static bool outside(const pscan *ps, asc__irval v) {
  return v.kind == ASC_IRV_CONST ||
         (v.kind == ASC_IRV_REG && (asc__regtab_get(&ps->defs, v.reg) & 2) == 0);
}

/* The work of one run of block b, as C text the call site of the pfor
 * evaluates: its straight-line operations, plus each loop's trip count
 * times its body's cost.  NULL when that is not known before the pfor
 * starts: a loop whose bounds are computed inside, or loops nested in a
 * loop. */
static const char *work_of(emitter *e, const asc__irblock *b,
                           const pscan *ps) {
  const char *w = asc__arena_printf(e->c, "%lld",
                                    (long long)block_cost(b) + 1);
  for (const asc__irins *i = b->first; i; i = i->next) {
    if (i->op == ASC_IR_FOR) {
      if (!outside(ps, i->args[0]) || !outside(ps, i->args[1]) ||
          !outside(ps, i->args[2]) || asc__ir_has_loop(&i->body[0]))
        return NULL;
      w = asc__arena_printf(
          e->c, "%s + asc_trip((int64_t)%s, (int64_t)%s, (int64_t)%s) * %lld",
          w, asc__emit_val(e, i->args[0]), asc__emit_val(e, i->args[1]),
          asc__emit_val(e, i->args[2]),
          (long long)block_cost(&i->body[0]) + 1);
      continue;
    }
    for (int k = 0; k < asc__ir_nregions(i); k++)
      if (asc__ir_has_loop(&i->body[k])) {
        const char *in = work_of(e, &i->body[k], ps);
        if (in == NULL)
          return NULL;
        w = asc__arena_printf(e->c, "%s + %s", w, in);
      }
  }
  return w;
}

/* Are pfor i's reductions all of integers (or bools): the same result
 * however its iterations are split? */
static bool exact_reductions(const emitter *e, const asc__irins *i) {
  for (int32_t q = 0; q < i->nred; q++) {
    int dt = e->f->regs[i->red[q].reg].ty.dtype;
    if (asc__dt_is_float(dt) || asc__dt_is_complex(dt))
      return false;
  }
  return true;
}

void asc__emit_pfor_call(emitter *e, const asc__irins *i) {
  const asc__irfunc *f = e->f;
  const char *K = asc__emit_kname(e);
  int J;
  pscan ps;
  const char *work;
  LINE(e, "{ /* parallel loop */");
  e->depth++;
  J = asc__emit_pfor_env(e, i, "env");
  captures(e, i, &ps);
  /* a pfor with float reductions keeps one part per team thread: the
   * parts fix the order its sums are combined in (docs/parallelize.md);
   * integer ones give the serial result whatever the parts, so their
   * parts are grains of work too */
  work = i->nred == 0 || exact_reductions(e, i)
             ? work_of(e, &i->body[0], &ps)
             : NULL;
  if (work != NULL) {
    /* iterations worth PAR_MIN_WORK: fewer run on this thread */
    LINE(e, "const int64_t grain%d = %lld / (%s) + 1;", J,
         (long long)PAR_MIN_WORK, work);
  }
  if (i->nred > 0) {
    LINE(e, "env%d.nb = ctx->rt->team_size(ctx);", J);
    LINE(e, "if (env%d.nb > env%d.n) env%d.nb = env%d.n;", J, J, J, J);
    if (work != NULL)
      LINE(e, "if (env%d.nb > env%d.n / grain%d) env%d.nb = env%d.n / "
              "grain%d;",
           J, J, J, J, J, J);
    LINE(e, "if (env%d.nb < 1) env%d.nb = 1;", J, J);
    for (int32_t q = 0; q < i->nred; q++) {
      int32_t r = i->red[q].reg;
      LINE(e, "%s part%d_%d[env%d.nb];", ctype(f->regs[r].ty.dtype), J,
           (int)q, J);
      LINE(e, "env%d.part_%s = part%d_%d;", J, rname(e, r), J, (int)q);
    }
    LINE(e, "if (env%d.n > 0) {", J);
    e->depth++;
    LINE(e, "if (ctx->rt->parallel_for(ctx, env%d.nb, 1, %s_body%d, &env%d, "
            "exc) != 0)",
         J, K, J, J);
    LINE(e, "  goto %s;", asc__emit_exc_target(e));
    LINE(e, "/* combine the partials in a fixed order: deterministic */");
    LINE(e, "for (int64_t b = 0; b < env%d.nb; b++) {", J);
    e->depth++;
    for (int32_t q = 0; q < i->nred; q++) {
      int32_t r = i->red[q].reg;
      LINE(e, "%s = %s;", rname(e, r),
           asc__emit_binexpr(e, i->red[q].op, f->regs[r].ty.dtype,
                             rname(e, r),
                             asc__arena_printf(e->c, "part%d_%d[b]", J,
                                               (int)q)));
    }
    e->depth--;
    LINE(e, "}");
    e->depth--;
    LINE(e, "}");
  } else {
    LINE(e, "env%d.nb = 0;", J);
    LINE(e, "if (env%d.n > 0 && ctx->rt->parallel_for(ctx, env%d.n, %s, "
            "%s_body%d, &env%d, exc) != 0)",
         J, J,
         work != NULL ? asc__arena_printf(e->c, "grain%d", J)
         : asc__ir_has_loop(&i->body[0]) ? "1" : "64",
         K, J, J);
    LINE(e, "  goto %s;", asc__emit_exc_target(e));
  }
  e->depth--;
  LINE(e, "}");
}
