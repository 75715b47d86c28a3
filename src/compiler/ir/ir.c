/*
 * IR objects, builders, the printer and constant evaluation.  The parser is
 * ir_parse.c, the verifier ir_verify.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/ir/ir.h"
#include "asc/kernel_abi.h"
#include "base/fastmath.h"

/* pfirst slots per parameter: dim and stride of every axis */
#define PFIRST (2 * ASC_IR_MAXDIMS)

/* ------------------------------------------------------------------ types */

asc__irtype asc__irt_scalar(int dtype) {
  asc__irtype t = {ASC_IRK_SCALAR, (uint8_t)dtype, 0, 0};
  return t;
}

bool asc__irt_eq(asc__irtype a, asc__irtype b) {
  if (a.kind != b.kind)
    return false;
  if (a.kind == ASC_IRK_SCALAR)
    return a.dtype == b.dtype;
  if (a.kind == ASC_IRK_TENSOR)
    return a.dtype == b.dtype && a.ndim == b.ndim;
  return true;
}

bool asc__dt_is_float(int dt) {
  return dt == ascFloat16 || dt == ascBFloat16 || dt == ascFloat32 ||
         dt == ascFloat64;
}
bool asc__dt_is_complex(int dt) {
  return dt == ascComplex64 || dt == ascComplex128;
}
bool asc__dt_is_int(int dt) { return dt >= ascInt8 && dt <= ascUInt64; }
bool asc__dt_is_signed(int dt) { return dt >= ascInt8 && dt <= ascInt64; }

int asc__dt_bits(int dt) {
  switch (dt) {
  case ascBool: return 1;
  case ascInt8: case ascUInt8: return 8;
  case ascInt16: case ascUInt16: case ascFloat16: case ascBFloat16: return 16;
  case ascInt32: case ascUInt32: case ascFloat32: return 32;
  default: return 64;
  }
}

int asc__dt_bytes(int dt) {
  if (dt == ascComplex128)
    return 16;
  if (dt == ascComplex64)
    return 8;
  return asc__dt_bits(dt) >= 8 ? asc__dt_bits(dt) / 8 : 1;
}

const char *asc__dt_name(int dt) { return asc__dtype_short((ascDataType)dt); }

/* ---------------------------------------------------------------- tables */

static const struct {
  const char *name;
  int nargs;
  unsigned flags;
} op_table[] = {
#define X(id, name, nargs, flags) {name, nargs, flags},
    ASC_IR_OPS(X)
#undef X
};

const char *asc__irop_name(int op) {
  return op >= 0 && op < ASC_IR_NOPS ? op_table[op].name : "?";
}
int asc__irop_nargs(int op) { return op_table[op].nargs; }
unsigned asc__irop_flags(int op) { return op_table[op].flags; }

static const struct {
  const char *name;
  int nargs;
} intr_table[] = {
#define X(id, name, n) {name, n},
    ASC_IR_INTRINSICS(X)
#undef X
};

const char *asc__intr_name(int id) {
  return id >= 0 && id < ASC_INTR_COUNT ? intr_table[id].name : "?";
}
int asc__intr_nargs(int id) { return intr_table[id].nargs; }
int asc__intr_lookup(const char *name, size_t len) {
  for (int i = 0; i < ASC_INTR_COUNT; i++)
    if (strlen(intr_table[i].name) == len &&
        memcmp(intr_table[i].name, name, len) == 0)
      return i;
  return -1;
}

static const char *const atom_names[] = {"add", "sub", "min", "max", "xchg"};
const char *asc__atom_name(int a) {
  return a >= 0 && a < ASC_ATOM_COUNT ? atom_names[a] : "?";
}

static const char *const exc_names[] = {
    "None",         "Exception",          "ValueError",
    "IndexError",   "ZeroDivisionError",  "AssertionError",
    "RuntimeError", "OverflowError",      "ArithmeticError",
    "TypeError",    "MemoryError",        "LinAlgError"};

const char *asc__exc_name(int kind) {
  return kind >= 0 && kind < ASC_KEXC_COUNT ? exc_names[kind] : "?";
}
int asc__exc_lookup(const char *name, size_t len) {
  for (int i = 1; i < ASC_KEXC_COUNT; i++)
    if (strlen(exc_names[i]) == len && memcmp(exc_names[i], name, len) == 0)
      return i;
  return -1;
}

/* -------------------------------------------------------------- building */

asc__irmodule *asc__ir_module_new(asc__cctx *c) {
  return asc__arena_alloc(c, sizeof(asc__irmodule));
}

void asc__ir_module_add(asc__cctx *c, asc__irmodule *m, asc__irfunc *f) {
  m->funcs = asc__arena_grow(c, m->funcs, m->nfuncs, &m->capfuncs,
                             sizeof *m->funcs, 4);
  m->funcs[m->nfuncs++] = f;
}

asc__irfunc *asc__ir_func_new(asc__cctx *c, const char *name) {
  asc__irfunc *f = asc__arena_alloc(c, sizeof *f);
  f->name = asc__arena_strndup(c, name, strlen(name));
  f->file = "";
  return f;
}

static uint32_t name_hash(const char *s) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (uint8_t)*s) * 16777619u;
  return h;
}

/* The slot of name in f->names: its register's, or the free one where it
 * would go. */
static int32_t *name_slot(const asc__irfunc *f, const char *name) {
  uint32_t mask = (uint32_t)f->capnames - 1;
  for (uint32_t h = name_hash(name) & mask;; h = (h + 1) & mask) {
    int32_t *slot = &f->names[h];
    if (*slot == 0 || strcmp(f->regs[*slot - 1].name, name) == 0)
      return slot;
  }
}

