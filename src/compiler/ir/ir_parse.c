/*
 * Parser of the IR text form (docs/ir.md): one function per rule, the rule
 * in the comment above it.  Errors are diagnostics at IR line:col and unwind
 * to the caller's catch point.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/ir/ir.h"
#include "asc/kernel_abi.h"
#include "base/fastmath.h"

int asc__ir_operand_type(const asc__irfunc *f, const asc__irins *i, int k);

typedef struct parser {
  asc__cctx *c;
  const char *p, *end, *line_start;
  int32_t line;
  asc__irfunc *f;
  /* loop nesting, for break / continue checks in the verifier */
} parser;

static asc__loc here(parser *ps) {
  asc__loc l = {ps->line, (int32_t)(ps->p - ps->line_start) + 1};
  return l;
}

#define PERR(ps, ...) asc__diag_fatal((ps)->c, here(ps), __VA_ARGS__)

/* Skips blanks and ';' comments; newlines too when nl is true. */
static void skip(parser *ps, bool nl) {
  for (;;) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
                               *ps->p == '\r'))
      ps->p++;
    if (ps->p < ps->end && *ps->p == ';') {
      while (ps->p < ps->end && *ps->p != '\n')
        ps->p++;
    }
    if (nl && ps->p < ps->end && *ps->p == '\n') {
      ps->p++;
      ps->line++;
      ps->line_start = ps->p;
      continue;
    }
    return;
  }
}

static bool at(parser *ps, char ch) {
  skip(ps, false);
  return ps->p < ps->end && *ps->p == ch;
}

static bool accept(parser *ps, char ch) {
  if (at(ps, ch)) {
    ps->p++;
    return true;
  }
  return false;
}

static void expect(parser *ps, char ch) {
  if (!accept(ps, ch))
    PERR(ps, "expected '%c'", ch);
}

static bool is_ident(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
         (ch >= '0' && ch <= '9') || ch == '_' || ch == '.';
}

/* A word of [A-Za-z0-9_.]; its length (0 when none). */
static size_t word(parser *ps, const char **w) {
  const char *s;
  skip(ps, false);
  s = ps->p;
  while (ps->p < ps->end && is_ident(*ps->p))
    ps->p++;
  *w = s;
  return (size_t)(ps->p - s);
}

static bool accept_word(parser *ps, const char *kw) {
  const char *save = ps->p, *w;
  size_t n = word(ps, &w);
  if (n == strlen(kw) && memcmp(w, kw, n) == 0)
    return true;
  ps->p = save;
  return false;
}

static void end_of_line(parser *ps) {
  skip(ps, false);
  if (ps->p < ps->end && *ps->p != '\n')
    PERR(ps, "unexpected text at end of line");
}

/* Copies the number-like characters at p into buf (NUL-terminated): the
 * text is not NUL-terminated, so strto* must not read it directly. */
static size_t number_text(const parser *ps, const char *p, char *buf,
                          size_t size) {
  size_t n = 0;
  while (p + n < ps->end && n + 1 < size &&
         (is_ident(p[n]) || p[n] == '+' || p[n] == '-'))
    n++;
  memcpy(buf, p, n);
  buf[n] = '\0';
  return n;
}

static int64_t parse_int(parser *ps) {
  char buf[72], *e;
  long long v;
  skip(ps, false);
  number_text(ps, ps->p, buf, sizeof buf);
  v = strtoll(buf, &e, 10);
  if (e == buf)
    PERR(ps, "expected an integer");
  ps->p += e - buf;
  return v;
}

/* scalar: 'bool' | 'i8' .. 'u64' | 'f16' | 'bf16' | 'f32' | 'f64' */
static int parse_dtype(parser *ps) {
  const char *w;
  size_t n = word(ps, &w);
  for (int d = 0; d < ascDataTypeCount; d++)
    if (strlen(asc__dt_name(d)) == n && memcmp(asc__dt_name(d), w, n) == 0)
      return d;
  ps->p = w;
  PERR(ps, "expected a type");
}

