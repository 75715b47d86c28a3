/*
 * Lowering of statements (lower.c: bindings, expressions, the entry):
 * assignments, local arrays, raise, range loops (a `for`, or a `pfor`
 * for asc.prange and asc.parallel_for), try/except and return.
 */
#include <string.h>

#include "compiler/lower.h"
#include "compiler/lower_int.h"
#include "compiler/prange.h"
#include "asc/kernel_abi.h"
#include "compiler/types/types.h"

/* Bytes of one local_array: it is a stack array of the running thread. */
#define LOCAL_ARRAY_MAX (256u * 1024u)
/* Bytes of all the local arrays of a kernel together (helpers inlined,
 * parallel-loop bodies included: a thread may run a body chunk while the
 * kernel's own frame is below it).  A block may use 7 MiB of stack
 * (docs/abi.md); 3 MiB of that is left for frames and libm. */
#define LOCAL_TOTAL_MAX (4u * 1024u * 1024u)

/* Bytes of any local, shared or lock array: 1 TiB, far above what a
 * block can be given, and small enough that sums of them cannot overflow. */
#define SCRATCH_ARRAY_MAX (UINT64_C(1) << 40)

static void assign_to(lstate *ls, const asc__ast_expr *target,
                      asc__irval v, const asc__ast_expr *value);

/* n unlocked locks of a lock array a, by the thread running this code. */
static void unlock_all(lstate *ls, int32_t a, int64_t n) {
  asc__irblock *save = ls->cur;
  int32_t k = newreg(ls, ascInt64, "lock.k");
  asc__irins *f = emit(ls, ASC_IR_FOR, k, 3), *st;
  f->args[0] = asc__irv_int(ascInt64, 0);
  f->args[1] = asc__irv_int(ascInt64, n);
  f->args[2] = asc__irv_int(ascInt64, 1);
  ls->cur = &f->body[0];
  st = emit(ls, ASC_IR_STORE, -1, 3);
  st->args[0] = asc__irv_reg(a);
  st->args[1] = asc__irv_reg(k);
  st->args[2] = asc__irv_int(ascInt32, 0);
  ls->cur = save;
}

/* local_array / shared_array / lock_array: a buffer register bound to the
 * name.  A lock array is a block's shared int32 buffer whose words are
 * set to 0 (unlocked) where it is created. */
static bool lower_array_def(lstate *ls, const asc__ast_expr *target,
                            const asc__ast_expr *value) {
  const asc__builtin *b;
  asc__irins *i;
  asc__type *t;
  const asc__ast_expr *shape;
  asc__irtype it;
  int32_t r;
  if (value->kind != ASC_EXPR_CALL || (b = value->u.call.builtin) == NULL ||
      (b->id != ASC_BI_LOCAL_ARRAY && b->id != ASC_BI_SHARED_ARRAY &&
       b->id != ASC_BI_LOCK_ARRAY))
    return false;
  if (target->kind != ASC_EXPR_NAME || !target->u.name.sym)
    unsupported(ls, target->loc, "this array target");
  if (b->id == ASC_BI_LOCK_ARRAY && ls->pfors > 0)
    asc__diag_fatal(ls->c, value->loc,
                    "asc.lock_array() must be called outside parallel "
                    "loops: its locks are shared by the block's threads");
  t = ty(value);
  memset(&it, 0, sizeof it);
  it.kind = ASC_IRK_TENSOR;
  it.dtype = (uint8_t)t->dtype;
  it.ndim = (uint8_t)t->ndim;
  it.flags = ASC_IRT_CONTIG;
  r = asc__ir_reg(ls->c, ls->f, it, target->u.name.sym->name);
  i = emit(ls, b->id == ASC_BI_LOCAL_ARRAY ? ASC_IR_LOCAL_ARRAY
                                           : ASC_IR_SHARED_ARRAY,
           r, 0);
  shape = value->u.call.rargs[0];
  {
    const asc__ast_expr *const *el = (const asc__ast_expr *const *)&shape;
    int n = 1;
    if (shape->kind == ASC_EXPR_TUPLE) {
      el = (const asc__ast_expr *const *)shape->u.tuple.elts;
      n = shape->u.tuple.n;
    }
    if (n > ASC_IR_MAXDIMS || n != t->ndim)
      asc__diag_fatal(ls->c, shape->loc, "bad array shape");
    for (int k = 0; k < n; k++) {
      asc__irval d = asc__lower_expr(ls, el[k]);
      if (d.kind != ASC_IRV_CONST || asc__dt_is_float(d.dtype) || d.c.i <= 0)
        asc__diag_fatal(ls->c, el[k]->loc,
                        "array extents must be positive constants");
      i->imm[i->nimm++] = d.c.i;
    }
  }
  {
    /* local arrays live on the stack of a worker thread; every scratch
     * array's size is checked here, with overflow checks, so that emit
     * and the launch can multiply extents freely */
    uint64_t bytes = ascDataTypeSize((ascDataType)t->dtype);
    for (int k = 0; k < i->nimm; k++)
      if (__builtin_mul_overflow(bytes, (uint64_t)i->imm[k], &bytes) ||
          bytes > SCRATCH_ARRAY_MAX)
        asc__diag_fatal(ls->c, value->loc,
                        "array of more than %llu bytes is too large",
                        (unsigned long long)SCRATCH_ARRAY_MAX);
    if (b->id == ASC_BI_LOCAL_ARRAY && bytes > LOCAL_ARRAY_MAX)
      asc__diag_fatal(ls->c, value->loc,
                      "local_array of %llu bytes is too large for the "
                      "stack (at most %u)",
                      (unsigned long long)bytes, (unsigned)LOCAL_ARRAY_MAX);
    if (b->id == ASC_BI_LOCAL_ARRAY) {
      ls->local_bytes += bytes;
      if (ls->local_bytes > LOCAL_TOTAL_MAX)
        asc__diag_fatal(ls->c, value->loc,
                        "the kernel's local arrays take %llu bytes with this "
                        "one, more than the %u bytes they may use of a "
                        "thread's stack (docs/abi.md); use fewer or smaller "
                        "local arrays, or pass a tensor",
                        (unsigned long long)ls->local_bytes,
                        (unsigned)LOCAL_TOTAL_MAX);
    }
  }
  if (b->id == ASC_BI_LOCK_ARRAY)
    unlock_all(ls, r, i->imm[0]);
  asc__lower_bind(ls, target->u.name.sym, r);
  return true;
}