static bool name_taken(const asc__irfunc *f, const char *name) {
  return f->capnames > 0 && *name_slot(f, name) != 0;
}

/* Adds register r's name to the set, keeping it at most half full. */
static void name_add(asc__cctx *c, asc__irfunc *f, int32_t r) {
  if (2 * (f->nregs + 1) > f->capnames) {
    int32_t cap = f->capnames ? 2 * f->capnames : 64;
    f->names = asc__arena_alloc(c, sizeof *f->names * (size_t)cap);
    f->capnames = cap;
    for (int32_t k = 0; k < r; k++)
      *name_slot(f, f->regs[k].name) = k + 1;
  }
  *name_slot(f, f->regs[r].name) = r + 1;
}

int32_t asc__ir_reg(asc__cctx *c, asc__irfunc *f, asc__irtype ty,
                    const char *hint) {
  char buf[64];
  size_t n = 0;
  const char *name;

  f->regs = asc__arena_grow(c, f->regs, f->nregs, &f->capregs,
                            sizeof *f->regs, 32);
  /* Keep only [A-Za-z0-9_.]: names reach C identifiers (mangled) and the
   * text form. */
  if (hint != NULL)
    for (const char *p = hint; *p && n < 40; p++)
      if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
          (*p >= '0' && *p <= '9') || *p == '_' || *p == '.')
        buf[n++] = *p;
  buf[n] = '\0';
  if (n > 0 && !name_taken(f, buf)) {
    name = asc__arena_strndup(c, buf, n);
  } else {
    const char *base = n > 0 ? buf : "t";
    char tmp[96];
    do
      snprintf(tmp, sizeof tmp, "%s%s%u", base, n > 0 ? "." : "",
               (unsigned)f->next_tmp++);
    while (name_taken(f, tmp));
    name = asc__arena_strndup(c, tmp, strlen(tmp));
  }
  f->regs[f->nregs].name = name;
  f->regs[f->nregs].ty = ty;
  name_add(c, f, f->nregs);
  return f->nregs++;
}

int32_t asc__ir_param(asc__cctx *c, asc__irfunc *f, asc__irtype ty,
                      const char *name) {
  int32_t r = asc__ir_reg(c, f, ty, name);
  int32_t *p = asc__arena_alloc(c, sizeof *p * (size_t)(f->nparams + 1));
  int32_t *first =
      asc__arena_alloc(c, sizeof *first * PFIRST * (size_t)(f->nparams + 1));
  if (f->nparams) {
    memcpy(p, f->params, sizeof *p * (size_t)f->nparams);
    memcpy(first, f->pfirst, sizeof *first * PFIRST * (size_t)f->nparams);
  }
  for (int k = 0; k < PFIRST; k++)
    first[PFIRST * f->nparams + k] = -1;
  p[f->nparams++] = r;
  f->params = p;
  f->pfirst = first;
  f->regs[r].param = true;
  return r;
}

asc__irval asc__irv_reg(int32_t r) {
  asc__irval v;
  memset(&v, 0, sizeof v);
  v.kind = ASC_IRV_REG;
  v.reg = r;
  return v;
}

asc__irval asc__irv_int(int dtype, int64_t x) {
  asc__irval v;
  memset(&v, 0, sizeof v);
  v.kind = ASC_IRV_CONST;
  v.dtype = (uint8_t)dtype;
  v.reg = -1;
  if (asc__dt_is_float(dtype) || asc__dt_is_complex(dtype))
    v.c.f = (double)x;
  else
    v.c.i = x;
  return asc__irv_normalize(v);
}

asc__irval asc__irv_float(int dtype, double x) {
  asc__irval v;
  memset(&v, 0, sizeof v);
  v.kind = ASC_IRV_CONST;
  v.dtype = (uint8_t)dtype;
  v.reg = -1;
  if (asc__dt_is_float(dtype) || asc__dt_is_complex(dtype))
    v.c.f = x;
  else
    v.c.i = (int64_t)x;
  return asc__irv_normalize(v);
}

int asc__irv_dtype(const asc__irfunc *f, asc__irval v) {
  if (v.kind == ASC_IRV_REG)
    return f->regs[v.reg].ty.dtype;
  return v.dtype;
}

bool asc__irv_eq(asc__irval a, asc__irval b) {
  if (a.kind != b.kind)
    return false;
  if (a.kind == ASC_IRV_REG)
    return a.reg == b.reg;
  if (a.kind == ASC_IRV_CONST) {
    if (a.dtype != b.dtype)
      return false;
    if (asc__dt_is_float(a.dtype))
      return memcmp(&a.c.f, &b.c.f, sizeof(double)) == 0;
    return a.c.i == b.c.i;
  }
  return true;
}

asc__irins *asc__ir_ins(asc__cctx *c, int op, int32_t dst, int nargs,
                        int32_t line) {
  asc__irins *i = asc__arena_alloc(c, sizeof *i);
  i->op = (uint16_t)op;
  i->dst = dst;
  i->line = line;
  i->nargs = nargs;
  if (nargs > 0)
    i->args = asc__arena_alloc(c, sizeof *i->args * (size_t)nargs);
  return i;
}

void asc__ir_append(asc__irblock *b, asc__irins *i) {
  i->next = NULL;
  i->prev = b->last;
  if (b->last)
    b->last->next = i;
  else
    b->first = i;
  b->last = i;
}

void asc__ir_insert_before(asc__irblock *b, asc__irins *pos, asc__irins *i) {
  if (pos == NULL) {
    asc__ir_append(b, i);
    return;
  }
  i->next = pos;
  i->prev = pos->prev;
  if (pos->prev)
    pos->prev->next = i;
  else
    b->first = i;
  pos->prev = i;
}

