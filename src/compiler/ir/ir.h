/*
 * The IR between the typed AST and C: structured control flow over typed
 * virtual registers.  docs/ir.md describes it with its text form.
 *
 *   module  = functions (kernels)
 *   func    = params (registers) + one block
 *   block   = doubly linked list of instructions
 *   ins     = op, optional destination register, operands (registers or
 *             typed constants), small immediates, up to three regions
 *
 * Registers are not SSA: a register may be assigned several times (Python
 * variables, loop-carried sums).  Passes that move or merge values (cse,
 * licm, strength) only touch registers with exactly one definition, which is
 * what lowering produces for every temporary.
 *
 * Every object lives in the compilation's arena.
 */
#ifndef ASC_IR_H
#define ASC_IR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "compiler/cctx.h"
#include "compiler/ir/regtab.h"

/* ------------------------------------------------------------------ types */

/* Scalar dtypes use ascDataType's numbering (ascBool .. ascFloat64). */
enum {
  ASC_IRK_VOID = 0,
  ASC_IRK_SCALAR,
  ASC_IRK_TENSOR
};

enum {
  ASC_IRT_CONTIG = 1 << 0,   /* innermost stride is 1 */
  ASC_IRT_ALIGN64 = 1 << 1,  /* data is 64-byte aligned */
  ASC_IRT_GENERIC = 1 << 2,  /* scalar param passed as asc_kscalar */
  ASC_IRT_LOCAL = 1 << 3,    /* local_array / shared_array buffer */
  ASC_IRT_READONLY = 1 << 4, /* never stored to (set by the verifier) */
  ASC_IRT_CONSTEXPR = 1 << 5 /* ConstExpr scalar param: its value is a
                              * constant of this specialisation */
};

typedef struct asc__irtype {
  uint8_t kind;
  uint8_t dtype;  /* scalar type, or a tensor's element type */
  uint8_t ndim;
  uint8_t flags;
} asc__irtype;

asc__irtype asc__irt_scalar(int dtype);
bool asc__irt_eq(asc__irtype a, asc__irtype b);
bool asc__dt_is_float(int dt);
bool asc__dt_is_complex(int dt);  /* c64, c128 */
bool asc__dt_is_int(int dt);     /* signed or unsigned, not bool */
bool asc__dt_is_signed(int dt);
/* Bits of a value: 1 for bool; complex64 64, complex128 64 as well (the
 * width the emitter's integer and float rules compare).  The size an
 * element takes in memory is asc__dt_bytes. */
int asc__dt_bits(int dt);
/* Bytes one element takes in memory: bool and int8 1, ..., complex64 8,
 * complex128 16 (the loop-nest passes size their tiles with it). */
int asc__dt_bytes(int dt);
const char *asc__dt_name(int dt);   /* "f32", "i64", "bool", ... */

/* -------------------------------------------------------------- opcodes */