/* type: scalar | 'tensor' '<' scalar ',' INT { ',' flag } '>' */
static asc__irtype parse_type(parser *ps) {
  asc__irtype t;
  if (!accept_word(ps, "tensor"))
    return asc__irt_scalar(parse_dtype(ps));
  memset(&t, 0, sizeof t);
  t.kind = ASC_IRK_TENSOR;
  expect(ps, '<');
  t.dtype = (uint8_t)parse_dtype(ps);
  expect(ps, ',');
  {
    int64_t nd = parse_int(ps);
    if (nd < 0 || nd > ASC_IR_MAXDIMS)
      PERR(ps, "bad tensor rank");
    t.ndim = (uint8_t)nd;
  }
  while (accept(ps, ',')) {
    if (accept_word(ps, "contig"))
      t.flags |= ASC_IRT_CONTIG;
    else if (accept_word(ps, "align64"))
      t.flags |= ASC_IRT_ALIGN64;
    else
      PERR(ps, "unknown tensor flag");
  }
  expect(ps, '>');
  return t;
}

static int32_t find_reg(parser *ps, const char *name, size_t n) {
  for (int32_t r = 0; r < ps->f->nregs; r++)
    if (strlen(ps->f->regs[r].name) == n &&
        memcmp(ps->f->regs[r].name, name, n) == 0)
      return r;
  return -1;
}

/* REG: '%' name */
static int32_t parse_regname(parser *ps, const char **w, size_t *n) {
  expect(ps, '%');
  *n = word(ps, w);
  if (*n == 0)
    PERR(ps, "expected a register name");
  return find_reg(ps, *w, *n);
}

static int32_t parse_use(parser *ps) {
  const char *w;
  size_t n;
  int32_t r = parse_regname(ps, &w, &n);
  if (r < 0) {
    ps->p = w;
    PERR(ps, "undefined register '%%%.*s'", (int)n, w);
  }
  return r;
}

/* A definition '%name:type': the register, created on first definition;
 * later definitions must repeat the type. */
static int32_t parse_def(parser *ps) {
  const char *w;
  size_t n;
  int32_t r = parse_regname(ps, &w, &n);
  asc__irtype t;
  expect(ps, ':');
  t = parse_type(ps);
  if (r < 0) {
    char *name = asc__arena_strndup(ps->c, w, n);
    r = asc__ir_reg(ps->c, ps->f, t, name);
  } else if (!asc__irt_eq(ps->f->regs[r].ty, t) ||
             ps->f->regs[r].ty.flags != t.flags) {
    PERR(ps, "register '%%%.*s' redefined with another type", (int)n, w);
  }
  return r;
}

/* operand: REG | INT | FLOAT | 'true' | 'false' | 'inf' | 'nan' [':' type] */
static asc__irval parse_operand(parser *ps) {
  asc__irval v;
  memset(&v, 0, sizeof v);
  skip(ps, false);
  if (at(ps, '%'))
    return asc__irv_reg(parse_use(ps));
  v.kind = ASC_IRV_CONST;
  v.reg = -1;
  v.dtype = 0xff; /* unknown until typed */
  if (accept_word(ps, "true")) {
    v.dtype = ascBool;
    v.c.i = 1;
  } else if (accept_word(ps, "false")) {
    v.dtype = ascBool;
    v.c.i = 0;
  } else {
    const char *s = ps->p, *t = s;
    char buf[72], *e;
    bool isf = false, hex;
    if (t < ps->end && (*t == '-' || *t == '+'))
      t++;
    hex = ps->end - t >= 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
    for (; t < ps->end; t++) {
      char ch = *t;
      if (ch == '-' || ch == '+') {
        char pc = t[-1];
        if (!(pc == 'p' || pc == 'P' || (!hex && (pc == 'e' || pc == 'E'))))
          break;
      } else if (!is_ident(ch)) {
        break;
      }
      if (ch == '.' || ch == 'p' || ch == 'P' || ch == 'n' || ch == 'i' ||
          (!hex && (ch == 'e' || ch == 'E')))
        isf = true;
    }
    number_text(ps, s, buf, sizeof buf);
    if (isf) {
      double d = strtod(buf, &e);
      if (e == buf)
        PERR(ps, "expected an operand");
      v.c.f = d;
      v.dtype = 0xfe; /* float of unknown width */
    } else {
      if (buf[0] == '-')
        v.c.i = strtoll(buf, &e, 0);
      else
        v.c.i = (int64_t)strtoull(buf, &e, 0);
      if (e == buf)
        PERR(ps, "expected an operand");
      v.dtype = 0xfd; /* int of unknown width */
    }
    ps->p = s + (e - buf);
  }
  if (accept(ps, ':')) {
    int dt = parse_dtype(ps);
    bool wasf = v.dtype == 0xfe;
    if (v.dtype == ascBool)
      v.c.i = v.c.i != 0;
    v.dtype = (uint8_t)dt;
    if (asc__dt_is_float(dt) && !wasf)
      v.c.f = (double)v.c.i;
    else if (!asc__dt_is_float(dt) && wasf)
      PERR(ps, "float constant with an integer type");
    v = asc__irv_normalize(v);
  }
  return v;
}

