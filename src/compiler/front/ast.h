/*
 * The abstract syntax tree of a kernel source file.
 *
 * The parser builds it (every node carries the file:line:col of its first
 * token), the resolver fills the symbol slots (asc__sym *, builtin and callee
 * pointers, the kernel/helper classification), type inference fills the
 * `type` slots, lowering reads it.  All nodes live in the compilation arena.
 *
 *   module ─┬─ imports        import asc / import pyasc as asc / from ...
 *           ├─ consts         TILE = 64            (values frozen)
 *           ├─ classes        class P: x: asc.float32; y: asc.float32
 *           └─ funcs          @asc.kernel / @asc.func / undecorated (ignored)
 *                 └─ body: stmt* ─ expr*
 *
 * Lists are (pointer array, count) pairs.  `elif` is an If in the orelse of
 * the previous If; `a = b = 0` is one Assign with two targets; a lambda is an
 * asc__ast_func of kind ASC_FUNC_LAMBDA whose body is one Return (lambda i:
 * expr) or one Assign (lambda i: c[i] = a[i] + b[i], parallel bodies only).
 */
#ifndef ASC_AST_H
#define ASC_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler/front/builtins.h"
#include "compiler/cctx.h"

struct asc__type;                 /* owned by type inference (types.h) */

typedef struct asc__ast_expr asc__ast_expr;
typedef struct asc__ast_stmt asc__ast_stmt;
typedef struct asc__ast_func asc__ast_func;
typedef struct asc__ast_class asc__ast_class;
typedef struct asc__ast_module asc__ast_module;
typedef struct asc__sym asc__sym;

/* ------------------------------------------------------------- operators */

#define ASC_BINOPS(X)                                                         \
  X(ADD, "+") X(SUB, "-") X(MUL, "*") X(DIV, "/") X(FLOORDIV, "//")           \
  X(MOD, "%") X(POW, "**") X(LSHIFT, "<<") X(RSHIFT, ">>") X(BITAND, "&")     \
  X(BITOR, "|") X(BITXOR, "^") X(MATMUL, "@")
#define ASC_UNOPS(X) X(NEG, "-") X(POS, "+") X(NOT, "not") X(INVERT, "~")
#define ASC_CMPOPS(X)                                                         \
  X(EQ, "==") X(NE, "!=") X(LT, "<") X(LE, "<=") X(GT, ">") X(GE, ">=")       \
  X(IS, "is") X(ISNOT, "is not")

typedef enum asc__binop {
#define X(n, s) ASC_BIN_##n,
  ASC_BINOPS(X)
#undef X
} asc__binop;
typedef enum asc__unop {
#define X(n, s) ASC_UN_##n,
  ASC_UNOPS(X)
#undef X
} asc__unop;
typedef enum asc__cmpop {
#define X(n, s) ASC_CMP_##n,
  ASC_CMPOPS(X)
#undef X
} asc__cmpop;

const char *asc__binop_str(asc__binop op);
const char *asc__unop_str(asc__unop op);
const char *asc__cmpop_str(asc__cmpop op);

/* ------------------------------------------------------------ expressions */

typedef enum asc__expr_kind {
  ASC_EXPR_NAME,      /* u.name */
  ASC_EXPR_INT,       /* u.ival: the literal's value, 0..2^64-1 */
  ASC_EXPR_FLOAT,     /* u.fval */
  ASC_EXPR_BOOL,      /* u.bval: True / False */
  ASC_EXPR_NONE,
  ASC_EXPR_STR,       /* u.str: decoded bytes (messages, docstrings) */
  ASC_EXPR_TUPLE,     /* u.tuple: (a, b), a, b, (), [a, b] */
  ASC_EXPR_ATTR,      /* u.attr: value.attr */
  ASC_EXPR_SUBSCRIPT, /* u.sub: value[index]; t[i, j] has a Tuple index */
  ASC_EXPR_SLICE,     /* u.slice: only inside a subscript; resolver rejects */
  ASC_EXPR_CALL,      /* u.call */
  ASC_EXPR_UNARY,     /* u.unary */
  ASC_EXPR_BINARY,    /* u.binary */
  ASC_EXPR_BOOLOP,    /* u.boolop: a and b / a or b (left-assoc, binary) */
  ASC_EXPR_COMPARE,   /* u.cmp: a < b <= c: ops[n], operands[n + 1] */
  ASC_EXPR_IFEXP,     /* u.ifexp: then if cond else orelse */
  ASC_EXPR_LAMBDA,    /* u.lambda.fn */
  ASC_EXPR_COMP,      /* comp: [e for x in it], (e for x in it), sum(...) */
  ASC_EXPR_COUNT
} asc__expr_kind;

