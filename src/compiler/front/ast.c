/*
 * Names of AST operators and node kinds, for messages and dumps.
 */
#include "compiler/front/ast.h"

const char *asc__binop_str(asc__binop op) {
  static const char *const s[] = {
#define X(n, str) str,
      ASC_BINOPS(X)
#undef X
  };
  return (unsigned)op < ASC_ARRAY_SIZE(s) ? s[op] : "?";
}

const char *asc__unop_str(asc__unop op) {
  static const char *const s[] = {
#define X(n, str) str,
      ASC_UNOPS(X)
#undef X
  };
  return (unsigned)op < ASC_ARRAY_SIZE(s) ? s[op] : "?";
}

const char *asc__cmpop_str(asc__cmpop op) {
  static const char *const s[] = {
#define X(n, str) str,
      ASC_CMPOPS(X)
#undef X
  };
  return (unsigned)op < ASC_ARRAY_SIZE(s) ? s[op] : "?";
}

const char *asc__expr_kind_name(asc__expr_kind k) {
  static const char *const s[] = {
      "name",  "int",   "float",  "bool",   "none",    "str",
      "tuple", "attr",  "subscript", "slice", "call",  "unary",
      "binary", "boolop", "compare", "ifexp", "lambda", "comprehension",
  };
  _Static_assert(ASC_ARRAY_SIZE(s) == ASC_EXPR_COUNT, "expr names");
  return (unsigned)k < ASC_ARRAY_SIZE(s) ? s[k] : "?";
}

const char *asc__stmt_kind_name(asc__stmt_kind k) {
  static const char *const s[] = {
      "expr",   "assign", "augassign", "annassign", "if",    "for",
      "while",  "break",  "continue",  "return",    "pass",  "assert",
      "raise",  "try",    "with",      "def",
  };
  _Static_assert(ASC_ARRAY_SIZE(s) == ASC_STMT_COUNT, "stmt names");
  return (unsigned)k < ASC_ARRAY_SIZE(s) ? s[k] : "?";
}

const asc__builtin *asc__expr_builtin(const asc__ast_expr *e) {
  if (e == NULL)
    return NULL;
  if (e->kind == ASC_EXPR_ATTR)
    return e->u.attr.builtin;
  if (e->kind == ASC_EXPR_NAME && e->u.name.sym != NULL &&
      e->u.name.sym->kind == ASC_SYM_BUILTIN)
    return e->u.name.sym->u.builtin;
  return NULL;
}

bool asc__expr_int_literal(const asc__ast_expr *e, int64_t *v) {
  if (e->kind == ASC_EXPR_INT && e->u.ival <= (uint64_t)INT64_MAX) {
    *v = (int64_t)e->u.ival;
    return true;
  }
  if (e->kind == ASC_EXPR_UNARY && e->u.unary.op == ASC_UN_NEG &&
      e->u.unary.operand->kind == ASC_EXPR_INT &&
      e->u.unary.operand->u.ival <= (uint64_t)INT64_MAX) {
    *v = -(int64_t)e->u.unary.operand->u.ival;
    return true;
  }
  return false;
}

bool asc__expr_via_asc(const asc__ast_expr *func) {
  return func != NULL && func->kind == ASC_EXPR_ATTR &&
         func->u.attr.value->kind == ASC_EXPR_NAME &&
         func->u.attr.value->u.name.sym != NULL &&
         func->u.attr.value->u.name.sym->kind == ASC_SYM_MODULE &&
         (func->u.attr.value->u.name.sym->u.module == ASC_NS_ASC ||
          func->u.attr.value->u.name.sym->u.module == ASC_NS_NP);
}

bool asc__expr_via_module(const asc__ast_expr *func, asc__namespace ns) {
  return func != NULL && func->kind == ASC_EXPR_ATTR &&
         func->u.attr.value->kind == ASC_EXPR_NAME &&
         func->u.attr.value->u.name.sym != NULL &&
         func->u.attr.value->u.name.sym->kind == ASC_SYM_MODULE &&
         func->u.attr.value->u.name.sym->u.module == ns;
}

bool asc__expr_via_cmath(const asc__ast_expr *func) {
  return asc__expr_via_module(func, ASC_NS_CMATH);
}