void asc__ir_remove(asc__irblock *b, asc__irins *i) {
  if (i->prev)
    i->prev->next = i->next;
  else
    b->first = i->next;
  if (i->next)
    i->next->prev = i->prev;
  else
    b->last = i->prev;
  i->prev = i->next = NULL;
}

void asc__ir_splice(asc__irblock *b, asc__irins *pos, asc__irblock *src) {
  asc__irins *i = src->first;
  while (i != NULL) {
    asc__irins *next = i->next;
    asc__ir_insert_before(b, pos, i);
    i = next;
  }
  src->first = src->last = NULL;
}

int asc__ir_nregions(const asc__irins *i) {
  switch (i->op) {
  case ASC_IR_FOR:
  case ASC_IR_PFOR:
  case ASC_IR_LOOP:
  case ASC_IR_CRITICAL:
    return 1;
  case ASC_IR_IF:
    return 2;
  case ASC_IR_TRY:
    return 3;
  default:
    return 0;
  }
}

asc__irins *asc__ir_clone(asc__cctx *c, const asc__irins *s) {
  asc__irins *i = asc__arena_alloc(c, sizeof *i);
  *i = *s;
  i->prev = i->next = NULL;
  if (s->nargs > 0) {
    i->args = asc__arena_alloc(c, sizeof *i->args * (size_t)s->nargs);
    memcpy(i->args, s->args, sizeof *i->args * (size_t)s->nargs);
  }
  if (s->nred > 0) {
    i->red = asc__arena_alloc(c, sizeof *i->red * (size_t)s->nred);
    memcpy(i->red, s->red, sizeof *i->red * (size_t)s->nred);
  }
  for (int k = 0; k < 3; k++) {
    i->body[k].first = i->body[k].last = NULL;
    for (const asc__irins *x = s->body[k].first; x; x = x->next)
      asc__ir_append(&i->body[k], asc__ir_clone(c, x));
  }
  return i;
}

/* The pfirst slot r's value belongs to (-1: none): r is the one
 * definition of a parameter's dim or stride. */
static int32_t canon_slot(const asc__irfunc *f, int32_t r) {
  const asc__irreg *g = &f->regs[r];
  const asc__irins *d = g->def;
  if (g->param || g->ndefs != 1 || d == NULL ||
      (d->op != ASC_IR_DIM && d->op != ASC_IR_STRIDE) ||
      d->args[0].kind != ASC_IRV_REG || !f->regs[d->args[0].reg].param ||
      d->aux < 0 || d->aux >= ASC_IR_MAXDIMS)
    return -1;
  for (int32_t p = 0; p < f->nparams; p++)
    if (f->params[p] == d->args[0].reg)
      return PFIRST * p + 2 * d->aux + (d->op == ASC_IR_DIM);
  return -1;
}

static void canon_note(asc__irfunc *f, int32_t r) {
  int32_t k = canon_slot(f, r);
  if (k >= 0 && (f->pfirst[k] < 0 || r < f->pfirst[k]))
    f->pfirst[k] = r;
}

static void canon_all(asc__irfunc *f) {
  for (int32_t k = 0; k < PFIRST * f->nparams; k++)
    f->pfirst[k] = -1;
  for (int32_t r = 0; r < f->nregs; r++)
    canon_note(f, r);
  f->pfirst_ok = true;
}

int32_t asc__ir_canon(const asc__irfunc *f, int32_t r) {
  int32_t k = canon_slot(f, r);
  if (k < 0)
    return r;
  if (!f->pfirst_ok)
    canon_all((asc__irfunc *)f); /* a cache of the counts, filled late */
  return f->pfirst[k] >= 0 && f->pfirst[k] < r ? f->pfirst[k] : r;
}

static void count_ins(asc__irins *i, void *ctx) {
  asc__irfunc *f = ctx;
  if (i->dst >= 0) {
    f->regs[i->dst].ndefs++;
    f->regs[i->dst].def = i;
  }
  for (int32_t k = 0; k < i->nargs; k++)
    if (i->args[k].kind == ASC_IRV_REG)
      f->regs[i->args[k].reg].nuses++;
  for (int32_t k = 0; k < i->nred; k++) {
    f->regs[i->red[k].reg].nuses++;
    f->regs[i->red[k].reg].ndefs++;
  }
}

void asc__ir_count(asc__irfunc *f) {
  for (int32_t r = 0; r < f->nregs; r++) {
    f->regs[r].ndefs = f->regs[r].param ? 1 : 0;
    f->regs[r].nuses = 0;
    f->regs[r].def = NULL;
  }
  asc__ir_walk(&f->body, count_ins, f);
  f->pfirst_ok = false;
}

/* One entry of a snapshot: register reg defined by ins (dst), used, or
 * reduced (both). */
enum { ENT_DEF, ENT_USE, ENT_RED };
struct asc__ircount_ent {
  const asc__irins *ins;
  int32_t reg;
  int32_t kind;
};

typedef struct snapwalk {
  asc__cctx *c;
  asc__ircount_snap *s;
} snapwalk;

static void snap_add(snapwalk *w, const asc__irins *i, int32_t reg,
                     int kind) {
  asc__ircount_snap *s = w->s;
  if (s->n == s->cap) {
    int32_t cap = s->cap ? 2 * s->cap : 64;
    struct asc__ircount_ent *e =
        asc__scratch_alloc(w->c, sizeof *e * (size_t)cap);
    if (s->n > 0)
      memcpy(e, s->e, sizeof *e * (size_t)s->n);
    s->e = e;
    s->cap = cap;
  }
  s->e[s->n].ins = i;
  s->e[s->n].reg = reg;
  s->e[s->n].kind = kind;
  s->n++;
}