/* name=value in a call. */
typedef struct asc__ast_keyword {
  asc__loc loc;
  const char *name;
  asc__ast_expr *value;
} asc__ast_keyword;

/* `for target in iter if cond` of a comprehension: target is a Name or a
 * Tuple of them, each bound to a resolver symbol the comprehension owns;
 * cond (NULL without one; several `if`s joined by `and`) keeps an element
 * only where it holds, and must be a compile-time constant for each
 * element, since the comprehension is unrolled. */
typedef struct asc__ast_compfor {
  asc__ast_expr *target;
  asc__ast_expr *iter;
  asc__ast_expr *cond;
} asc__ast_compfor;

/* elt for ... for ...: the clauses nest left to right, as in Python. */
typedef struct asc__ast_comp {
  asc__ast_expr *elt;
  asc__ast_compfor *fors;
  int nfors;
  bool list;                /* [...]: a list (else a tuple or generator) */
  bool sum;                 /* sum(...): the elements added, from 0 */
  /* np.concatenate(x) and the stacks: x made `v for v in x`; when x is
   * no tuple the function reports it, not the comprehension */
  bool quiet;
} asc__ast_comp;

struct asc__ast_expr {
  asc__expr_kind kind;
  asc__loc loc;
  struct asc__type *type;   /* slot for type inference; NULL until then */
  /* types: a Python int computed at run time (a name, an operation, a
   * call) that meets a narrower integer type: lowering converts its
   * value to fit, raising numpy's OverflowError when it is out of
   * bounds.  NULL for every other expression. */
  struct asc__type *fit;
  int32_t depth;            /* height of this subtree (bounded by parser) */
  /* COMP: the comprehension.  Inference unrolls it for the signature it
   * types (a Tuple of the elements, or their sum) and keeps comp, so that
   * the next signature or helper instance unrolls it afresh. */
  struct asc__ast_comp *comp;
  bool imag;                /* FLOAT: an imaginary literal (2.5j: 0+2.5i) */
  union {
    struct {
      const char *id;
      asc__sym *sym;        /* resolver: what the name refers to */
    } name;
    uint64_t ival;
    double fval;
    bool bval;
    struct {
      const char *s;        /* NUL-terminated; may contain NULs (len) */
      size_t len;
    } str;
    struct {
      asc__ast_expr **elts;
      int n;
      /* [a, b]: a list display, read as a tuple of fixed length (kernels
       * have no growable lists) */
      bool list;
    } tuple;
    struct {
      asc__ast_expr *value;
      const char *attr;
      asc__loc attr_loc;
      /* resolver: value names the asc or math module and attr is one of
       * its builtins (asc.sin, asc.float32, math.pi); NULL otherwise
       * (t.shape, t.ndim, p.x on a struct). */
      const asc__builtin *builtin;
    } attr;
    struct {
      asc__ast_expr *value;
      asc__ast_expr *index;
    } sub;
    struct {
      asc__ast_expr *lower, *upper, *step;  /* each may be NULL */
      bool ellipsis;                        /* `...`: the axes not named */
    } slice;
    struct {
      asc__ast_expr *func;
      asc__ast_expr **args;       /* positional, as written */
      int nargs;
      asc__ast_keyword *kws;      /* keyword arguments, as written */
      int nkws;
      /* resolver: the call's target, at most one set.  builtin for
       * asc.*, math.*, min/max/abs/range/float/int/bool, exception
       * classes; callee for @asc.func helpers; cls for struct
       * constructors. */
      const asc__builtin *builtin;
      asc__ast_func *callee;
      asc__ast_class *cls;
      /* resolver: arguments in parameter order, keywords folded in and
       * helper defaults filled; an optional builtin argument that was not
       * given is NULL.  nrargs is the builtin's max_args (or the number
       * given for variadic builtins, or the helper's parameter count). */
      asc__ast_expr **rargs;
      int nrargs;
      /* `x.shape = v`, rewritten into x = x.reshape(v): numpy's error
       * when it cannot be a view */
      bool set_shape;
    } call;
    struct {
      asc__unop op;
      asc__ast_expr *operand;
    } unary;
    struct {
      asc__binop op;
      asc__ast_expr *lhs, *rhs;
    } binary;
    struct {
      bool is_and;               /* and / or */
      asc__ast_expr *lhs, *rhs;
    } boolop;
    struct {
      asc__cmpop *ops;
      asc__ast_expr **operands;  /* n + 1 */
      int n;
    } cmp;
    struct {
      asc__ast_expr *cond, *then, *orelse;
    } ifexp;
    struct {
      asc__ast_func *fn;
    } lambda;
  } u;
};