static void assign_to(lstate *ls, const asc__ast_expr *target,
                      asc__irval v, const asc__ast_expr *value) {
  int32_t mr = asc__lower_agg_member(ls, target);
  if (mr >= 0) {
    mov(ls, mr, conv(ls, v, ls->f->regs[mr].ty.dtype));
    return;
  }
  switch (target->kind) {
  case ASC_EXPR_NAME: {
    const asc__sym *s = target->u.name.sym;
    int32_t r;
    asc__type *st;
    if (s == NULL)
      unsupported(ls, target->loc, "this assignment target");
    st = s->type ? asc__ty_find(s->type) : NULL;
    if (st && st->kind == ASC_TY_TENSOR) {
      /* t2 = t: an alias of the same tensor; row = a[i]: a view */
      if (value == NULL)
        unsupported(ls, target->loc, "this tensor assignment");
      if (asc__lower_alias_copy(ls, target, value))
        return;
      if (asc__lower_array_var_assign(ls, target, value))
        return;
      if (asc__lower_new_array(ls, target, value))
        return;
      if (asc__lower_is_view(ls, value)) {
        asc__lview view;
        asc__lower_view(ls, value, &view);
        asc__lower_bind_view(ls, s, &view);
        return;
      }
      asc__lower_bind(ls, s, asc__lower_tensor_reg(ls, value));
      return;
    }
    r = asc__lower_var_reg(ls, s, target->loc);
    mov(ls, r, conv(ls, v, ls->f->regs[r].ty.dtype));
    return;
  }
  case ASC_EXPR_SUBSCRIPT: {
    int32_t t;
    asc__irval off = asc__lower_element_offset(ls, target, &t);
    asc__irins *i;
    asc__irval cv = conv(ls, v, ls->f->regs[t].ty.dtype);
    i = emit(ls, ASC_IR_STORE, -1, 3);
    i->args[0] = asc__irv_reg(t);
    i->args[1] = off;
    i->args[2] = cv;
    return;
  }
  default:
    unsupported(ls, target->loc, "this assignment target");
  }
}

/* a, b = f(...) of a tuple of arrays: each name takes its new array. */
static void unpack_arrays(lstate *ls, const asc__ast_expr *tg,
                          const asc__ast_expr *value) {
  int n = tg->u.tuple.n;
  int32_t *regs = asc__arena_alloc(ls->c, sizeof *regs * (size_t)n);
  asc__lower_array_tuple(ls, value, regs);
  for (int q = 0; q < n; q++) {
    const asc__ast_expr *t = tg->u.tuple.elts[q];
    if (t->kind != ASC_EXPR_NAME || t->u.name.sym == NULL)
      unsupported(ls, t->loc, "unpacking an array into this target (a "
                  "name takes it)");
    asc__lower_name_array(ls, t, regs[q]);
  }
}

/* a, b = x of an array x: numpy iterates x along its first axis, so the
 * names take its rows (views of it), or its elements when it is 1-D;
 * another number of rows is Python's ValueError. */
static void unpack_rows(lstate *ls, const asc__ast_expr *tg,
                        const asc__ast_expr *value) {
  int n = tg->u.tuple.n;
  asc__lview v;
  asc__lower_arg_view(ls, value, &v);
  asc__lower_raise_if(ls, op2(ls, ASC_IR_GT, ascInt64, v.shape[0], i64(n)),
                      ASC_KEXC_VALUE_ERROR,
                      asc__arena_printf(ls->c, "too many values to unpack "
                                        "(expected %d)", n),
                      i64(0), i64(0));
  asc__lower_raise_if(ls, op2(ls, ASC_IR_LT, ascInt64, v.shape[0], i64(n)),
                      ASC_KEXC_VALUE_ERROR,
                      asc__arena_printf(ls->c, "not enough values to unpack "
                                        "(expected %d, got {})", n),
                      v.shape[0], i64(0));
  for (int q = 0; q < n; q++) {
    const asc__ast_expr *x = tg->u.tuple.elts[q];
    asc__irval at = i64(q);
    asc__lview row = v;
    if (v.nd == 1) {
      assign_to(ls, x, asc__lower_load_at(ls, &v, &at, 1), NULL);
      continue;
    }
    if (x->kind != ASC_EXPR_NAME || x->u.name.sym == NULL)
      unsupported(ls, x->loc, "unpacking an array into this target (a "
                  "name takes it)");
    row.off = add(ls, v.off, mul(ls, at, v.stride[0]));
    row.nd = v.nd - 1;
    for (int j = 0; j < row.nd; j++) {
      row.shape[j] = v.shape[j + 1];
      row.stride[j] = v.stride[j + 1];
      row.src[j] = v.src[j + 1];
    }
    asc__lower_bind_view(ls, x->u.name.sym, &row);
  }
}

/* a[...] = b[...] = value with value an array expression that makes a
 * new array (x @ y, x + y): Python evaluates value once; so does the
 * kernel, into a temporary each target copies.  (A name target keeps
 * the per-target lowering, which binds it to an array of its own.) */
static bool shared_value(lstate *ls, const asc__ast_stmt *s) {
  if (s->u.assign.ntargets < 2 ||
      !asc__lower_is_new_array(ls, s->u.assign.value))
    return false;
  for (int k = 0; k < s->u.assign.ntargets; k++)
    if (s->u.assign.targets[k]->kind != ASC_EXPR_SUBSCRIPT)
      return false;
  return true;
}