static void snap_ins(asc__irins *i, void *ctx) {
  snapwalk *w = ctx;
  if (i->dst >= 0)
    snap_add(w, i, i->dst, ENT_DEF);
  for (int32_t k = 0; k < i->nargs; k++)
    if (i->args[k].kind == ASC_IRV_REG)
      snap_add(w, i, i->args[k].reg, ENT_USE);
  for (int32_t k = 0; k < i->nred; k++)
    snap_add(w, i, i->red[k].reg, ENT_RED);
}

void asc__ir_count_snap(asc__cctx *c, asc__ircount_snap *s,
                        const asc__irins *i) {
  snapwalk w;
  w.c = c;
  w.s = s;
  s->n = 0;
  snap_ins((asc__irins *)i, &w);
  for (int k = 0; k < asc__ir_nregions(i); k++)
    asc__ir_walk(&i->body[k], snap_ins, &w);
}

#ifndef NDEBUG
/* Debug builds compare the kept counts with a recount on functions small
 * enough for that to stay cheap (every golden and unit test). */
static void check_counts(asc__cctx *c, asc__irfunc *f) {
  asc__irreg *kept;
  int32_t *first;
  bool first_ok = f->pfirst_ok;
  if (f->nregs > 1024)
    return;
  kept = asc__scratch_alloc(c, sizeof *kept * (size_t)(f->nregs + 1));
  first = asc__scratch_alloc(c, sizeof *first * PFIRST *
                                    (size_t)(f->nparams + 1));
  memcpy(kept, f->regs, sizeof *kept * (size_t)f->nregs);
  memcpy(first, f->pfirst, sizeof *first * PFIRST * (size_t)f->nparams);
  asc__ir_count(f);
  for (int32_t r = 0; r < f->nregs; r++) {
    ASC_CHECK(c, kept[r].ndefs == f->regs[r].ndefs);
    ASC_CHECK(c, kept[r].nuses == f->regs[r].nuses);
    ASC_CHECK(c, f->regs[r].ndefs != 1 || f->regs[r].param ||
                     kept[r].def == f->regs[r].def);
  }
  canon_all(f);
  for (int32_t k = 0; k < PFIRST * f->nparams && first_ok; k++)
    ASC_CHECK(c, first[k] == f->pfirst[k]);
  memcpy(f->regs, kept, sizeof *kept * (size_t)f->nregs);
  memcpy(f->pfirst, first, sizeof *first * PFIRST * (size_t)f->nparams);
  f->pfirst_ok = first_ok;
}
#endif

static void canon_walk(asc__irins *i, void *ctx) {
  if (i->dst >= 0)
    canon_note(ctx, i->dst);
}

void asc__ir_count_redo(asc__cctx *c, asc__irfunc *f,
                        const asc__ircount_snap *s, const asc__irblock *b,
                        const asc__irins *prev, const asc__irins *next) {
  bool lost = false;
  (void)c;
  for (int32_t k = 0; k < s->n; k++) {
    asc__irreg *g = &f->regs[s->e[k].reg];
    if (s->e[k].kind != ENT_USE)
      g->ndefs--;
    if (s->e[k].kind != ENT_DEF)
      g->nuses--;
    if (s->e[k].kind == ENT_DEF && g->def == s->e[k].ins)
      g->def = NULL;
  }
  for (const asc__irins *i = prev != NULL ? prev->next : b->first; i != next;
       i = i->next) {
    count_ins((asc__irins *)i, f);
    for (int k = 0; k < asc__ir_nregions(i); k++)
      asc__ir_walk(&i->body[k], count_ins, f);
  }
  /* A register that lost the definition it pointed to and still has one
   * elsewhere: only a walk finds it (rare: a rewrite that renames a
   * register the rest of the function also assigns). */
  for (int32_t k = 0; k < s->n && !lost; k++) {
    const asc__irreg *g = &f->regs[s->e[k].reg];
    lost = s->e[k].kind == ENT_DEF && g->def == NULL && g->ndefs > 0 &&
           !g->param;
  }
  if (lost) {
    asc__ir_count(f);
  } else if (f->pfirst_ok) {
    /* the first register of a dim or stride may no longer be one: look
     * again at the next asc__ir_canon */
    for (int32_t k = 0; k < PFIRST * f->nparams && f->pfirst_ok; k++)
      if (f->pfirst[k] >= 0 && canon_slot(f, f->pfirst[k]) != k)
        f->pfirst_ok = false;
  }
  if (f->pfirst_ok) {
    for (int32_t k = 0; k < s->n; k++)
      if (s->e[k].kind == ENT_DEF)
        canon_note(f, s->e[k].reg);
    for (const asc__irins *i = prev != NULL ? prev->next : b->first;
         i != next; i = i->next) {
      if (i->dst >= 0)
        canon_note(f, i->dst);
      for (int k = 0; k < asc__ir_nregions(i); k++)
        asc__ir_walk(&i->body[k], canon_walk, f);
    }
  }
#ifndef NDEBUG
  check_counts(c, f);
#endif
}

/* ------------------------------------------------------------- printing */

