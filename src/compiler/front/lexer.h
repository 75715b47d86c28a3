/*
 * Tokens of the kernel language (Python's lexical rules): the lexer turns the
 * whole source into an array of tokens in the arena, with NEWLINE, INDENT
 * and DEDENT made explicit as in CPython's tokenizer, so the parser never
 * looks at whitespace.
 */
#ifndef ASC_LEXER_H
#define ASC_LEXER_H

#include <stdint.h>

#include "compiler/cctx.h"

/* X(ID, "spelling") for punctuation and keywords. */
#define ASC_PUNCTS(X)                                                          \
  X(LPAR, "(") X(RPAR, ")") X(LSQB, "[") X(RSQB, "]") X(LBRACE, "{")          \
  X(RBRACE, "}") X(COLON, ":") X(COMMA, ",") X(SEMI, ";") X(DOT, ".")         \
  X(PLUS, "+") X(MINUS, "-") X(STAR, "*") X(SLASH, "/") X(DSLASH, "//")       \
  X(PERCENT, "%") X(DSTAR, "**") X(AT, "@") X(LSHIFT, "<<") X(RSHIFT, ">>")   \
  X(AMPER, "&") X(VBAR, "|") X(CIRCUMFLEX, "^") X(TILDE, "~") X(LESS, "<")    \
  X(GREATER, ">") X(EQEQUAL, "==") X(NOTEQUAL, "!=") X(LESSEQUAL, "<=")       \
  X(GREATEREQUAL, ">=") X(EQUAL, "=") X(RARROW, "->") X(PLUSEQUAL, "+=")      \
  X(MINEQUAL, "-=") X(STAREQUAL, "*=") X(SLASHEQUAL, "/=")                    \
  X(DSLASHEQUAL, "//=") X(PERCENTEQUAL, "%=") X(DSTAREQUAL, "**=")            \
  X(ATEQUAL, "@=") X(LSHIFTEQUAL, "<<=") X(RSHIFTEQUAL, ">>=")                \
  X(AMPEREQUAL, "&=") X(VBAREQUAL, "|=") X(CIRCUMFLEXEQUAL, "^=")             \
  X(COLONEQUAL, ":=") X(ELLIPSIS, "...")

#define ASC_KEYWORDS(X)                                                        \
  X(FALSE, "False") X(NONE, "None") X(TRUE, "True") X(AND, "and")             \
  X(AS, "as") X(ASSERT, "assert") X(ASYNC, "async") X(AWAIT, "await")         \
  X(BREAK, "break") X(CLASS, "class") X(CONTINUE, "continue") X(DEF, "def")   \
  X(DEL, "del") X(ELIF, "elif") X(ELSE, "else") X(EXCEPT, "except")           \
  X(FINALLY, "finally") X(FOR, "for") X(FROM, "from") X(GLOBAL, "global")     \
  X(IF, "if") X(IMPORT, "import") X(IN, "in") X(IS, "is") X(LAMBDA, "lambda") \
  X(NONLOCAL, "nonlocal") X(NOT, "not") X(OR, "or") X(PASS, "pass")           \
  X(RAISE, "raise") X(RETURN, "return") X(TRY, "try") X(WHILE, "while")       \
  X(WITH, "with") X(YIELD, "yield")

typedef enum asc__tok_kind {
  ASC_TK_EOF,
  ASC_TK_NEWLINE,
  ASC_TK_INDENT,
  ASC_TK_DEDENT,
  ASC_TK_NAME,     /* v.name */
  ASC_TK_INT,      /* v.ival */
  ASC_TK_FLOAT,    /* v.fval */
  ASC_TK_STR,      /* v.str: decoded; adjacent literals are separate tokens */
#define X(id, s) ASC_TK_##id,
  ASC_PUNCTS(X)
#undef X
#define X(id, s) ASC_TK_KW_##id,
  ASC_KEYWORDS(X)
#undef X
  ASC_TK_COUNT
} asc__tok_kind;

/* Literal forms that are valid Python but not kernel code: the parser
 * rejects them in kernels and ignores them in module-level host code. */
enum {
  ASC_TOKF_FSTRING = 1, /* f"..." */
  ASC_TOKF_BYTES = 2,   /* b"..." */
  ASC_TOKF_IMAG = 4     /* 3j */
};

typedef struct asc__token {
  asc__tok_kind kind;
  unsigned flags;         /* ASC_TOKF_* */
  asc__loc loc;
  size_t offset;          /* byte offset of the token in the source */
  size_t len;             /* length of its spelling */
  union {
    const char *name;     /* NUL-terminated, in the arena */
    uint64_t ival;
    double fval;
    struct {
      const char *s;      /* NUL-terminated; may hold NULs (see len) */
      size_t len;
    } str;
  } v;
} asc__token;

/* Tokenises c->text.  Errors are reported through c and the offending
 * characters skipped.  The array always ends with EOF, preceded by the
 * last line's NEWLINE (if it had tokens) and a DEDENT per open block. */
asc__token *asc__lex(asc__cctx *c, int *ntokens);

/* "NAME", "'('", "'if'", "INDENT", ... for messages and dumps. */
const char *asc__tok_kind_name(asc__tok_kind k);
/* The spelling of punctuation and keywords; NULL for other kinds. */
const char *asc__tok_spelling(asc__tok_kind k);

/* s[0..n) as a double-quoted C-style string literal. */
void asc__buf_put_quoted(asc__buf *out, const char *s, size_t n);

/* v in the shortest form that reads back exactly, always with a '.' or
 * an exponent ("1.0", "0.1", "1e+300", "inf", "nan"). */
void asc__buf_put_double(asc__buf *out, double v);

/* One line per token: "line:col KIND value". */
void asc__dump_tokens(const asc__token *toks, int n, asc__buf *out);

#endif /* ASC_LEXER_H */