static void lower_assign(lstate *ls, const asc__ast_stmt *s) {
  const asc__ast_expr *value = s->u.assign.value;
  int32_t tmp = -1;
  if (shared_value(ls, s)) {
    tmp = asc__lower_make_array(ls, value);
    value = asc__lower_tmp_name(ls, value, tmp);
  }
  for (int k = 0; k < s->u.assign.ntargets; k++) {
    const asc__ast_expr *tg = s->u.assign.targets[k];
    asc__type *vt = ty(value);
    if (vt && vt->kind == ASC_TY_DTYPE)
      continue; /* dt = np.float32: its uses were typed with the dtype */
    if (asc__lower_array_tuple_assign(ls, tg, value))
      continue;
    if (tg->kind == ASC_EXPR_TUPLE && asc__lower_is_array_tuple(value)) {
      unpack_arrays(ls, tg, value);
      continue;
    }
    if (tg->kind == ASC_EXPR_TUPLE && vt && vt->kind == ASC_TY_TENSOR) {
      unpack_rows(ls, tg, value);
      continue;
    }
    if (lower_array_def(ls, tg, value))
      continue;
    if (asc__lower_blas_store(ls, tg, value, -1))
      continue;
    if (asc__lower_array_assign(ls, tg, value))
      continue;
    if (tg->kind == ASC_EXPR_TUPLE) {
      int n = tg->u.tuple.n;
      asc__irval *vals = asc__arena_alloc(ls->c, sizeof *vals * (size_t)n + 1);
      if (!is_agg(vt) || agg_n(vt) != n)
        unsupported(ls, value->loc, "unpacking this value");
      if (value->kind == ASC_EXPR_CALL && value->u.call.builtin &&
          asc__builtin_is_numpy_func(value->u.call.builtin->id)) {
        /* w, v = np.linalg.eigh(a): arrays bound to new arrays */
        asc__lower_numpy_tuple(ls, value, vals);
        for (int q = 0; q < n; q++) {
          asc__type *et = asc__ty_find(agg_elem(vt, q));
          if (et->kind == ASC_TY_TENSOR)
            asc__lower_bind_new_array(ls, tg->u.tuple.elts[q], et,
                                      vals[q].reg);
          else
            assign_to(ls, tg->u.tuple.elts[q], conv(ls, vals[q], et->dtype),
                      NULL);
        }
        continue;
      }
      asc__lower_agg(ls, value, vt, vals);
      for (int q = 0; q < n; q++)
        assign_to(ls, tg->u.tuple.elts[q], vals[q], NULL);
      continue;
    }
    if (is_agg(vt) && tg->kind == ASC_EXPR_NAME && tg->u.name.sym) {
      /* the whole tuple / struct: one register per element */
      symreg *m = asc__lower_agg_sym(ls, tg->u.name.sym, tg->loc);
      asc__type *want = asc__ty_find(tg->u.name.sym->type);
      asc__irval *vals =
          asc__arena_alloc(ls->c, sizeof *vals * ((size_t)m->nelems + 1));
      int32_t *dst = m->elems;
      asc__lower_agg(ls, value, want, vals);
      for (int q = 0; q < agg_n(want); q++)
        mov(ls, dst[q], vals[q]);
      continue;
    }
    if (vt && vt->kind == ASC_TY_TENSOR) {
      assign_to(ls, tg, asc__irv_int(ascBool, 0), value);
      continue;
    }
    assign_to(ls, tg, asc__lower_expr(ls, value), value);
  }
  if (tmp >= 0) {
    asc__irins *fr = emit(ls, ASC_IR_FREE_ARRAY, -1, 1);
    fr->args[0] = asc__irv_reg(tmp);
  }
}

static void lower_aug(lstate *ls, const asc__ast_stmt *s) {
  const asc__ast_expr *tg = s->u.aug.target;
  asc__irval rhs;
  int op = asc__lower_binop_ir(s->u.aug.op);
  if (asc__lower_blas_store(ls, tg, s->u.aug.value, op) ||
      asc__lower_array_aug(ls, tg, s->u.aug.value, op))
    return;
  rhs = asc__lower_expr(ls, s->u.aug.value);
  if (tg->kind == ASC_EXPR_NAME || asc__lower_agg_member(ls, tg) >= 0) {
    int32_t r = tg->kind == ASC_EXPR_NAME
                    ? asc__lower_var_reg(ls, tg->u.name.sym, tg->loc)
                    : asc__lower_agg_member(ls, tg);
    int dt = ls->f->regs[r].ty.dtype;
    asc__type *pt = asc__ty_promote(ls->c, asc__ty_scalar(ls->c, dt),
                                    ty(s->u.aug.value));
    int odt = pt ? (int)asc__ty_concrete(ls->c, pt)->dtype : dt;
    if (s->u.aug.op == ASC_BIN_DIV && !asc__dt_is_float(odt) &&
        !asc__dt_is_complex(odt))
      odt = ascFloat64;
    mov(ls, r, conv(ls, op2(ls, op, odt, conv(ls, asc__irv_reg(r), odt),
                            conv(ls, rhs, odt)),
                    dt));
    return;
  }
  if (tg->kind == ASC_EXPR_SUBSCRIPT) {
    int32_t t, d;
    asc__irval off = asc__lower_element_offset(ls, tg, &t);
    int dt = ls->f->regs[t].ty.dtype;
    asc__irins *i;
    asc__type *pt = asc__ty_promote(ls->c, asc__ty_scalar(ls->c, dt),
                                    ty(s->u.aug.value));
    int odt = pt ? (int)asc__ty_concrete(ls->c, pt)->dtype : dt;
    if (s->u.aug.op == ASC_BIN_DIV && !asc__dt_is_float(odt) &&
        !asc__dt_is_complex(odt))
      odt = ascFloat64; /* as `a[i] = a[i] / v`: true division, stored back */
    d = newreg(ls, dt, NULL);
    i = emit(ls, ASC_IR_LOAD, d, 2);
    i->args[0] = asc__irv_reg(t);
    i->args[1] = off;
    {
      asc__irval nv = conv(ls, op2(ls, op, odt, conv(ls, asc__irv_reg(d), odt),
                                   conv(ls, rhs, odt)),
                           dt);
      i = emit(ls, ASC_IR_STORE, -1, 3);
      i->args[0] = asc__irv_reg(t);
      i->args[1] = off;
      i->args[2] = nv;
    }
    return;
  }
  unsupported(ls, tg->loc, "this augmented assignment");
}

static const char *message_of(lstate *ls, const asc__ast_expr *msg) {
  if (msg == NULL)
    return "";
  if (msg->kind != ASC_EXPR_STR)
    unsupported(ls, msg->loc, "a message that is not a string literal");
  if (memchr(msg->u.str.s, '\0', msg->u.str.len) != NULL) {
    /* Messages travel as C strings: an embedded NUL is written as Python's
     * repr writes it, "\x00", instead of ending the text there. */
    size_t n = 0;
    char *t = asc__arena_alloc(ls->c, msg->u.str.len * 4 + 1);
    for (size_t k = 0; k < msg->u.str.len; k++) {
      if (msg->u.str.s[k] == '\0') {
        memcpy(t + n, "\\x00", 4);
        n += 4;
      } else {
        t[n++] = msg->u.str.s[k];
      }
    }
    t[n] = '\0';
    return t;
  }
  return msg->u.str.s;
}