/* ------------------------------------------------------------- statements */

typedef struct asc__ast_block {
  asc__ast_stmt **stmts;
  int n;
} asc__ast_block;

typedef enum asc__stmt_kind {
  ASC_STMT_EXPR,      /* u.expr: a call, a docstring */
  ASC_STMT_ASSIGN,    /* u.assign */
  ASC_STMT_AUGASSIGN, /* u.aug */
  ASC_STMT_ANNASSIGN, /* u.ann */
  ASC_STMT_IF,        /* u.if_ */
  ASC_STMT_FOR,       /* u.for_ */
  ASC_STMT_WHILE,     /* u.while_ */
  ASC_STMT_BREAK,
  ASC_STMT_CONTINUE,
  ASC_STMT_RETURN,    /* u.ret */
  ASC_STMT_PASS,
  ASC_STMT_ASSERT,    /* u.assert_ */
  ASC_STMT_RAISE,     /* u.raise */
  ASC_STMT_TRY,       /* u.try_ */
  ASC_STMT_WITH,      /* u.with */
  ASC_STMT_FUNCDEF,   /* u.funcdef: a nested def (parallel-loop body) */
  ASC_STMT_COUNT
} asc__stmt_kind;

typedef struct asc__ast_handler {
  asc__loc loc;
  asc__ast_expr *type;      /* NULL: bare except; a Name or a Tuple of Names */
  const char *name;         /* `as e`; NULL when absent */
  asc__loc name_loc;
  asc__sym *name_sym;       /* resolver */
  asc__ast_block body;
} asc__ast_handler;

struct asc__ast_stmt {
  asc__stmt_kind kind;
  asc__loc loc;
  union {
    struct {
      asc__ast_expr *value;
    } expr;
    struct {
      /* targets: Name, Tuple (unpacking), Subscript, Attr (struct field);
       * a = b = v has two targets, assigned left to right. */
      asc__ast_expr **targets;
      int ntargets;
      asc__ast_expr *value;
      const char *ufunc; /* `np.add(x, y, out)` rewritten: "add" */
    } assign;
    struct {
      asc__binop op;
      asc__ast_expr *target; /* Name, Subscript or Attr */
      asc__ast_expr *value;
    } aug;
    struct {
      asc__ast_expr *target;      /* Name or Attr */
      asc__ast_expr *annotation;
      asc__ast_expr *value;       /* NULL: declaration only */
    } ann;
    struct {
      asc__ast_expr *cond;
      asc__ast_block body, orelse;  /* elif: one If in orelse */
    } if_;
    struct {
      asc__ast_expr *target;    /* Name (or Tuple, rejected by resolver) */
      asc__ast_expr *iter;      /* a Call */
      asc__ast_block body;
      /* resolver: the loop form and its bounds: ASC_BI_RANGE, ASC_BI_PRANGE
       * or ASC_BI_STATIC_RANGE; start is NULL for range(n), step NULL
       * unless given. */
      asc__builtin_id loop;
      asc__ast_expr *start, *stop, *step;
      /* `for x in a` over an array's first axis: the resolver makes it
       * `for <i> in range(a.shape[0]): x = a[<i>]` (iter is then NULL) */
      bool over_array;
    } for_;
    struct {
      asc__ast_expr *cond;
      asc__ast_block body;
    } while_;
    struct {
      asc__ast_expr *value;     /* NULL: bare return */
    } ret;
    struct {
      asc__ast_expr *test;
      asc__ast_expr *msg;       /* NULL when absent */
    } assert_;
    struct {
      asc__ast_expr *exc;       /* Name or Call of an exception class; NULL
                                 * for a bare `raise` (re-raise) */
    } raise;
    struct {
      asc__ast_block body;
      asc__ast_handler *handlers;
      int nhandlers;
      asc__ast_block orelse;    /* else: */
      asc__ast_block finalbody; /* finally: */
    } try_;
    struct {
      asc__ast_expr *ctx;       /* asc.critical() */
      asc__ast_block body;
    } with;
    struct {
      asc__ast_func *fn;
    } funcdef;
  } u;
};