/* Gives untyped constants the type their instruction expects. */
static void type_consts(parser *ps, asc__irins *i) {
  for (int32_t k = 0; k < i->nargs; k++) {
    asc__irval *v = &i->args[k];
    int want;
    if (v->kind != ASC_IRV_CONST || v->dtype < 0xf0)
      continue;
    want = asc__ir_operand_type(ps->f, i, k);
    if (want < 0)
      PERR(ps, "operand %d needs a type suffix (e.g. 1:i64)", (int)k + 1);
    if (asc__dt_is_float(want) && v->dtype != 0xfe)
      v->c.f = (double)v->c.i;
    else if (!asc__dt_is_float(want) && v->dtype == 0xfe)
      PERR(ps, "float constant where %s is expected", asc__dt_name(want));
    v->dtype = (uint8_t)want;
    *v = asc__irv_normalize(*v);
  }
}

static void parse_args(parser *ps, asc__irins *i, int n) {
  i->nargs = n;
  i->args = asc__arena_alloc(ps->c, sizeof *i->args * (size_t)(n ? n : 1));
  for (int k = 0; k < n; k++) {
    if (k)
      expect(ps, ',');
    i->args[k] = parse_operand(ps);
  }
}

static void parse_block(parser *ps, asc__irblock *b);

/* region: '{' NL block '}' */
static void parse_region(parser *ps, asc__irblock *b) {
  expect(ps, '{');
  end_of_line(ps);
  parse_block(ps, b);
  expect(ps, '}');
}

static void parse_line_no(parser *ps, asc__irins *i) {
  if (accept(ps, '@'))
    i->line = (int32_t)parse_int(ps);
}

static int lookup_op(const char *w, size_t n) {
  for (int op = 0; op < ASC_IR_NOPS; op++)
    if (strlen(asc__irop_name(op)) == n &&
        memcmp(asc__irop_name(op), w, n) == 0)
      return op;
  return -1;
}

/* string: '"' { char | '\' ( '"' | '\' | 'x' HEX HEX ) } '"' */
static const char *parse_string(parser *ps) {
  asc__buf b;
  const char *r;
  expect(ps, '"');
  asc__buf_init(&b);
  while (ps->p < ps->end && *ps->p != '"' && *ps->p != '\n') {
    char ch = *ps->p++;
    if (ch == '\\' && ps->p < ps->end) {
      char e = *ps->p++;
      if (e == 'x' && ps->end - ps->p >= 2) {
        char hex[3] = {ps->p[0], ps->p[1], 0};
        ch = (char)strtol(hex, NULL, 16);
        ps->p += 2;
      } else {
        ch = e;
      }
    }
    asc__buf_put(&b, &ch, 1);
  }
  if (!accept(ps, '"')) {
    asc__buf_free(&b);
    PERR(ps, "unterminated string");
  }
  r = asc__arena_strndup(ps->c, asc__buf_str(&b), b.len);
  asc__buf_free(&b);
  return r;
}