static void print_type(asc__buf *o, asc__irtype t) {
  if (t.kind == ASC_IRK_TENSOR) {
    asc__buf_printf(o, "tensor<%s,%d", asc__dt_name(t.dtype), t.ndim);
    if (t.flags & ASC_IRT_CONTIG)
      asc__buf_puts(o, ",contig");
    if (t.flags & ASC_IRT_ALIGN64)
      asc__buf_puts(o, ",align64");
    asc__buf_puts(o, ">");
  } else if (t.kind == ASC_IRK_SCALAR) {
    asc__buf_puts(o, asc__dt_name(t.dtype));
  } else {
    asc__buf_puts(o, "void");
  }
}

/* Shortest decimal that reads back to the same value of type dt; always
 * with a '.' or an exponent so it reads back as a float. */
static void print_float(asc__buf *o, double x, int dt) {
  char s[64];
  if (isnan(x)) {
    asc__buf_puts(o, "nan");
    return;
  }
  if (isinf(x)) {
    asc__buf_puts(o, x < 0 ? "-inf" : "inf");
    return;
  }
  for (int p = 1; p <= 17; p++) {
    snprintf(s, sizeof s, "%.*g", p, x);
    if (asc__irv_float(dt, strtod(s, NULL)).c.f == x)
      break;
  }
  asc__buf_puts(o, s);
  if (strpbrk(s, ".en") == NULL)
    asc__buf_puts(o, ".0");
}

/* The type a constant operand takes from its instruction, or -1 when the
 * text must spell it (`3:i32`).  Shared with the parser. */
int asc__ir_operand_type(const asc__irfunc *f, const asc__irins *i, int k);
int asc__ir_operand_type(const asc__irfunc *f, const asc__irins *i, int k) {
  int ddt = i->dst >= 0 ? f->regs[i->dst].ty.dtype : -1;
  switch (i->op) {
  case ASC_IR_SELECT:
    return k == 0 ? ascBool : ddt;
  case ASC_IR_CAST:
  case ASC_IR_CVT:
  case ASC_IR_RET:
    return -1;
  case ASC_IR_CALL:
    if (i->aux == ASC_INTR_ISNAN || i->aux == ASC_INTR_ISINF ||
        i->aux == ASC_INTR_ISFINITE)
      return -1;
    return ddt;
  case ASC_IR_LOAD:
  case ASC_IR_STORE:
  case ASC_IR_ATOMIC:
  case ASC_IR_CAS:
  case ASC_IR_LOCK:
  case ASC_IR_UNLOCK:
    if (k == 1)
      return ascInt64;
    if (k >= 2 && i->args[0].kind == ASC_IRV_REG)
      return f->regs[i->args[0].reg].ty.dtype;
    return -1;
  case ASC_IR_IF:
    return ascBool;
  case ASC_IR_RAISE:
    return ascInt64;
  case ASC_IR_DIM:
  case ASC_IR_STRIDE:
    return -1;
  case ASC_IR_GEMM_EXACT:
    return k == 0 || k == 4 || k == 8 ? -1 : ascInt64;
  case ASC_IR_LINALG:
    return k >= 3 && (k - 3) % 4 == 0 ? -1 : ascInt64;
  default:
    if (asc__irop_flags(i->op) & ASC_OPF_CMP) {
      const asc__irval *o = &i->args[1 - k];
      return o->kind == ASC_IRV_REG ? f->regs[o->reg].ty.dtype : -1;
    }
    return ddt;
  }
}

static void print_val(asc__buf *o, const asc__irfunc *f, const asc__irins *i,
                      int k) {
  asc__irval v = i->args[k];
  if (v.kind == ASC_IRV_REG) {
    asc__buf_printf(o, "%%%s", f->regs[v.reg].name);
    return;
  }
  if (v.kind != ASC_IRV_CONST) {
    asc__buf_puts(o, "?");
    return;
  }
  if (v.dtype == ascBool)
    asc__buf_puts(o, v.c.i ? "true" : "false");
  else if (asc__dt_is_float(v.dtype))
    print_float(o, v.c.f, v.dtype);
  else if (v.dtype == ascUInt64)
    asc__buf_printf(o, "%llu", (unsigned long long)v.c.i);
  else
    asc__buf_printf(o, "%lld", (long long)v.c.i);
  if (asc__ir_operand_type(f, i, k) != v.dtype)
    asc__buf_printf(o, ":%s", asc__dt_name(v.dtype));
}

static void print_args(asc__buf *o, const asc__irfunc *f, const asc__irins *i,
                       int from) {
  for (int32_t k = from; k < i->nargs; k++) {
    if (k > from)
      asc__buf_puts(o, ", ");
    print_val(o, f, i, k);
  }
}

static void indent(asc__buf *o, int depth) {
  for (int d = 0; d < depth; d++)
    asc__buf_puts(o, "  ");
}

static void print_block(asc__buf *o, const asc__irfunc *f,
                        const asc__irblock *b, int depth);

static void print_str(asc__buf *o, const char *s) {
  asc__buf_puts(o, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      asc__buf_printf(o, "\\%c", *p);
    else if (*p < 0x20 || *p >= 0x7f)
      asc__buf_printf(o, "\\x%02x", *p);
    else
      asc__buf_put(o, p, 1);
  }
  asc__buf_puts(o, "\"");
}

static void print_line(asc__buf *o, const asc__irins *i) {
  if (i->line > 0)
    asc__buf_printf(o, " @%d", (int)i->line);
}

static void print_note(asc__buf *o, const char *note, int depth) {
  while (*note) {
    const char *nl = strchr(note, '\n');
    size_t n = nl ? (size_t)(nl - note) : strlen(note);
    indent(o, depth);
    asc__buf_puts(o, "; ");
    asc__buf_put(o, note, n);
    asc__buf_puts(o, "\n");
    note += n + (nl ? 1 : 0);
  }
}