/*   name       nargs  flags */
#define ASC_IR_OPS(X)                                                        \
  X(MOV, "mov", 1, ASC_OPF_PURE)                                             \
  X(ADD, "add", 2, ASC_OPF_PURE | ASC_OPF_COMM)                              \
  X(SUB, "sub", 2, ASC_OPF_PURE)                                             \
  X(MUL, "mul", 2, ASC_OPF_PURE | ASC_OPF_COMM)                              \
  X(DIV, "div", 2, ASC_OPF_PURE)       /* true division, floats */          \
  X(FLOORDIV, "floordiv", 2, ASC_OPF_PURE) /* Python // */                  \
  X(MOD, "mod", 2, ASC_OPF_PURE)       /* Python %: divisor's sign */       \
  X(POW, "pow", 2, ASC_OPF_PURE)                                             \
  X(MIN, "min", 2, ASC_OPF_PURE | ASC_OPF_COMM)                              \
  X(MAX, "max", 2, ASC_OPF_PURE | ASC_OPF_COMM)                              \
  X(PMIN, "pmin", 2, ASC_OPF_PURE)     /* numpy's minimum: b if b < a or b  \
                                          is a NaN, else a (a NaN stays) */ \
  X(PMAX, "pmax", 2, ASC_OPF_PURE)     /* numpy's maximum, the same with > */\
  X(AND, "and", 2, ASC_OPF_PURE | ASC_OPF_COMM)                              \
  X(OR, "or", 2, ASC_OPF_PURE | ASC_OPF_COMM)                                \
  X(XOR, "xor", 2, ASC_OPF_PURE | ASC_OPF_COMM)                              \
  X(SHL, "shl", 2, ASC_OPF_PURE)                                             \
  X(SHR, "shr", 2, ASC_OPF_PURE)                                             \
  X(NEG, "neg", 1, ASC_OPF_PURE)                                             \
  X(ABS, "abs", 1, ASC_OPF_PURE)                                             \
  X(NOT, "not", 1, ASC_OPF_PURE)       /* logical on bool, ~ on ints */     \
  X(EQ, "eq", 2, ASC_OPF_PURE | ASC_OPF_CMP | ASC_OPF_COMM)                  \
  X(NE, "ne", 2, ASC_OPF_PURE | ASC_OPF_CMP | ASC_OPF_COMM)                  \
  X(LT, "lt", 2, ASC_OPF_PURE | ASC_OPF_CMP)                                 \
  X(LE, "le", 2, ASC_OPF_PURE | ASC_OPF_CMP)                                 \
  X(GT, "gt", 2, ASC_OPF_PURE | ASC_OPF_CMP)                                 \
  X(GE, "ge", 2, ASC_OPF_PURE | ASC_OPF_CMP)                                 \
  X(SELECT, "select", 3, ASC_OPF_PURE)                                       \
  X(CAST, "cast", 1, ASC_OPF_PURE)                                           \
  X(CVT, "cvt", 1, ASC_OPF_PURE)       /* float -> int known in range: C's  \
                                          conversion, no check (vmchunk) */ \
  X(CALL, "call", -1, ASC_OPF_PURE)    /* math intrinsic, aux = id */       \
  X(DIM, "dim", 1, ASC_OPF_PURE)       /* shape[imm] of a tensor */         \
  X(STRIDE, "stride", 1, ASC_OPF_PURE) /* strides[imm], in elements */      \
  X(LOAD, "load", 2, 0)                /* t, element offset */              \
  X(STORE, "store", 3, 0)              /* t, element offset, value */       \
  X(ATOMIC, "atomic", 3, 0)            /* aux = add/sub/min/max/xchg */     \
  X(CAS, "cas", 4, 0)                  /* t, off, expected, desired */      \
  X(LOCK, "lock", 2, 0)                /* t (i32), off: spin until 0 -> 1,  \
                                          acquire */                        \
  X(UNLOCK, "unlock", 2, 0)            /* t (i32), off: store 0, release */ \
  X(LOCAL_ARRAY, "local_array", 0, 0)  /* shape in imm[] */                 \
  X(SHARED_ARRAY, "shared_array", 0, 0)                                      \
  X(NEW_ARRAY, "new_array", -1, 0)     /* dst = an array the kernel creates \
                                          (asc_krt.alloc), shape = args     \
                                          (i64); raises ValueError or       \
                                          MemoryError */                    \
  X(SET_ARRAY, "set_array", 1, 0)      /* dst, a name's array, = arg (a     \
                                          new_array): its old array is      \
                                          given back */                     \
  X(SET_VIEW, "set_view", -1, 0)       /* dst, an array variable (a name   \
                                          rebound in a loop or a branch, a  \
                                          strided type), = a view of arg0   \
                                          (a tensor of its dtype):          \
                                          element offset arg1, then ndim    \
                                          extents and ndim strides (i64);   \
                                          the array dst owned is given back \
                                          unless arg0 is dst */             \
  X(FREE_ARRAY, "free_array", 1, 0)    /* gives arg's new_array back */     \
  X(RESULT, "result", 1, 0)            /* the kernel's aux'th returned      \
                                          value = arg: a scalar, or a       \
                                          new_array/set_array tensor, which \
                                          then outlives the block */        \
  X(GEMM, "gemm", 17, 0)               /* dst (i32) = asc_krt.gemm_ab: c,   \
                                          a, a's offset, 2 strides, b, b's  \
                                          offset, 2 strides, m, n, k, c's   \
                                          2 strides, c's offset (i64),      \
                                          alpha, beta (f64): c = alpha *    \
                                          a @ b + beta * c; 0 when done */  \
  X(GEMM_EXACT, "gemm_exact", 15, 0)   /* a recognised GEMM nest (gemmrec): \
                                          c, c's offset, 2 strides, a, ...,  \
                                          b, ..., m, n, k (i64); aux: 1     \
                                          accumulate into c, 2 BLAS first   \
                                          (reassoc); may raise */           \
  X(LINALG, "linalg", -1, 0)           /* dst (i32) = asc_krt.linalg, aux = \
                                          the op (ASC_KLINALG_*): m, n, k   \
                                          (i64), then per operand a tensor, \
                                          its offset, 2 strides (i64);      \
                                          operand 0 read, the others        \
                                          written; 0 when done */           \
  X(BLOCK_IDX, "block_idx", 0, ASC_OPF_PURE)                                 \
  X(BLOCK_NUM, "block_num", 0, ASC_OPF_PURE)                                 \
  X(TEAM_SIZE, "team_size", 0, ASC_OPF_PURE) /* threads in the team */      \
  X(WORKER_ID, "worker_id", 0, 0)      /* team thread running a pfor body   \
                                          (0 outside one); not pure: it     \
                                          must not leave the body */        \
  X(BARRIER, "barrier", 0, 0)                                                \
  X(FOR, "for", 3, 0)                  /* dst = induction; lo, hi, step */  \
  X(PFOR, "pfor", 3, 0)                /* parallel for, + reductions */     \
  X(LOOP, "loop", 0, 0)                /* forever, until break */           \
  X(IF, "if", 1, 0)                    /* then = body[0], else = body[1] */ \
  X(TRY, "try", 0, 0)                  /* body[0] except body[1] finally body[2] */ \
  X(CRITICAL, "critical", 0, 0)                                              \
  X(BREAK, "break", 0, 0)                                                    \
  X(CONTINUE, "continue", 0, 0)                                              \
  X(RET, "ret", -1, 0)                                                       \
  X(RAISE, "raise", -1, 0)             /* aux = kind, str = message */ \
  X(EXCMATCH, "excmatch", 0, 0)        /* in an except region: does the  \
                                          caught kind match exc_mask? */ \
  X(RERAISE, "reraise", 0, 0)          /* in an except region: raise the \
                                          caught exception again */