/* -------------------------------------------------------------- functions */

typedef enum asc__func_kind {
  ASC_FUNC_PLAIN,     /* module-level def without a kernel decorator:
                       * ignored (warning) unless resolution finds a use */
  ASC_FUNC_KERNEL,    /* @asc.kernel / @asc.jit */
  ASC_FUNC_HELPER,    /* @asc.func */
  ASC_FUNC_NESTED,    /* def inside a function */
  ASC_FUNC_LAMBDA
} asc__func_kind;

typedef struct asc__ast_param {
  asc__loc loc;
  const char *name;
  asc__ast_expr *annotation;  /* NULL when absent */
  asc__ast_expr *def;         /* default value; NULL when absent */
  asc__sym *sym;              /* resolver */
} asc__ast_param;

/* Options of @asc.kernel(debug=True, boundscheck=True, fastmath=...) and
 * @asc.func(fastmath=...).  -1: not given; fastmath: ASC_FASTMATH_* bits
 * (True: all of them). */
typedef struct asc__kernel_opts {
  int debug;
  int boundscheck;
  int fastmath;
} asc__kernel_opts;

struct asc__ast_func {
  asc__loc loc;               /* the `def` / `lambda` keyword */
  const char *name;           /* "<lambda>" for lambdas */
  asc__func_kind kind;
  asc__ast_expr **decorators; /* as written */
  int ndecorators;
  asc__kernel_opts opts;
  asc__ast_param *params;
  int nparams;
  asc__ast_expr *returns;     /* -> annotation; NULL when absent */
  asc__ast_block body;
  const char *docstring;      /* NULL when absent */
  asc__ast_func *parent;      /* enclosing function (nested def, lambda) */
  /* Source text of the definition (decorators to the last body line):
   * the kernel cache hashes it. */
  size_t text_begin, text_end;
  /* resolver: every local of this function (parameters first), in order
   * of first definition; names of enclosing functions used here refer to
   * the enclosing function's symbols (sym->owner != this). */
  asc__sym **locals;
  int nlocals;
  /* resolver: helpers this function calls directly, without repeats. */
  asc__ast_func **callees;
  int ncallees;
  /* resolver: the first local of an enclosing function this function
   * reads or writes (NULL: none, so a nested def may be a helper) */
  asc__sym *captures;
  bool has_nested;            /* parser: a def or lambda is nested in it */
  struct asc__type *type;     /* slot for type inference */
};

/* class P: with annotated fields only, no bases, no methods. */
typedef struct asc__ast_field {
  asc__loc loc;
  const char *name;
  asc__ast_expr *annotation;
  asc__ast_expr *def;         /* NULL when absent */
} asc__ast_field;

struct asc__ast_class {
  asc__loc loc;
  const char *name;
  asc__ast_field *fields;
  int nfields;
  const char *docstring;
  /* Why the class is not a struct of scalars (bases, methods, other
   * statements), NULL if it is one.  Host-side classes may live in the
   * same file; using such a class in a kernel is an error. */
  const char *unsupported;
  asc__loc unsupported_loc;
  struct asc__type *type;     /* slot for type inference */
};

/* ------------------------------------------------------------ module level */

typedef struct asc__ast_import {
  asc__loc loc;
  const char *module;        /* "asc", "pyasc", "math", "numpy", ... */
  const char *name;          /* from M import NAME; NULL for import M */
  const char *asname;        /* the name bound (always set) */
} asc__ast_import;

/* A module-level NAME = constant expression.  The resolver folds it; a
 * caller-supplied global of the same name replaces the value. */