static void print_ins(asc__buf *o, const asc__irfunc *f, const asc__irins *i,
                      int depth) {
  if (i->note)
    print_note(o, i->note, depth);
  indent(o, depth);
  if (i->dst >= 0 && i->op != ASC_IR_FOR && i->op != ASC_IR_PFOR) {
    asc__buf_printf(o, "%%%s:", f->regs[i->dst].name);
    print_type(o, f->regs[i->dst].ty);
    asc__buf_puts(o, " = ");
  }
  asc__buf_puts(o, asc__irop_name(i->op));
  switch (i->op) {
  case ASC_IR_CALL:
    asc__buf_printf(o, " %s(", asc__intr_name(i->aux));
    print_args(o, f, i, 0);
    asc__buf_puts(o, ")");
    break;
  case ASC_IR_DIM:
  case ASC_IR_STRIDE:
  case ASC_IR_RESULT:
  case ASC_IR_GEMM_EXACT:
    asc__buf_puts(o, " ");
    print_args(o, f, i, 0);
    asc__buf_printf(o, ", %d", (int)i->aux);
    break;
  case ASC_IR_LINALG:
    asc__buf_printf(o, " %d, ", (int)i->aux);
    print_args(o, f, i, 0);
    break;
  case ASC_IR_ATOMIC:
    asc__buf_printf(o, " %s ", asc__atom_name(i->aux));
    print_args(o, f, i, 0);
    break;
  case ASC_IR_LOCAL_ARRAY:
  case ASC_IR_SHARED_ARRAY:
    asc__buf_puts(o, " [");
    for (int32_t k = 0; k < i->nimm; k++)
      asc__buf_printf(o, "%s%lld", k ? ", " : "", (long long)i->imm[k]);
    asc__buf_puts(o, "]");
    break;
  case ASC_IR_RAISE:
    asc__buf_printf(o, " %s ", asc__exc_name(i->aux));
    print_str(o, i->str ? i->str : "");
    if (i->nargs > 0) {
      asc__buf_puts(o, ", ");
      print_args(o, f, i, 0);
    }
    break;
  case ASC_IR_EXCMATCH: {
    bool first = true;
    asc__buf_puts(o, "(");
    for (int k = 1; k < ASC_KEXC_COUNT; k++)
      if (i->exc_mask & (1u << k)) {
        asc__buf_printf(o, "%s%s", first ? "" : ", ", asc__exc_name(k));
        first = false;
      }
    asc__buf_puts(o, ")");
    break;
  }
  case ASC_IR_FOR:
  case ASC_IR_PFOR:
    asc__buf_printf(o, " %%%s:", f->regs[i->dst].name);
    print_type(o, f->regs[i->dst].ty);
    asc__buf_puts(o, " = ");
    print_args(o, f, i, 0);
    if (i->unroll)
      asc__buf_puts(o, " unroll");
    if (i->wave == ASC_WAVE_SWEEP)
      asc__buf_puts(o, " sweep");
    else if (i->wave > 0)
      asc__buf_printf(o, " wavefront %d", i->wave - 1);
    if (i->nred > 0) {
      asc__buf_puts(o, " reduce(");
      for (int32_t k = 0; k < i->nred; k++)
        asc__buf_printf(o, "%s%s %%%s", k ? ", " : "",
                        asc__irop_name(i->red[k].op),
                        f->regs[i->red[k].reg].name);
      asc__buf_puts(o, ")");
    }
    break;
  default:
    if (i->nargs > 0) {
      asc__buf_puts(o, " ");
      print_args(o, f, i, 0);
    }
    break;
  }
  print_line(o, i);
  switch (i->op) {
  case ASC_IR_FOR:
  case ASC_IR_PFOR:
  case ASC_IR_LOOP:
  case ASC_IR_CRITICAL:
    asc__buf_puts(o, " {\n");
    print_block(o, f, &i->body[0], depth + 1);
    indent(o, depth);
    asc__buf_puts(o, "}");
    break;
  case ASC_IR_IF:
    asc__buf_puts(o, " {\n");
    print_block(o, f, &i->body[0], depth + 1);
    indent(o, depth);
    asc__buf_puts(o, "}");
    if (i->body[1].first) {
      asc__buf_puts(o, " else {\n");
      print_block(o, f, &i->body[1], depth + 1);
      indent(o, depth);
      asc__buf_puts(o, "}");
    }
    break;
  case ASC_IR_TRY:
    asc__buf_puts(o, " {\n");
    print_block(o, f, &i->body[0], depth + 1);
    indent(o, depth);
    asc__buf_puts(o, "}");
    if (i->has_except) {
      bool first = true;
      asc__buf_puts(o, " except(");
      for (int k = 1; k < ASC_KEXC_COUNT; k++)
        if (i->exc_mask & (1u << k)) {
          asc__buf_printf(o, "%s%s", first ? "" : ", ", asc__exc_name(k));
          first = false;
        }
      asc__buf_puts(o, ") {\n");
      print_block(o, f, &i->body[1], depth + 1);
      indent(o, depth);
      asc__buf_puts(o, "}");
    }
    if (i->has_finally) {
      asc__buf_puts(o, " finally {\n");
      print_block(o, f, &i->body[2], depth + 1);
      indent(o, depth);
      asc__buf_puts(o, "}");
    }
    break;
  default:
    break;
  }
  asc__buf_puts(o, "\n");
}

static void print_block(asc__buf *o, const asc__irfunc *f,
                        const asc__irblock *b, int depth) {
  for (const asc__irins *i = b->first; i; i = i->next)
    print_ins(o, f, i, depth);
}