enum {
  ASC_OPF_PURE = 1 << 0, /* no side effect (may still trap: see below) */
  ASC_OPF_COMM = 1 << 1,
  ASC_OPF_CMP = 1 << 2
};

typedef enum asc__irop {
#define X(id, name, nargs, flags) ASC_IR_##id,
  ASC_IR_OPS(X)
#undef X
  ASC_IR_NOPS
} asc__irop;

/* linalg: m, n, k and at most 17 operands of 4 values each (dots: 8
 * pairs and the results) */
#define ASC_IR_LINALG_MAXARGS (3 + 4 * 17)

/* gemm_exact's aux (printed `, flags` after its operands) */
enum { ASC_GEMM_ACCUMULATE = 1 << 0, ASC_GEMM_BLAS_FIRST = 1 << 1 };

const char *asc__irop_name(int op);
int asc__irop_nargs(int op);   /* -1: variable */
unsigned asc__irop_flags(int op);

/* Math intrinsics (CALL's aux). */
#define ASC_IR_INTRINSICS(X)                                                 \
  X(SIN, "sin", 1) X(COS, "cos", 1) X(TAN, "tan", 1) X(ASIN, "asin", 1)      \
  X(ACOS, "acos", 1) X(ATAN, "atan", 1) X(ATAN2, "atan2", 2)                 \
  X(SINH, "sinh", 1) X(COSH, "cosh", 1) X(TANH, "tanh", 1)                   \
  X(EXP, "exp", 1) X(EXP2, "exp2", 1) X(EXPM1, "expm1", 1)                   \
  X(LOG, "log", 1) X(LOG2, "log2", 1) X(LOG10, "log10", 1)                   \
  X(LOG1P, "log1p", 1) X(SQRT, "sqrt", 1) X(CBRT, "cbrt", 1)                 \
  X(FLOOR, "floor", 1) X(CEIL, "ceil", 1) X(TRUNC, "trunc", 1)               \
  X(ROUND, "round", 1) X(FABS, "fabs", 1) X(ERF, "erf", 1)                   \
  X(ERFC, "erfc", 1) X(FMA, "fma", 3) X(HYPOT, "hypot", 2)                   \
  X(TGAMMA, "tgamma", 1) X(LGAMMA, "lgamma", 1)                              \
  X(COPYSIGN, "copysign", 2) X(FMOD, "fmod", 2) X(ISNAN, "isnan", 1)         \
  X(ISINF, "isinf", 1) X(ISFINITE, "isfinite", 1)                           \
  /* complex: cmplx(re, im) of two floats; the parts, conjugate, modulus \
   * and argument of a complex */                                            \
  X(CMPLX, "cmplx", 2) X(CREAL, "creal", 1) X(CIMAG, "cimag", 1)            \
  X(CONJ, "conj", 1) X(CABS, "cabs", 1) X(CARG, "carg", 1)                  \
  /* complex only (cmath): inverse hyperbolic functions; rect(r, phi) of  \
   * two float64s, CPython's cmath.rect */                                  \
  X(ASINH, "asinh", 1) X(ACOSH, "acosh", 1) X(ATANH, "atanh", 1)            \
  X(RECT, "rect", 2)                                                         \
  /* complex a / b as numpy's arrays divide (div: as CPython divides) */    \
  X(CDIV, "cdiv", 2)