/* ins: [def '='] op operands ['@' INT] [region...] */
/* "A, B)" after an opening '(' (excmatch, try ... except): the exception
 * kinds named, as a mask. */
static uint32_t parse_exc_kinds(parser *ps) {
  uint32_t mask = 0;

  while (!accept(ps, ')')) {
    const char *en;
    size_t nn;
    int k;
    if (mask)
      expect(ps, ',');
    nn = word(ps, &en);
    k = asc__exc_lookup(en, nn);
    if (k < 0)
      PERR(ps, "unknown exception kind");
    mask |= 1u << k;
  }
  return mask;
}

static asc__irins *parse_ins(parser *ps) {
  int32_t dst = -1;
  const char *w;
  size_t n;
  int op;
  asc__irins *i;

  if (at(ps, '%')) {
    dst = parse_def(ps);
    expect(ps, '=');
  }
  n = word(ps, &w);
  op = lookup_op(w, n);
  if (op < 0) {
    ps->p = w;
    PERR(ps, "unknown instruction '%.*s'", (int)n, w);
  }
  i = asc__ir_ins(ps->c, op, dst, 0, 0);
  if (op == ASC_IR_BLOCK_IDX || op == ASC_IR_BLOCK_NUM)
    ps->f->reads_block = true;
  switch (op) {
  case ASC_IR_CALL: {
    const char *nm;
    size_t nn = word(ps, &nm);
    int id = asc__intr_lookup(nm, nn);
    int k = 0;
    if (id < 0)
      PERR(ps, "unknown intrinsic '%.*s'", (int)nn, nm);
    i->aux = id;
    expect(ps, '(');
    i->args = asc__arena_alloc(ps->c, sizeof *i->args * 4);
    while (!accept(ps, ')')) {
      if (k)
        expect(ps, ',');
      if (k >= 3)
        PERR(ps, "too many arguments");
      i->args[k++] = parse_operand(ps);
    }
    i->nargs = k;
    break;
  }
  case ASC_IR_DIM:
  case ASC_IR_STRIDE:
  case ASC_IR_RESULT:
  case ASC_IR_GEMM_EXACT:
    parse_args(ps, i, op == ASC_IR_GEMM_EXACT ? 15 : 1);
    expect(ps, ',');
    i->aux = (int32_t)parse_int(ps);
    if (op == ASC_IR_GEMM_EXACT &&
        (i->aux & ~(ASC_GEMM_ACCUMULATE | ASC_GEMM_BLAS_FIRST)) != 0)
      PERR(ps, "bad gemm_exact flags");
    if (op == ASC_IR_RESULT) {
      if (i->aux < 0 || i->aux >= ASC_KMAX_RESULTS)
        PERR(ps, "bad result slot");
      if (ps->f->nresults <= i->aux)
        ps->f->nresults = i->aux + 1;
    }
    break;
  case ASC_IR_ATOMIC: {
    const char *an;
    size_t nn = word(ps, &an);
    i->aux = -1;
    for (int a = 0; a < ASC_ATOM_COUNT; a++)
      if (strlen(asc__atom_name(a)) == nn &&
          memcmp(asc__atom_name(a), an, nn) == 0)
        i->aux = a;
    if (i->aux < 0)
      PERR(ps, "unknown atomic operation");
    parse_args(ps, i, 3);
    break;
  }
  case ASC_IR_LOCAL_ARRAY:
  case ASC_IR_SHARED_ARRAY:
    expect(ps, '[');
    while (!accept(ps, ']')) {
      if (i->nimm)
        expect(ps, ',');
      if (i->nimm >= ASC_IR_MAXDIMS)
        PERR(ps, "too many dimensions");
      i->imm[i->nimm++] = parse_int(ps);
    }
    break;
  case ASC_IR_RAISE: {
    const char *en;
    size_t nn = word(ps, &en);
    i->aux = asc__exc_lookup(en, nn);
    if (i->aux < 0)
      PERR(ps, "unknown exception kind");
    i->str = parse_string(ps);
    /* values for the message's {} placeholders */
    i->args = asc__arena_alloc(ps->c, sizeof *i->args * ASC_IR_RAISE_MAXARGS);
    while (accept(ps, ',')) {
      if (i->nargs >= ASC_IR_RAISE_MAXARGS)
        PERR(ps, "too many values for a raise message");
      i->args[i->nargs++] = parse_operand(ps);
    }
    break;
  }
  case ASC_IR_EXCMATCH:
    expect(ps, '(');
    i->exc_mask = parse_exc_kinds(ps);
    break;
  case ASC_IR_FOR:
  case ASC_IR_PFOR:
    if (dst >= 0)
      PERR(ps, "write 'for %%i:i64 = lo, hi, step'");
    i->dst = parse_def(ps);
    expect(ps, '=');
    parse_args(ps, i, 3);
    if (accept_word(ps, "unroll"))
      i->unroll = true;
    if (op == ASC_IR_FOR && accept_word(ps, "wavefront")) {
      int64_t r = parse_int(ps);
      if (r < 0 || r > ASC_WAVE_MAXR)
        PERR(ps, "bad wavefront radius");
      i->wave = (uint8_t)(r + 1);
    } else if (accept_word(ps, "sweep")) {
      i->wave = ASC_WAVE_SWEEP;
    }
    if (accept_word(ps, "reduce")) {
      expect(ps, '(');
      i->red = asc__arena_alloc(ps->c, sizeof *i->red * 8);
      while (!accept(ps, ')')) {
        const char *on;
        size_t nn;
        int rop;
        if (i->nred)
          expect(ps, ',');
        if (i->nred >= 8)
          PERR(ps, "too many reductions");
        nn = word(ps, &on);
        rop = lookup_op(on, nn);
        if (rop != ASC_IR_ADD && rop != ASC_IR_MUL && rop != ASC_IR_MIN &&
            rop != ASC_IR_MAX && rop != ASC_IR_AND && rop != ASC_IR_OR &&
            rop != ASC_IR_XOR)
          PERR(ps, "bad reduction operator");
        i->red[i->nred].op = (uint8_t)rop;
        i->red[i->nred].reg = parse_use(ps);
        i->nred++;
      }
    }
    break;
  case ASC_IR_NEW_ARRAY:
    if (dst < 0 || ps->f->regs[dst].ty.kind != ASC_IRK_TENSOR)
      PERR(ps, "new_array defines a tensor");
    parse_args(ps, i, ps->f->regs[dst].ty.ndim);
    break;
  case ASC_IR_SET_VIEW:
    if (dst < 0 || ps->f->regs[dst].ty.kind != ASC_IRK_TENSOR)
      PERR(ps, "set_view defines a tensor");
    parse_args(ps, i, 2 + 2 * ps->f->regs[dst].ty.ndim);
    break;
  case ASC_IR_RET:
    if (!at(ps, '\n') && !at(ps, '@') && ps->p < ps->end)
      parse_args(ps, i, 1);
    break;
  case ASC_IR_LINALG:
    i->aux = (int32_t)parse_int(ps);
    i->args = asc__arena_alloc(ps->c, sizeof *i->args * ASC_IR_LINALG_MAXARGS);
    while (accept(ps, ',')) {
      if (i->nargs >= ASC_IR_LINALG_MAXARGS)
        PERR(ps, "too many linalg operands");
      i->args[i->nargs++] = parse_operand(ps);
    }
    break;
  default: {
    int na = asc__irop_nargs(op);
    if (na > 0)
      parse_args(ps, i, na);
    break;
  }
  }
  type_consts(ps, i);
  parse_line_no(ps, i);
  switch (op) {
  case ASC_IR_FOR:
  case ASC_IR_PFOR:
  case ASC_IR_LOOP:
  case ASC_IR_CRITICAL:
    parse_region(ps, &i->body[0]);
    break;
  case ASC_IR_IF:
    parse_region(ps, &i->body[0]);
    if (accept_word(ps, "else"))
      parse_region(ps, &i->body[1]);
    break;
  case ASC_IR_TRY:
    parse_region(ps, &i->body[0]);
    if (accept_word(ps, "except")) {
      i->has_except = true;
      if (accept(ps, '('))
        i->exc_mask = parse_exc_kinds(ps);
      if (i->exc_mask == 0)
        i->exc_mask = 1u << ASC_KEXC_EXCEPTION;
      parse_region(ps, &i->body[1]);
    }
    if (accept_word(ps, "finally")) {
      i->has_finally = true;
      parse_region(ps, &i->body[2]);
    }
    break;
  default:
    break;
  }
  end_of_line(ps);
  return i;
}