void asc__ir_print_func(asc__buf *o, const asc__irfunc *f) {
  asc__buf_printf(o, "kernel @%s(", f->name);
  for (int32_t k = 0; k < f->nparams; k++) {
    const asc__irreg *r = &f->regs[f->params[k]];
    asc__buf_printf(o, "%s%%%s: ", k ? ", " : "", r->name);
    print_type(o, r->ty);
    if (r->ty.flags & ASC_IRT_GENERIC)
      asc__buf_puts(o, " generic");
    if (r->ty.flags & ASC_IRT_CONSTEXPR)
      asc__buf_puts(o, " constexpr");
  }
  asc__buf_puts(o, f->may_alias ? ") may_alias" : ")");
  if (f->fastmath != 0) {
    asc__buf_puts(o, " fastmath(");
    asc__fastmath_names(o, f->fastmath);
    asc__buf_puts(o, ")");
  }
  asc__buf_puts(o, " {\n");
  print_block(o, f, &f->body, 1);
  asc__buf_puts(o, "}\n");
}

void asc__ir_print_module(asc__buf *o, const asc__irmodule *m) {
  for (int32_t k = 0; k < m->nfuncs; k++) {
    if (k)
      asc__buf_puts(o, "\n");
    asc__ir_print_func(o, m->funcs[k]);
  }
}

/* ------------------------------------------------------ constant values */

/* Rounds x to a binary float with `mant` fraction bits, minimum normal
 * exponent emin and largest finite value maxf (round to nearest even,
 * overflow to infinity, subnormals kept). */
static double round_to(double x, int mant, int emin, double maxf) {
  int e;
  double q;
  if (x == 0 || isnan(x) || isinf(x))
    return x;
  e = ilogb(x);
  if (e < emin)
    e = emin;
  q = ldexp(nearbyint(ldexp(x, mant - e)), e - mant);
  if (fabs(q) > maxf)
    return copysign(INFINITY, x);
  return q;
}

asc__irval asc__irv_normalize(asc__irval v) {
  if (v.kind != ASC_IRV_CONST)
    return v;
  switch (v.dtype) {
  case ascBool: v.c.i = v.c.i != 0; break;
  case ascInt8: v.c.i = (int8_t)v.c.i; break;
  case ascInt16: v.c.i = (int16_t)v.c.i; break;
  case ascInt32: v.c.i = (int32_t)v.c.i; break;
  case ascUInt8: v.c.i = (uint8_t)v.c.i; break;
  case ascUInt16: v.c.i = (uint16_t)v.c.i; break;
  case ascUInt32: v.c.i = (uint32_t)v.c.i; break;
  case ascFloat16: v.c.f = round_to(v.c.f, 10, -14, 65504.0); break;
  case ascBFloat16:
    v.c.f = round_to(v.c.f, 7, -126, ldexp(255.0 / 128.0, 127));
    break;
  case ascFloat32: v.c.f = (double)(float)v.c.f; break;
  default: break;
  }
  return v;
}

static bool eval_int(int op, int dt, int64_t a, int64_t b, int64_t *r) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  bool sgn = asc__dt_is_signed(dt);
  switch (op) {
  case ASC_IR_ADD: *r = (int64_t)(ua + ub); return true;
  case ASC_IR_SUB: *r = (int64_t)(ua - ub); return true;
  case ASC_IR_MUL: *r = (int64_t)(ua * ub); return true;
  case ASC_IR_FLOORDIV:
  case ASC_IR_MOD:
    if (b == 0)
      return false;
    if (!sgn) {
      *r = (int64_t)(op == ASC_IR_FLOORDIV ? ua / ub : ua % ub);
      return true;
    }
    if (b == -1) {
      *r = op == ASC_IR_FLOORDIV ? (int64_t)(0 - ua) : 0;
      return true;
    }
    {
      int64_t q = a / b, m = a % b;
      if (m != 0 && ((m < 0) != (b < 0))) {
        q--;
        m += b;
      }
      *r = op == ASC_IR_FLOORDIV ? q : m;
    }
    return true;
  case ASC_IR_POW: {
    uint64_t acc = 1, base = ua;
    if (sgn && b < 0)
      return false;
    for (uint64_t e = ub; e; e >>= 1) {
      if (e & 1)
        acc *= base;
      base *= base;
    }
    *r = (int64_t)acc;
    return true;
  }
  case ASC_IR_MIN:
    *r = (sgn ? b < a : ub < ua) ? b : a;
    return true;
  case ASC_IR_MAX:
    *r = (sgn ? b > a : ub > ua) ? b : a;
    return true;
  case ASC_IR_AND: *r = a & b; return true;
  case ASC_IR_OR: *r = a | b; return true;
  case ASC_IR_XOR: *r = a ^ b; return true;
  case ASC_IR_SHL:
    if (b < 0 || b >= 64)
      return false;
    *r = (int64_t)(ua << b);
    return true;
  case ASC_IR_SHR:
    if (b < 0 || b >= 64)
      return false;
    *r = sgn ? (a < 0 ? ~(~a >> b) : a >> b) : (int64_t)(ua >> b);
    return true;
  case ASC_IR_EQ: *r = a == b; return true;
  case ASC_IR_NE: *r = a != b; return true;
  case ASC_IR_LT: *r = sgn ? a < b : ua < ub; return true;
  case ASC_IR_LE: *r = sgn ? a <= b : ua <= ub; return true;
  case ASC_IR_GT: *r = sgn ? a > b : ua > ub; return true;
  case ASC_IR_GE: *r = sgn ? a >= b : ua >= ub; return true;
  default: return false;
  }
}