typedef enum asc__irintr {
#define X(id, name, n) ASC_INTR_##id,
  ASC_IR_INTRINSICS(X)
#undef X
  ASC_INTR_COUNT
} asc__irintr;

const char *asc__intr_name(int id);
int asc__intr_nargs(int id);
int asc__intr_lookup(const char *name, size_t len);   /* -1 if unknown */

/* ATOMIC's aux. */
enum {
  ASC_ATOM_ADD,
  ASC_ATOM_SUB,
  ASC_ATOM_MIN,
  ASC_ATOM_MAX,
  ASC_ATOM_XCHG,
  ASC_ATOM_COUNT
};
const char *asc__atom_name(int a);

/* Exception kinds for RAISE and TRY's except list: ASC_KEXC_* of
 * kernel_abi.h.  Names as in Python ("ValueError"). */
const char *asc__exc_name(int kind);
int asc__exc_lookup(const char *name, size_t len);   /* -1 if unknown */

/* ------------------------------------------------------------- objects */

enum { ASC_IRV_NONE = 0, ASC_IRV_REG, ASC_IRV_CONST };

typedef struct asc__irval {
  uint8_t kind;
  uint8_t dtype;      /* constants: their scalar type */
  int32_t reg;        /* registers: index in func->regs */
  union {
    int64_t i;        /* bool, signed and unsigned ints (bit pattern) */
    double f;         /* floats, already rounded to dtype */
  } c;
} asc__irval;

typedef struct asc__irreg {
  const char *name;   /* unique in the function, [A-Za-z0-9_.] */
  asc__irtype ty;
  bool param;
  /* Filled by asc__ir_count() (and kept by asc__ir_count_snap /
   * asc__ir_count_redo across a rewrite): */
  int32_t ndefs;
  int32_t nuses;
  const struct asc__irins *def;   /* a definition: the one when ndefs == 1 */
} asc__irreg;

typedef struct asc__irins asc__irins;

typedef struct asc__irblock {
  asc__irins *first, *last;
} asc__irblock;

#define ASC_IR_MAXDIMS 8
/* The longest span of a FOR marked short by the lowering (nimm 1) */
#define ASC_IR_SHORT_SPAN 128
/* The largest row radius of a wavefront (passes/wavefront.c), and the
 * mark of its sweeps (asc__irins.wave). */
#define ASC_WAVE_MAXR 8
#define ASC_WAVE_SWEEP 255
/* RAISE: at most this many i64 values, written in turn where the message
 * says {} (bounds checks report the index and the axis size) */
#define ASC_IR_RAISE_MAXARGS 3
/* Most values a kernel returns (a tuple of that many). */
#define ASC_KMAX_RESULTS 16

typedef struct asc__irred {
  int32_t reg;        /* the register being reduced */
  uint8_t op;         /* ASC_IR_ADD, MUL, MIN, MAX, AND, OR, XOR */
} asc__irred;