static void lower_raise(lstate *ls, const asc__ast_stmt *s) {
  const asc__ast_expr *x = s->u.raise.exc;
  const asc__builtin *b = NULL;
  const char *msg = "";
  if (x == NULL) {
    if (ls->excepts == 0)
      unsupported(ls, s->loc, "a bare 'raise' outside an except clause");
    emit(ls, ASC_IR_RERAISE, -1, 0);
    return;
  }
  if (x->kind == ASC_EXPR_CALL) {
    b = x->u.call.builtin;
    if (x->u.call.nrargs > 0)
      msg = message_of(ls, x->u.call.rargs[0]);
  } else if (x->kind == ASC_EXPR_NAME && x->u.name.sym &&
             x->u.name.sym->kind == ASC_SYM_BUILTIN) {
    b = x->u.name.sym->u.builtin;
  }
  if (b == NULL || b->kind != ASC_BK_EXC)
    unsupported(ls, x->loc, "raising this");
  asc__lower_raise_here(ls, asc__lower_exc_kind(b), msg);
}

/* The range(...) bounds of a for statement, as int64 values. */
static void range_bounds(lstate *ls, const asc__ast_stmt *s, asc__irval *lo,
                         asc__irval *hi, asc__irval *st) {
  *lo = s->u.for_.start
            ? conv(ls, asc__lower_expr(ls, s->u.for_.start), ascInt64)
            : asc__irv_int(ascInt64, 0);
  *hi = conv(ls, asc__lower_expr(ls, s->u.for_.stop), ascInt64);
  *st = s->u.for_.step
            ? conv(ls, asc__lower_expr(ls, s->u.for_.step), ascInt64)
            : asc__irv_int(ascInt64, 1);
  if (st->kind == ASC_IRV_CONST && st->c.i == 0)
    asc__diag_fatal(ls->c, s->u.for_.step->loc,
                    "range() step must not be zero");
  if (st->kind != ASC_IRV_CONST) {
    asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
    asc__irblock *save = ls->cur;
    i->args[0] = op2(ls, ASC_IR_EQ, ascInt64, *st, asc__irv_int(ascInt64, 0));
    asc__ir_remove(ls->cur, i);
    asc__ir_append(ls->cur, i);
    ls->cur = &i->body[0];
    asc__lower_raise_here(ls, ASC_KEXC_VALUE_ERROR,
                          "range() arg 3 must not be zero");
    ls->cur = save;
  }
}

/* A parallel loop: reductions are the variables of the enclosing code that
 * the body only updates with one `v op= ...`; other variables assigned in
 * the body must not be used outside it. */
static void setup_reductions(lstate *ls, asc__irins *loop,
                             const asc__ast_block *body,
                             const asc__ast_block *kernel_body,
                             const asc__ast_stmt *self) {
  asc__prange_alist al;
  memset(&al, 0, sizeof al);
  asc__prange_collect_assigned(ls->c, body, &al);
  loop->red = asc__arena_alloc(ls->c, sizeof *loop->red * ((size_t)al.n + 1));
  for (int k = 0; k < al.n; k++) {
    const asc__sym *sym = al.v[k].sym;
    /* mentioned anywhere in the kernel outside this loop? */
    bool outside = asc__prange_block_mentions(kernel_body, sym, self);
    if (asc__lower_lookup(ls, sym) >= 0)
      outside = true;
    if (!outside)
      continue;
    if (al.v[k].redop < 0)
      asc__diag_fatal(ls->c, al.v[k].loc,
                      "'%s' is assigned in a parallel loop and used outside "
                      "it; only reductions ('%s += ...') may be",
                      sym->name, sym->name);
    loop->red[loop->nred].reg = asc__lower_var_reg(ls, sym, al.v[k].loc);
    loop->red[loop->nred].op = (uint8_t)al.v[k].redop;
    loop->nred++;
  }
}

static void lower_stmt(lstate *ls, const asc__ast_stmt *s);

static const asc__ast_block *kernel_body_of(lstate *ls) {
  return &ls->t->kernel->body;
}

/* Gives the variables a parallel body assigns (and the loop target) fresh
 * registers for the body, except its reductions: every parallel loop has
 * its own private copies.  Returns the map size to restore afterwards. */
static int privatize(lstate *ls, const asc__ast_block *body,
                     const asc__ast_expr *target, const asc__irins *loop) {
  int saved = ls->nmap;
  asc__prange_alist al;
  memset(&al, 0, sizeof al);
  if (target)
    asc__prange_note_assign(ls->c, &al, target, -1);
  asc__prange_collect_assigned(ls->c, body, &al);
  for (int k = 0; k < al.n; k++) {
    const asc__sym *sym = al.v[k].sym;
    asc__type *t = sym->type ? asc__ty_find(sym->type) : NULL;
    int32_t cur = asc__lower_lookup(ls, sym);
    bool red = false;
    for (int32_t q = 0; loop && q < loop->nred; q++)
      red |= cur >= 0 && loop->red[q].reg == cur;
    if (red || t == NULL || t->kind != ASC_TY_SCALAR)
      continue;
    asc__lower_bind(ls, sym, newreg(ls, t->dtype, sym->name));
  }
  return saved;
}

/* Gives the variables local to a serial loop s fresh registers for its
 * body: its target and the variables its body assigns before reading
 * them, when nothing else in the kernel mentions them.  Python keeps one
 * variable for the whole function, but a loop-local one never carries a
 * value into or out of the loop, so each loop (`for j` used by three
 * loops in a row) gets a register assigned once per iteration: that is
 * what lets fold propagate `j` into index arithmetic and lets the
 * parallelize pass see offsets affine in the loop index.  The bindings
 * are appended to the map; returns how many. */
static int localize(lstate *ls, const asc__ast_stmt *s) {
  int n = 0;
  const asc__sym *target = s->u.for_.target->u.name.sym;
  asc__prange_alist al;
  if (ls->inline_depth > 0)
    return 0; /* a helper's variables live in the helper's body */
  memset(&al, 0, sizeof al);
  asc__prange_note_assign(ls->c, &al, s->u.for_.target, -1);
  asc__prange_collect_assigned(ls->c, &s->u.for_.body, &al);
  for (int k = 0; k < al.n; k++) {
    const asc__sym *sym = al.v[k].sym;
    asc__type *t = sym->type ? asc__ty_find(sym->type) : NULL;
    if (sym->kind != ASC_SYM_LOCAL || t == NULL || t->kind != ASC_TY_SCALAR)
      continue;
    if (sym != target && asc__prange_first_access(&s->u.for_.body, sym) != 1)
      continue;
    if (asc__prange_block_mentions(kernel_body_of(ls), sym, s))
      continue;
    asc__lower_bind(ls, sym, newreg(ls, t->dtype, sym->name));
    n++;
  }
  return n;
}

/* Does block b assign sym anywhere? */
static bool assigns_sym(lstate *ls, const asc__ast_block *b,
                        const asc__sym *sym) {
  asc__prange_alist al;
  memset(&al, 0, sizeof al);
  asc__prange_collect_assigned(ls->c, b, &al);
  for (int k = 0; k < al.n; k++)
    if (al.v[k].sym == sym)
      return true;
  return false;
}

