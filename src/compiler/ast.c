/*
 * Names of AST operators and node kinds, for messages and dumps.
 */
#include "ast.h"

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
      "binary", "boolop", "compare", "ifexp", "lambda",
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