struct asc__irins {
  asc__irins *prev, *next;
  uint16_t op;
  int32_t line;       /* Python source line; 0 when none */
  int32_t dst;        /* -1 when none */
  int32_t aux;        /* CALL intrinsic, ATOMIC op, RAISE kind, dim axis */
  int32_t nargs;
  asc__irval *args;
  /* LOCAL_ARRAY / SHARED_ARRAY: constant shape.  FOR, nimm 1: the
   * lowering knows the loop spans at most imm[0] (a pairwise sum's leaf,
   * ASC_IR_SHORT_SPAN at most), which the emitter treats as a short loop
   * that needs no poll; LOOP, nimm 1: it runs at most imm[0] times (a
   * walk up or down a pairwise sum's tree), no poll either.  Not printed,
   * lost by a text round trip (the loop then gets the polls of any
   * other) */
  int32_t nimm;
  int64_t imm[ASC_IR_MAXDIMS];
  const char *str;    /* RAISE message (raw bytes, escaped on output); with
                       * args, each {} stands for the next arg's value */
  /* FOR: unroll request (static_range) */
  bool unroll;
  /* FOR, PFOR, LOOP: lowered from the kernel's own `for` or `while`
   * statement (or asc.parallel_for), not made by the lowering of an
   * operation (asc__ir_work_bounded reads it; copies keep it).  Not
   * printed. */
  bool user;
  /* FOR: 1 + the radius R of a wavefront (passes/wavefront.c: its body's
   * loops are sweeps run as one wavefront over rows), 0 when none; FOR or
   * PFOR: ASC_WAVE_SWEEP when a sweep of such a loop (other passes leave
   * it whole: it runs one row at a time) */
  uint8_t wave;
  /* PFOR reductions */
  int32_t nred;
  asc__irred *red;
  /* TRY, EXCMATCH: except kinds as a bit set of ASC_KEXC_* (bit
   * EXCEPTION: all, bit ARITHMETIC_ERROR: also ZeroDivision and Overflow);
   * TRY: has_except / has_finally say which handlers exist. */
  uint32_t exc_mask;
  bool has_except, has_finally;
  /* IF: then, else.  FOR/PFOR/LOOP/CRITICAL: body.  TRY: body, except,
   * finally. */
  asc__irblock body[3];
  /* A pass's remark about this instruction (lines split at '\n'),
   * printed as `; ...` comments above it; NULL when none. */
  const char *note;
};

typedef struct asc__irfunc {
  const char *name;        /* kernel name (user text: never emitted raw) */
  const char *file;        /* Python source file, for the module table */
  int32_t nparams;
  int32_t *params;         /* register indices */
  /* For each parameter (in params' order), dim and stride and axis, the
   * first register holding that value (asc__ir_canon), -1 when none;
   * 2 * ASC_IR_MAXDIMS per parameter.  Computed from the counts by the
   * first asc__ir_canon after asc__ir_count (pfirst_ok), kept by
   * asc__ir_count_redo. */
  int32_t *pfirst;
  bool pfirst_ok;
  int32_t nresults;        /* values the kernel returns (result ops) */
  asc__irreg *regs;
  int32_t nregs, capregs;
  asc__irblock body;
  uint32_t next_tmp;       /* for fresh register names */
  /* Register names as an open-addressing set of register index + 1 (0:
   * free), so asc__ir_reg makes a name unique in O(1), not O(nregs). */
  int32_t *names;
  int32_t capnames;
  /* Tensor parameters may share memory (a launch passed overlapping
   * arrays): no restrict in C, no automatic parallelisation.  Text form:
   * `kernel @k(...) may_alias { ... }`. */
  bool may_alias;
  /* ASC_FASTMATH_* bits the kernel is compiled with (passes that reorder
   * float operations read it).  Text form: `fastmath(reassoc,nsz)` after
   * the parameters. */
  unsigned fastmath;
  /* The kernel reads asc.get_block_idx() or get_block_num() (itself or in
   * a helper it calls), even where the read is later found dead: else it
   * is not SPMD code (ASC_KERNEL_NOT_SPMD).  Set by lowering, and by the
   * parser at a block_idx or block_num instruction; not in the text form. */
  bool reads_block;
} asc__irfunc;

typedef struct asc__irmodule {
  asc__irfunc **funcs;
  int32_t nfuncs, capfuncs;
} asc__irmodule;