/* A bound as a register of its own: a reduction in the loop's body may
 * update the variable the bound was read from. */
static asc__irval snapshot(lstate *ls, asc__irval v) {
  int32_t r;
  if (v.kind == ASC_IRV_CONST)
    return v;
  r = newreg(ls, vdt(ls, v), NULL);
  mov(ls, r, v);
  return asc__irv_reg(r);
}

/* After `for v in prange(lo, hi, st)`: v holds the last iteration's value
 * when the loop ran, as after a range loop (Python's semantics), and keeps
 * the value it had otherwise.  The iterations ran in parallel, so the
 * value is computed: the trip count n = (hi - lo + st -/+ 1) // st, and
 * v = lo + (n - 1) * st when n > 0.  (A body that assigns v is refused by
 * setup_reductions when v is used outside.) */
static void pfor_last_value(lstate *ls, const asc__sym *vs, asc__loc loc,
                            asc__irval lo, asc__irval hi, asc__irval st) {
  asc__irval zero = asc__irv_int(ascInt64, 0), one = asc__irv_int(ascInt64, 1);
  asc__irval adj, n, ran, last;
  asc__irins *i;
  asc__irblock *save = ls->cur;
  int32_t vr = asc__lower_var_reg(ls, vs, loc);
  adj = sel(ls, op2(ls, ASC_IR_GT, ascInt64, st, zero),
            op2(ls, ASC_IR_SUB, ascInt64, st, one),
            op2(ls, ASC_IR_ADD, ascInt64, st, one));
  n = op2(ls, ASC_IR_FLOORDIV, ascInt64,
          op2(ls, ASC_IR_ADD, ascInt64, op2(ls, ASC_IR_SUB, ascInt64, hi, lo),
              adj),
          st);
  ran = op2(ls, ASC_IR_GT, ascInt64, n, zero);
  i = emit(ls, ASC_IR_IF, -1, 1);
  i->args[0] = ran;
  ls->cur = &i->body[0];
  last = op2(ls, ASC_IR_ADD, ascInt64, lo,
             op2(ls, ASC_IR_MUL, ascInt64,
                 op2(ls, ASC_IR_SUB, ascInt64, n, one), st));
  mov(ls, vr, conv(ls, last, ls->f->regs[vr].ty.dtype));
  ls->cur = save;
}

static void lower_for(lstate *ls, const asc__ast_stmt *s) {
  asc__irval lo, hi, st;
  asc__irins *i;
  asc__irblock *save = ls->cur;
  int saved_map = ls->nmap, saved_excepts = ls->excepts;
  int loc_from = 0, nloc = 0;
  int32_t iv;
  lfor fr;
  bool par = s->u.for_.loop == ASC_BI_PRANGE, last;
  const asc__sym *vs = s->u.for_.target->kind == ASC_EXPR_NAME
                           ? s->u.for_.target->u.name.sym
                           : NULL;
  if (vs == NULL)
    unsupported(ls, s->u.for_.target->loc, "this loop target");
  range_bounds(ls, s, &lo, &hi, &st);
  /* Does code outside a parallel loop read its variable after it? */
  last = par && ls->pfors == 0 &&
         (asc__lower_lookup(ls, vs) >= 0 ||
          asc__prange_block_mentions(kernel_body_of(ls), vs, s));
  if (last) {
    lo = snapshot(ls, lo);
    hi = snapshot(ls, hi);
    st = snapshot(ls, st);
  }
  iv = newreg(ls, ascInt64, asc__arena_printf(ls->c, "%s.it", vs->name));
  i = emit(ls, par && ls->pfors == 0 ? ASC_IR_PFOR : ASC_IR_FOR, iv, 3);
  i->user = true;
  i->args[0] = lo;
  i->args[1] = hi;
  i->args[2] = st;
  i->unroll = s->u.for_.loop == ASC_BI_STATIC_RANGE;
  ls->cur = &i->body[0];
  fr.s = s;
  fr.pvar = NULL;
  fr.target_kept = !assigns_sym(ls, &s->u.for_.body, vs);
  fr.up = ls->fors;
  ls->fors = &fr;
  if (i->op == ASC_IR_PFOR) {
    setup_reductions(ls, i, &s->u.for_.body, kernel_body_of(ls), s);
    saved_map = privatize(ls, &s->u.for_.body, s->u.for_.target, i);
  } else {
    loc_from = ls->nmap;
    nloc = localize(ls, s);
  }
  {
    int32_t vr = asc__lower_var_reg(ls, vs, s->u.for_.target->loc);
    mov(ls, vr, conv(ls, asc__irv_reg(iv), ls->f->regs[vr].ty.dtype));
  }
  ls->loops++;
  ls->loop_depth++;
  if (i->op == ASC_IR_PFOR) {
    ls->pfors++;
    ls->excepts = 0; /* the body is another function */
  }
  asc__lower_block(ls, &s->u.for_.body);
  if (i->op == ASC_IR_PFOR) {
    ls->pfors--;
    asc__lower_unbind_to(ls, saved_map);
    ls->excepts = saved_excepts;
  }
  /* the loop's own variables go out of scope; variables first bound in
   * its body stay (Python sees them after the loop) */
  for (int k = loc_from; k < loc_from + nloc; k++)
    ls->map[k].sym = NULL;
  ls->loops--;
  ls->loop_depth--;
  ls->fors = fr.up;
  ls->cur = save;
  if (i->op == ASC_IR_FOR)
    asc__lower_after_helper_loop(ls);
  else if (last) {
    ls->line = s->loc.line;
    pfor_last_value(ls, vs, s->u.for_.target->loc, lo, hi, st);
  }
}

/* asc.parallel_for(n, body): body is a lambda or a nested def of one
 * parameter, which becomes the induction variable. */