/* block: { ins NL } (up to the closing '}') */
static void parse_block(parser *ps, asc__irblock *b) {
  for (;;) {
    skip(ps, true);
    if (ps->p >= ps->end || *ps->p == '}')
      return;
    asc__ir_append(b, parse_ins(ps));
  }
}

/* func: ('kernel' | 'func') '@' name '(' [param {',' param}] ')'
 *       ['may_alias'] ['fastmath' '(' flag {',' flag} ')'] region
 * param: REG ':' type ['generic'] ['constexpr'] */
static asc__irfunc *parse_func(parser *ps) {
  const char *w;
  size_t n;
  asc__irfunc *f;

  if (!accept_word(ps, "kernel") && !accept_word(ps, "func"))
    PERR(ps, "expected 'kernel'");
  expect(ps, '@');
  n = word(ps, &w);
  if (n == 0)
    PERR(ps, "expected a kernel name");
  f = asc__ir_func_new(ps->c, asc__arena_strndup(ps->c, w, n));
  ps->f = f;
  expect(ps, '(');
  while (!accept(ps, ')')) {
    const char *pn;
    size_t pl;
    asc__irtype t;
    int32_t r;
    if (f->nparams)
      expect(ps, ',');
    if (parse_regname(ps, &pn, &pl) >= 0)
      PERR(ps, "parameter defined twice");
    expect(ps, ':');
    t = parse_type(ps);
    if (accept_word(ps, "generic"))
      t.flags |= ASC_IRT_GENERIC;
    if (accept_word(ps, "constexpr")) {
      if (t.kind != ASC_IRK_SCALAR)
        PERR(ps, "only a scalar parameter can be constexpr");
      t.flags |= ASC_IRT_CONSTEXPR;
    }
    r = asc__ir_param(ps->c, f, t, asc__arena_strndup(ps->c, pn, pl));
    (void)r;
  }
  if (accept_word(ps, "may_alias"))
    f->may_alias = true;
  if (accept_word(ps, "fastmath")) {
    expect(ps, '(');
    do {
      const char *fw;
      size_t fl = word(ps, &fw);
      unsigned bit = asc__fastmath_bit(fw, fl);
      if (bit == 0)
        PERR(ps, "expected a fastmath flag (" ASC_FASTMATH_VALID ")");
      f->fastmath |= bit;
    } while (accept(ps, ','));
    expect(ps, ')');
  }
  parse_region(ps, &f->body);
  return f;
}

asc__irmodule *asc__ir_parse(asc__cctx *c, const char *text, size_t len) {
  parser ps;
  asc__irmodule *m = asc__ir_module_new(c);
  memset(&ps, 0, sizeof ps);
  ps.c = c;
  ps.p = ps.line_start = text;
  ps.end = text + len;
  ps.line = c->text == text ? c->first_line : 1;
  for (;;) {
    skip(&ps, true);
    if (ps.p >= ps.end)
      break;
    asc__ir_module_add(c, m, parse_func(&ps));
  }
  return m;
}