typedef struct asc__ast_const {
  asc__loc loc;
  const char *name;
  asc__ast_expr *annotation; /* NAME: int = 3; NULL when absent */
  asc__ast_expr *value;
  /* resolver: the frozen value (weak bool / int64 / float64), or
   * dtype == ascDataTypeCount when the value is not a compile-time scalar
   * constant (using such a name in a kernel is an error). */
  ascScalar folded;
  bool from_caller;          /* value came from ascGlobalValue */
  asc__sym *sym;
} asc__ast_const;

struct asc__ast_module {
  const char *docstring;
  asc__ast_import *imports;
  int nimports;
  asc__ast_const **consts;
  int nconsts;
  asc__ast_class **classes;
  int nclasses;
  asc__ast_func **funcs;     /* module-level defs, in source order */
  int nfuncs;
};

/* ---------------------------------------------------------------- symbols */

typedef enum asc__sym_kind {
  ASC_SYM_PARAM,      /* u.index: parameter position; owner set */
  ASC_SYM_LOCAL,      /* owner set; u.index: position in owner->locals */
  ASC_SYM_CONST,      /* u.cnst: module-level or caller-supplied constant */
  ASC_SYM_FUNC,       /* u.func: a kernel or helper (module level) or a
                       * nested def (local to its parent) */
  ASC_SYM_CLASS,      /* u.cls: a struct class */
  ASC_SYM_MODULE,     /* u.module: asc / math bound by an import */
  ASC_SYM_BUILTIN,    /* u.builtin: range, min, ValueError, from asc
                       * import prange, ... */
  ASC_SYM_EXC_VAR,    /* except E as e: owner set */
  ASC_SYM_COMP_VAR,   /* a comprehension's target: owner set, in no
                       * function's locals; inference replaces each use by
                       * the element it stands for */
  ASC_SYM_FOREIGN     /* import numpy as np: any use is an error */
} asc__sym_kind;

struct asc__sym {
  asc__sym_kind kind;
  const char *name;
  asc__loc loc;               /* definition (first assignment) */
  asc__ast_func *owner;       /* PARAM, LOCAL, EXC_VAR, nested FUNC */
  bool captured;              /* read or written from a nested function */
  bool bound;                 /* resolver: assigned at a statement seen */
  bool read;                  /* resolver: read somewhere (a name's load,
                               * or an augmented assignment's target) */
  /* resolver: the variable this local follows when the function's own
   * body rebinds the name (x = ...; x = x.astype(...)).  Inference gives
   * both one type unless an array is involved and the types differ
   * (split), as Python's names may then change type. */
  asc__sym *prev;
  bool split;
  struct asc__type *type;     /* slot for type inference */
  union {
    int index;
    asc__ast_const *cnst;
    asc__ast_func *func;
    asc__ast_class *cls;
    asc__namespace module;    /* ASC_NS_ASC, ASC_NS_MATH or ASC_NS_NP */
    const asc__builtin *builtin;
    const asc__ast_import *import; /* FOREIGN: the import that bound it */
  } u;
};

/* -------------------------------------------------------------- utilities */

const char *asc__expr_kind_name(asc__expr_kind k);
/* The builtin an expression names (a name bound to a builtin, or asc.X /
 * math.X); NULL otherwise, and for NULL. */
const asc__builtin *asc__expr_builtin(const asc__ast_expr *e);
/* True if func is an attribute of the `asc` module (asc.sqrt), not of
 * `math` (math.sqrt) nor a bare name: type inference and lowering treat
 * the two kinds of math builtin differently. */
bool asc__expr_via_asc(const asc__ast_expr *func);
/* Is func `cmath.X` (Python's cmath: complex results of real arguments)? */
bool asc__expr_via_cmath(const asc__ast_expr *func);
/* Whether the callee func is spelt module.X of that namespace (np.abs). */
bool asc__expr_via_module(const asc__ast_expr *func, asc__namespace ns);
/* An integer literal, possibly negated, that fits int64: its value in *v. */
bool asc__expr_int_literal(const asc__ast_expr *e, int64_t *v);
const char *asc__stmt_kind_name(asc__stmt_kind k);

#endif /* ASC_AST_H */