static void lower_parallel_for(lstate *ls, const asc__ast_expr *call) {
  const asc__ast_expr *fe = call->u.call.rargs[1];
  const asc__ast_func *fn = NULL;
  asc__irins *i;
  asc__irblock *save = ls->cur;
  bool saved_pb = ls->in_pbody;
  int saved_map = ls->nmap, saved_excepts = ls->excepts;
  int32_t iv;
  lfor fr;
  if (fe->kind == ASC_EXPR_LAMBDA)
    fn = fe->u.lambda.fn;
  else if (fe->kind == ASC_EXPR_NAME && fe->u.name.sym &&
           fe->u.name.sym->kind == ASC_SYM_FUNC)
    fn = fe->u.name.sym->u.func;
  if (fn == NULL || fn->nparams != 1)
    unsupported(ls, fe->loc, "this parallel_for body");
  iv = newreg(ls, ascInt64, fn->params[0].name);
  i = emit(ls, ls->pfors == 0 ? ASC_IR_PFOR : ASC_IR_FOR, iv, 3);
  i->user = true;
  i->args[0] = asc__irv_int(ascInt64, 0);
  i->args[1] = conv(ls, asc__lower_expr(ls, call->u.call.rargs[0]), ascInt64);
  i->args[2] = asc__irv_int(ascInt64, 1);
  asc__ir_remove(ls->cur, i);
  asc__ir_append(ls->cur, i);
  ls->cur = &i->body[0];
  {
    const asc__sym *ps = fn->params[0].sym;
    asc__type *pt = ps && ps->type ? asc__ty_find(ps->type) : NULL;
    int32_t pr = newreg(ls, pt && pt->kind == ASC_TY_SCALAR ? pt->dtype
                                                           : ascInt64,
                        fn->params[0].name);
    mov(ls, pr, conv(ls, asc__irv_reg(iv), ls->f->regs[pr].ty.dtype));
    asc__lower_bind(ls, ps, pr);
    fr.s = NULL;
    fr.pvar = ps;
    fr.target_kept = !assigns_sym(ls, &fn->body, ps);
    fr.up = ls->fors;
    ls->fors = &fr;
  }
  ls->loops++;
  ls->loop_depth++;
  ls->pfors++;
  ls->in_pbody = true;
  ls->excepts = 0;
  if (fn->kind == ASC_FUNC_LAMBDA && fn->body.n == 1 &&
      fn->body.stmts[0]->kind == ASC_STMT_RETURN) {
    const asc__ast_expr *v = fn->body.stmts[0]->u.ret.value;
    if (v)
      (void)asc__lower_expr(ls, v);
  } else {
    asc__lower_block(ls, &fn->body);
  }
  ls->in_pbody = saved_pb;
  ls->excepts = saved_excepts;
  ls->pfors--;
  ls->loops--;
  ls->loop_depth--;
  ls->fors = fr.up;
  asc__lower_unbind_to(ls, saved_map);
  ls->cur = save;
}

static uint32_t handler_mask(lstate *ls, const asc__ast_handler *h) {
  uint32_t m = 0;
  const asc__ast_expr *t = h->type;
  if (t == NULL)
    return 1u << ASC_KEXC_EXCEPTION;
  if (t->kind == ASC_EXPR_TUPLE) {
    for (int k = 0; k < t->u.tuple.n; k++) {
      const asc__ast_expr *x = t->u.tuple.elts[k];
      if (x->kind != ASC_EXPR_NAME || !x->u.name.sym ||
          x->u.name.sym->kind != ASC_SYM_BUILTIN)
        unsupported(ls, x->loc, "this exception type");
      m |= 1u << asc__lower_exc_kind(x->u.name.sym->u.builtin);
    }
    return m;
  }
  if (t->kind != ASC_EXPR_NAME || !t->u.name.sym ||
      t->u.name.sym->kind != ASC_SYM_BUILTIN)
    unsupported(ls, t->loc, "this exception type");
  return 1u << asc__lower_exc_kind(t->u.name.sym->u.builtin);
}

static void lower_try(lstate *ls, const asc__ast_stmt *s) {
  asc__irblock *save = ls->cur;
  asc__irins *outer = NULL, *inner;
  int32_t ok = -1;
  for (int h = 0; h < s->u.try_.nhandlers; h++)
    if (s->u.try_.handlers[h].name &&
        asc__prange_block_mentions(&s->u.try_.handlers[h].body,
                                   s->u.try_.handlers[h].name_sym, NULL))
      unsupported(ls, s->u.try_.handlers[h].loc,
                  "using the exception object of 'except ... as name'");
  if (s->u.try_.finalbody.n > 0) {
    outer = emit(ls, ASC_IR_TRY, -1, 0);
    outer->has_finally = true;
    ls->cur = &outer->body[0];
  }
  if (s->u.try_.orelse.n > 0) {
    ok = newreg(ls, ascBool, "try_ok");
    mov(ls, ok, asc__irv_int(ascBool, 1));
  }
  inner = emit(ls, ASC_IR_TRY, -1, 0);
  {
    asc__irblock *mid = ls->cur;
    ls->cur = &inner->body[0];
    asc__lower_block(ls, &s->u.try_.body);
    if (s->u.try_.nhandlers > 0) {
      /* one except region catching the union; the clauses are tried in
       * order with excmatch, as Python does */
      int nh = s->u.try_.nhandlers;
      inner->has_except = true;
      for (int h = 0; h < nh; h++)
        inner->exc_mask |= handler_mask(ls, &s->u.try_.handlers[h]);
      ls->cur = &inner->body[1];
      if (ok >= 0)
        mov(ls, ok, asc__irv_int(ascBool, 0));
      ls->excepts++;
      for (int h = 0; h < nh; h++) {
        const asc__ast_handler *hd = &s->u.try_.handlers[h];
        if (h + 1 < nh) {
          int32_t m = newreg(ls, ascBool, NULL);
          asc__irins *x = emit(ls, ASC_IR_EXCMATCH, m, 0), *br;
          x->exc_mask = handler_mask(ls, hd);
          br = emit(ls, ASC_IR_IF, -1, 1);
          br->args[0] = asc__irv_reg(m);
          ls->cur = &br->body[0];
          asc__lower_block(ls, &hd->body);
          ls->cur = &br->body[1];
        } else {
          asc__lower_block(ls, &hd->body);
        }
      }
      ls->excepts--;
    }
    ls->cur = mid;
  }
  if (ok >= 0) {
    asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
    asc__irblock *mid = ls->cur;
    i->args[0] = asc__irv_reg(ok);
    ls->cur = &i->body[0];
    asc__lower_block(ls, &s->u.try_.orelse);
    ls->cur = mid;
  }
  if (outer) {
    ls->cur = &outer->body[2];
    asc__lower_block(ls, &s->u.try_.finalbody);
  }
  ls->cur = save;
}

/* `return a, b` (or return f(...) of a tuple of arrays) of an inlined
 * helper returning a tuple of arrays: each element register takes a new
 * array (a copy of a name's or a view's), as a helper's one array does. */