static bool eval_float(int op, double a, double b, double *r, int64_t *cmp) {
  switch (op) {
  case ASC_IR_ADD: *r = a + b; return true;
  case ASC_IR_SUB: *r = a - b; return true;
  case ASC_IR_MUL: *r = a * b; return true;
  case ASC_IR_DIV: *r = a / b; return true;
  case ASC_IR_FLOORDIV:
  case ASC_IR_MOD: {
    double m, q;
    if (b == 0) {
      /* IEEE, as numpy (docs/decisions.md): a // 0.0 is a / 0.0 (inf
       * with the signs' sign, nan for 0 or nan), a % 0.0 is nan */
      *r = op == ASC_IR_FLOORDIV ? a / b : NAN;
      return true;
    }
    m = fmod(a, b);
    q = (a - m) / b;
    if (m != 0 && ((b < 0) != (m < 0))) {
      m += b;
      q -= 1.0;
    }
    if (m == 0)
      m = copysign(0.0, b);
    if (q != 0) {
      double fq = floor(q);
      if (q - fq > 0.5)
        fq += 1.0;
      q = fq;
    } else {
      q = copysign(0.0, a / b);
    }
    *r = op == ASC_IR_FLOORDIV ? q : m;
    return true;
  }
  case ASC_IR_POW: *r = pow(a, b); return true;
  case ASC_IR_MIN: *r = b < a ? b : a; return true;
  case ASC_IR_MAX: *r = b > a ? b : a; return true;
  case ASC_IR_PMIN: *r = b < a || b != b ? b : a; return true;
  case ASC_IR_PMAX: *r = b > a || b != b ? b : a; return true;
  case ASC_IR_EQ: *cmp = a == b; return true;
  case ASC_IR_NE: *cmp = a != b; return true;
  case ASC_IR_LT: *cmp = a < b; return true;
  case ASC_IR_LE: *cmp = a <= b; return true;
  case ASC_IR_GT: *cmp = a > b; return true;
  case ASC_IR_GE: *cmp = a >= b; return true;
  default: return false;
  }
}

bool asc__ir_eval(int op, int aux, int dtype, int src_dtype,
                  const asc__irval *args, int nargs, asc__irval *out) {
  asc__irval r;
  memset(&r, 0, sizeof r);
  r.kind = ASC_IRV_CONST;
  r.dtype = (uint8_t)dtype;
  r.reg = -1;
  for (int k = 0; k < nargs; k++)
    if (args[k].kind != ASC_IRV_CONST || asc__dt_is_complex(args[k].dtype))
      return false;
  /* complex values are not folded: a constant holds one double */
  if (asc__dt_is_complex(dtype) || asc__dt_is_complex(src_dtype))
    return false;
  switch (op) {
  case ASC_IR_MOV:
    r = args[0];
    r.dtype = (uint8_t)dtype;
    break;
  case ASC_IR_SELECT:
    r = args[0].c.i ? args[1] : args[2];
    break;
  case ASC_IR_NEG:
    if (asc__dt_is_float(dtype))
      r.c.f = -args[0].c.f;
    else
      r.c.i = (int64_t)(0 - (uint64_t)args[0].c.i);
    break;
  case ASC_IR_ABS:
    if (asc__dt_is_float(dtype))
      r.c.f = fabs(args[0].c.f);
    else
      r.c.i = (asc__dt_is_signed(dtype) && args[0].c.i < 0)
                  ? (int64_t)(0 - (uint64_t)args[0].c.i)
                  : args[0].c.i;
    break;
  case ASC_IR_NOT:
    if (dtype == ascBool)
      r.c.i = !args[0].c.i;
    else if (asc__dt_is_int(dtype))
      r.c.i = ~args[0].c.i;
    else
      return false;
    break;
  case ASC_IR_CAST: {
    asc__irval a = args[0];
    int sdt = src_dtype;
    if (dtype == ascBool) {
      r.c.i = asc__dt_is_float(sdt) ? a.c.f != 0 : a.c.i != 0;
    } else if (asc__dt_is_float(dtype)) {
      if (asc__dt_is_float(sdt))
        r.c.f = a.c.f;
      else if (sdt == ascUInt64)
        r.c.f = (double)(uint64_t)a.c.i;
      else
        r.c.f = (double)a.c.i;
    } else if (asc__dt_is_float(sdt)) {
      double t = trunc(a.c.f);
      /* NaN and out-of-range raise at run time: leave them. */
      if (isnan(t) || t < -9223372036854775808.0 ||
          t >= 9223372036854775808.0)
        return false;
      r.c.i = (int64_t)t;
      if (asc__irv_normalize(r).c.i != r.c.i)
        return false;
    } else {
      r.c.i = a.c.i;
    }
    break;
  }
  default: {
    unsigned fl = asc__irop_flags(op);
    int odt = (fl & ASC_OPF_CMP) ? src_dtype : dtype;
    if (nargs != 2)
      return false;
    if (asc__dt_is_float(odt)) {
      int64_t cmp = 0;
      double v = 0;
      if (!eval_float(op, args[0].c.f, args[1].c.f, &v, &cmp))
        return false;
      if (fl & ASC_OPF_CMP)
        r.c.i = cmp;
      else
        r.c.f = v;
    } else {
      int64_t v;
      if (op == ASC_IR_DIV)
        return false;
      if (!eval_int(op, odt, args[0].c.i, args[1].c.i, &v))
        return false;
      r.c.i = v;
    }
    break;
  }
  }
  (void)aux;
  r.dtype = (uint8_t)dtype;
  *out = asc__irv_normalize(r);
  return true;
}