/* ----------------------------------------------------------- building */

asc__irmodule *asc__ir_module_new(asc__cctx *c);
void asc__ir_module_add(asc__cctx *c, asc__irmodule *m, asc__irfunc *f);
asc__irfunc *asc__ir_func_new(asc__cctx *c, const char *name);

/* A new register.  hint may be NULL; the name is made unique. */
int32_t asc__ir_reg(asc__cctx *c, asc__irfunc *f, asc__irtype ty,
                    const char *hint);
int32_t asc__ir_param(asc__cctx *c, asc__irfunc *f, asc__irtype ty,
                      const char *name);

asc__irval asc__irv_reg(int32_t r);
asc__irval asc__irv_int(int dtype, int64_t v);
asc__irval asc__irv_float(int dtype, double v);
/* The value's scalar type (registers: looked up in f). */
int asc__irv_dtype(const asc__irfunc *f, asc__irval v);
bool asc__irv_eq(asc__irval a, asc__irval b);

/* A new instruction, not yet in a block. */
asc__irins *asc__ir_ins(asc__cctx *c, int op, int32_t dst, int nargs,
                        int32_t line);
void asc__ir_append(asc__irblock *b, asc__irins *i);
void asc__ir_insert_before(asc__irblock *b, asc__irins *pos, asc__irins *i);
void asc__ir_remove(asc__irblock *b, asc__irins *i);
/* Moves all of src's instructions before pos (at the end when NULL). */
void asc__ir_splice(asc__irblock *b, asc__irins *pos, asc__irblock *src);
int asc__ir_nregions(const asc__irins *i);

/* Builders (build.c).  asc__ir_bin and asc__ir_un append `%d = op x, y`
 * (a comparison's d is bool) or `%d = op x` to b and return d, a fresh
 * register named after hint (the _named forms; NULL: a temporary). */
int32_t asc__ir_bin(asc__cctx *c, asc__irfunc *f, asc__irblock *b, int op,
                    int dtype, asc__irval x, asc__irval y, int32_t line);
int32_t asc__ir_un(asc__cctx *c, asc__irfunc *f, asc__irblock *b, int op,
                   int dtype, asc__irval x, int32_t line);
int32_t asc__ir_bin_named(asc__cctx *c, asc__irfunc *f, asc__irblock *b,
                          int op, int dtype, asc__irval x, asc__irval y,
                          const char *hint, int32_t line);
int32_t asc__ir_un_named(asc__cctx *c, asc__irfunc *f, asc__irblock *b,
                         int op, int dtype, asc__irval x, const char *hint,
                         int32_t line);
/* A new `for %iv = lo, hi, step` with an empty body, not in a block. */
asc__irins *asc__ir_for(asc__cctx *c, int32_t iv, asc__irval lo,
                        asc__irval hi, asc__irval step, int32_t line);
/* A new `%r:tensor<dt,1,contig> = local_array [n]` (r a fresh register
 * named after hint), not in a block. */
asc__irins *asc__ir_local_array(asc__cctx *c, asc__irfunc *f, int dt,
                                int64_t n, const char *hint, int32_t line);

/* Deep copy of an instruction (and its regions). */
asc__irins *asc__ir_clone(asc__cctx *c, const asc__irins *i);
/* A copy of loop L (not in a block, no note) with a fresh induction
 * register, renamed at every depth of its body: an induction belongs to
 * one loop. */
asc__irins *asc__ir_clone_loop(asc__cctx *c, asc__irfunc *f,
                               const asc__irins *L);
/* A copy of the instructions first .. last of one block (last NULL: to
 * the block's end), regions included, in which every register defined
 * inside gets a new register and its uses the new name.  map (scratch,
 * 1 + the new register; 0 keeps) may come with renames set by the caller,
 * which rename uses and are not defined again; it holds every rename
 * after.  Notes of the copied instructions are dropped. */
asc__irblock asc__ir_clone_fresh(asc__cctx *c, asc__irfunc *f,
                                 const asc__irins *first,
                                 const asc__irins *last, asc__regtab *map);