static void helper_array_tuple(lstate *ls, const asc__ast_expr *v) {
  int n = agg_n(ls->ret_type);
  int32_t *tmp = asc__arena_alloc(ls->c, sizeof *tmp * (size_t)n);
  if (v->kind == ASC_EXPR_TUPLE && v->u.tuple.n == n) {
    for (int k = 0; k < n; k++)
      tmp[k] = asc__lower_make_array(ls, v->u.tuple.elts[k]);
  } else if (asc__lower_is_array_tuple(v)) {
    asc__lower_array_tuple(ls, v, tmp);
  } else {
    unsupported(ls, v->loc, "returning this tuple of arrays");
  }
  for (int k = 0; k < n; k++) {
    asc__irins *i = emit(ls, ASC_IR_SET_ARRAY, ls->ret_elems[k], 1);
    i->args[0] = asc__irv_reg(tmp[k]);
  }
}

/* One value a kernel returns: an array register (in *reg, else -1) or a
 * number of the kernel's dtype of it.  Nothing is written yet. */
static asc__irval result_value(lstate *ls, const asc__ast_expr *v,
                               asc__type *t, const int32_t *taken,
                               int ntaken, int32_t *reg) {
  t = asc__ty_find(t);
  *reg = -1;
  if (t != NULL && t->kind == ASC_TY_TENSOR) {
    *reg = asc__lower_result_array(ls, v, taken, ntaken);
    return asc__irv_reg(*reg);
  }
  if (t != NULL && t->kind == ASC_TY_SCALAR &&
      asc__dtype_is_complex(t->dtype)) {
    /* a 0-d array, which the caller reads back as a number */
    *reg = asc__lower_scalar_array(ls, t->dtype, asc__lower_expr(ls, v));
    return asc__irv_reg(*reg);
  }
  if (t != NULL && t->kind == ASC_TY_SCALAR)
    return conv(ls, asc__lower_expr(ls, v), t->dtype);
  asc__diag_fatal(ls->c, v->loc,
                  "a kernel returns numbers and arrays, or a tuple of "
                  "them written out (return a, b), not %s",
                  t == NULL ? "this" : asc__ty_name(ls->c, t));
}

/* `return v` of the kernel: v into the launch's result slots.  Every
 * value of a tuple is computed before the first slot is written, so that
 * a value that raises (caught by the kernel's own `except`, which may
 * return again) leaves no array half handed over. */
static void lower_result(lstate *ls, const asc__ast_expr *v) {
  asc__type *t = asc__ty_find(ls->t->ret);
  int n = ls->f->nresults;
  int32_t taken[ASC_KMAX_RESULTS];
  asc__irval x[ASC_KMAX_RESULTS];
  if (n > 1 && v->kind != ASC_EXPR_TUPLE && asc__lower_is_array_tuple(v) &&
      ty(v)->n == n) {
    /* return np.histogram(a): its new arrays handed over */
    asc__lower_array_tuple(ls, v, taken);
    for (int k = 0; k < n; k++)
      x[k] = asc__irv_reg(taken[k]);
  } else if (n > 1) {
    if (v->kind != ASC_EXPR_TUPLE || v->u.tuple.n != n || t == NULL ||
        t->kind != ASC_TY_TUPLE || t->n != n)
      asc__diag_fatal(ls->c, v->loc, "the kernel returns %d values", n);
    for (int k = 0; k < n; k++)
      x[k] = result_value(ls, v->u.tuple.elts[k], t->elems[k], taken, k,
                          &taken[k]);
  } else {
    n = 1;
    x[0] = result_value(ls, v, t, taken, 0, &taken[0]);
  }
  for (int k = 0; k < n; k++) {
    asc__irins *i = emit(ls, ASC_IR_RESULT, -1, 1);
    i->aux = k;
    i->args[0] = x[k];
  }
}

/* The value a statement computes before anything else it does, when it
 * is one: the right side of an assignment, a returned value, a call. */
static const asc__ast_expr *stmt_value(const asc__ast_stmt *s) {
  switch (s->kind) {
  case ASC_STMT_EXPR:
    return s->u.expr.value;
  case ASC_STMT_ASSIGN:
    return s->u.assign.ufunc == NULL ? s->u.assign.value : NULL;
  case ASC_STMT_ANNASSIGN:
    return s->u.ann.value;
  case ASC_STMT_AUGASSIGN:
    return s->u.aug.value;
  case ASC_STMT_RETURN:
    return s->u.ret.value;
  default:
    return NULL;
  }
}

static void lower_stmt_kind(lstate *ls, const asc__ast_stmt *s);

static void lower_stmt(lstate *ls, const asc__ast_stmt *s) {
  asc__ldots outer = ls->dots;
  const asc__ast_expr *v = stmt_value(s);
  ls->dots.n = 0;
  ls->dots.nmat = 0;
  ls->line = s->loc.line;
  if (v != NULL) {
    asc__lower_dots_begin(ls, v);
    asc__lower_mv_pair_begin(ls, v);
  }
  lower_stmt_kind(ls, s);
  ls->dots = outer;
}

static void lower_stmt_kind(lstate *ls, const asc__ast_stmt *s) {
  asc__irblock *save = ls->cur;
  ls->line = s->loc.line;
  asc__cctx_tick(ls->c, "lower");
  switch (s->kind) {
  case ASC_STMT_EXPR: {
    const asc__ast_expr *e = s->u.expr.value;
    if (e->kind == ASC_EXPR_STR)
      return; /* docstring */
    if (e->kind == ASC_EXPR_CALL && e->u.call.builtin &&
        e->u.call.builtin->id == ASC_BI_PARALLEL_FOR) {
      lower_parallel_for(ls, e);
      return;
    }
    (void)asc__lower_expr(ls, e);
    return;
  }
  case ASC_STMT_ASSIGN:
    lower_assign(ls, s);
    return;
  case ASC_STMT_ANNASSIGN:
    if (s->u.ann.value) {
      asc__ast_stmt tmp;
      asc__ast_expr *tg[1];
      memset(&tmp, 0, sizeof tmp);
      tmp.kind = ASC_STMT_ASSIGN;
      tmp.loc = s->loc;
      tg[0] = s->u.ann.target;
      tmp.u.assign.targets = tg;
      tmp.u.assign.ntargets = 1;
      tmp.u.assign.value = s->u.ann.value;
      lower_assign(ls, &tmp);
    }
    return;
  case ASC_STMT_AUGASSIGN:
    lower_aug(ls, s);
    return;
  case ASC_STMT_IF: {
    asc__irval c = truthy(ls, asc__lower_expr(ls, s->u.if_.cond));
    asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
    i->args[0] = c;
    ls->cur = &i->body[0];
    asc__lower_block(ls, &s->u.if_.body);
    ls->cur = &i->body[1];
    asc__lower_block(ls, &s->u.if_.orelse);
    ls->cur = save;
    return;
  }
  case ASC_STMT_FOR:
    lower_for(ls, s);
    return;
  case ASC_STMT_WHILE: {
    asc__irins *l = emit(ls, ASC_IR_LOOP, -1, 0), *i;
    asc__irval c;
    l->user = true;
    ls->cur = &l->body[0];
    c = truthy(ls, asc__lower_expr(ls, s->u.while_.cond));
    i = emit(ls, ASC_IR_IF, -1, 1);
    i->args[0] = c;
    ls->cur = &i->body[1];
    emit(ls, ASC_IR_BREAK, -1, 0);
    ls->cur = &l->body[0];
    ls->loops++;
    ls->loop_depth++;
    asc__lower_block(ls, &s->u.while_.body);
    ls->loops--;
    ls->loop_depth--;
    ls->cur = save;
    asc__lower_after_helper_loop(ls);
    return;
  }
  case ASC_STMT_BREAK:
    emit(ls, ASC_IR_BREAK, -1, 0);
    return;
  case ASC_STMT_CONTINUE:
    emit(ls, ASC_IR_CONTINUE, -1, 0);
    return;
  case ASC_STMT_RETURN:
    if (ls->inline_depth > 0 && ls->pfors > ls->helper_pfors)
      asc__diag_fatal(ls->c, s->loc, "'return' inside a parallel loop");
    if (ls->inline_depth > 0) {
      if (s->u.ret.value && ls->ret_reg >= 0 &&
          ls->f->regs[ls->ret_reg].ty.kind == ASC_IRK_TENSOR) {
        /* a helper's array: a copy, so that neither the helper's names
         * nor the arrays passed to it are handed out */
        int32_t tmp = asc__lower_make_array(ls, s->u.ret.value);
        asc__irins *i = emit(ls, ASC_IR_SET_ARRAY, ls->ret_reg, 1);
        i->args[0] = asc__irv_reg(tmp);
      } else if (s->u.ret.value && ls->ret_reg >= 0) {
        mov(ls, ls->ret_reg,
            conv(ls, asc__lower_expr(ls, s->u.ret.value),
                 ls->f->regs[ls->ret_reg].ty.dtype));
      }
      if (s->u.ret.value && ls->ret_elems != NULL &&
          agg_elem(ls->ret_type, 0)->kind == ASC_TY_TENSOR) {
        helper_array_tuple(ls, s->u.ret.value);
      } else if (s->u.ret.value && ls->ret_elems != NULL) {
        int n = agg_n(ls->ret_type);
        asc__irval *vals =
            asc__arena_alloc(ls->c, sizeof *vals * ((size_t)n + 1));
        asc__lower_agg(ls, s->u.ret.value, ls->ret_type, vals);
        for (int k = 0; k < n; k++)
          mov(ls, ls->ret_elems[k], vals[k]);
      }
      /* inside loops: leave them one by one (after_helper_loop) */
      if (ls->loops > 0)
        mov(ls, ls->ret_flag, asc__irv_int(ascBool, 1));
      emit(ls, ASC_IR_BREAK, -1, 0);
      return;
    }
    if (ls->in_pbody) {
      emit(ls, ASC_IR_CONTINUE, -1, 0);
      return;
    }
    if (ls->pfors > 0)
      asc__diag_fatal(ls->c, s->loc, "'return' inside a parallel loop");
    if (s->u.ret.value != NULL)
      lower_result(ls, s->u.ret.value);
    emit(ls, ASC_IR_RET, -1, 0);
    return;
  case ASC_STMT_PASS:
  case ASC_STMT_FUNCDEF:
    return;
  case ASC_STMT_ASSERT: {
    asc__irval c = truthy(ls, asc__lower_expr(ls, s->u.assert_.test));
    asc__irins *i = emit(ls, ASC_IR_IF, -1, 1);
    i->args[0] = c;
    ls->cur = &i->body[1];
    asc__lower_raise_here(ls, ASC_KEXC_ASSERTION_ERROR,
                          message_of(ls, s->u.assert_.msg));
    ls->cur = save;
    return;
  }
  case ASC_STMT_RAISE:
    lower_raise(ls, s);
    return;
  case ASC_STMT_TRY:
    lower_try(ls, s);
    return;
  case ASC_STMT_WITH: {
    asc__irins *i = emit(ls, ASC_IR_CRITICAL, -1, 0);
    ls->cur = &i->body[0];
    asc__lower_block(ls, &s->u.with.body);
    ls->cur = save;
    return;
  }
  default:
    unsupported(ls, s->loc, "this statement");
  }
}

/* Statement s, then its temporaries given back. */
static void lower_one(lstate *ls, const asc__ast_stmt *s) {
  asc__irblock *cur = ls->cur;
  asc__irins *last = cur->last;
  int tmark = ls->ntemps;
  lower_stmt(ls, s);
  /* the statement's temporaries, dead now.  Only those made in this
   * block, which every path through the statement made (one made in a
   * branch, behind a BLAS call's status, may not exist), and not after
   * a return: the launch's end takes the others back. */
  for (int q = tmark; q < ls->ntemps; q++)
    if (s->kind != ASC_STMT_RETURN && ls->temp_blocks[q] == ls->cur) {
      asc__irins *fr = emit(ls, ASC_IR_FREE_ARRAY, -1, 1);
      fr->args[0] = asc__irv_reg(ls->temps[q]);
    }
  ls->ntemps = tmark;
  asc__lower_fuse_note(ls, s, last ? last->next : cur->first);
}

void asc__lower_block(lstate *ls, const asc__ast_block *b) {
  int mark = asc__lower_fuse_plan(ls, b);
  for (int k = 0; k < b->n; k++) {
    asc__irins *pair;
    if (asc__lower_fuse_skip(ls, b->stmts[k]))
      continue;
    if (k + 1 < b->n && !asc__lower_fuse_skip(ls, b->stmts[k + 1]) &&
        (pair = asc__lower_mv_stmts(ls, b->stmts[k], b->stmts[k + 1])) !=
            NULL) {
      /* both made by one call; the statements themselves run when it
       * did nothing */
      asc__irblock *save = ls->cur;
      ls->cur = &pair->body[0];
      lower_one(ls, b->stmts[k]);
      lower_one(ls, b->stmts[k + 1]);
      ls->cur = save;
      k++;
      continue;
    }
    lower_one(ls, b->stmts[k]);
  }
  asc__lower_fuse_end(ls, mark);
}