/* Recounts every register's ndefs / nuses / def. */
void asc__ir_count(asc__irfunc *f);
/* Keeping the counts current when one instruction is rewritten, in
 * O(size of what changed) instead of a recount of the function: a pass
 * that looks at every loop and rewrites many would otherwise cost
 * O(loops x function).  The snapshot records what instruction i (with its
 * regions) adds to the counts before the rewrite; asc__ir_count_redo takes
 * that back and adds the instructions now between prev and next in b
 * (prev NULL: from b's start; next NULL: to its end), which must hold all
 * that the rewrite changed. */
typedef struct asc__ircount_snap {
  struct asc__ircount_ent *e;
  int32_t n, cap;
} asc__ircount_snap;
void asc__ir_count_snap(asc__cctx *c, asc__ircount_snap *s,
                        const asc__irins *i);
void asc__ir_count_redo(asc__cctx *c, asc__irfunc *f,
                        const asc__ircount_snap *s, const asc__irblock *b,
                        const asc__irins *prev, const asc__irins *next);
/* The register that stands for r's value as a symbol: when r is the one
 * definition of `dim` or `stride` of a parameter's axis, the first
 * register (lowest number) that is too, else r.  Valid while the counts
 * are. */
int32_t asc__ir_canon(const asc__irfunc *f, int32_t r);

/* ------------------------------------------------------- text form */

/* Prints a module or one function in the text form of docs/ir.md. */
void asc__ir_print_module(asc__buf *out, const asc__irmodule *m);
void asc__ir_print_func(asc__buf *out, const asc__irfunc *f);
/* Parses the text form; errors are diagnostics against (c->text) when
 * text is c->text, else reported with IR line numbers, and unwind. */
asc__irmodule *asc__ir_parse(asc__cctx *c, const char *text, size_t len);

/* Checks structure and types; an inconsistency is an internal error that
 * unwinds, naming the pass that ran last (when not NULL). */
void asc__ir_verify(asc__cctx *c, const asc__irfunc *f, const char *after);

/* Constant folding helpers shared by passes: true when the operation on
 * constant operands has a value, stored in *out. */
bool asc__ir_eval(int op, int aux, int dtype, int src_dtype,
                  const asc__irval *args, int nargs, asc__irval *out);
/* Rounds a float to dtype (f16 / bf16 / f32 / f64), and wraps an integer to
 * dtype's width. */
asc__irval asc__irv_normalize(asc__irval v);

/* ------------------------------------------------ walks and queries (ir_walk.c) */
/* Replaces every use of register `from` by v. */
void asc__ir_replace_uses(asc__irfunc *f, int32_t from, asc__irval v);
/* True when i may raise at run time (integer // and % by a possibly-zero
 * divisor, int ** with a possibly-negative exponent, float -> int). */
bool asc__ir_may_trap(const asc__irfunc *f, const asc__irins *i);
/* True when b holds a break or continue of the loop whose body b is
 * (not one of a nested loop). */
bool asc__ir_has_loop_exit(const asc__irblock *b);
/* True when b holds a loop (for, pfor, while), at any depth. */
bool asc__ir_has_loop(const asc__irblock *b);
/* Whether every loop of the kernel's own statements (asc__irins.user)
 * runs a number of times that the kernel's arguments bound: each such
 * loop's limits come from extents, integer arguments, constants and the
 * inductions of loops, through integer arithmetic (no while loop, no
 * limit read from memory or made from a float).  The loops that the
 * lowering makes for an operation run over its arrays.  The quick tier
 * (docs/latency.md) needs it: the size of a launch's arguments then
 * bounds its work. */
bool asc__ir_work_bounded(asc__cctx *c, const asc__irfunc *f);
/* Occurrences (defs + uses) of each register inside b, added to cnt. */
void asc__ir_occurrences(const asc__irblock *b, asc__regtab *cnt);
/* Sets to 1 in def the registers assigned inside b. */
void asc__ir_defined_in(const asc__irblock *b, asc__regtab *def);

/* Calls fn(i, ctx) for every instruction of b and of the regions nested in
 * it, in program order: an instruction before the instructions of its
 * regions.  fn may change i's operands but must not unlink or insert
 * instructions.  (b is const so that read-only walks need no cast.) */
void asc__ir_walk(const asc__irblock *b, void (*fn)(asc__irins *i, void *ctx),
                  void *ctx);
/* The number of instructions in b, at any depth. */
int64_t asc__ir_size(const asc__irblock *b);


#endif /* ASC_IR_H */
