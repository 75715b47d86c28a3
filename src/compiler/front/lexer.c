/*
 * Lexer: Python's lexical rules for kernel text.
 *
 * Indentation follows CPython's tokenizer: each logical line's leading
 * whitespace is measured twice, with tabs to multiples of 8 and with tabs as
 * one column; the two measures must order the line against the enclosing
 * blocks the same way, else the indentation depends on the tab size and is
 * rejected (Python's TabError).  Inside brackets and after a backslash
 * newline, lines join and indentation is not measured.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/front/frontend.h"
#include "compiler/front/lexer.h"
#include "compiler/front/nfkc_table.h"

typedef struct lexer {
  asc__cctx *c;
  const char *p, *end;
  const char *line_start;
  int32_t line;                  /* text line, 1-based */
  asc__token *toks;
  int ntoks, cap;
  /* indentation stack: columns with tabs to 8, and with tabs as 1 */
  int indent[ASC_MAX_NESTING + 1];
  int altindent[ASC_MAX_NESTING + 1];
  int nindent;
  /* open brackets */
  char brackets[ASC_MAX_NESTING];
  asc__loc bracket_loc[ASC_MAX_NESTING];
  int nbrackets;
  bool line_has_tokens;          /* a token since the last NEWLINE */
} lexer;

static asc__loc loc_at(lexer *L, const char *p) {
  asc__loc l;
  l.line = L->line + L->c->first_line - 1;
  l.col = (int32_t)(p - L->line_start) + 1;
  return l;
}

static asc__token *push(lexer *L, asc__tok_kind k, const char *start,
                        const char *end) {
  asc__token *t;
  if (L->ntoks == L->cap) {
    int ncap = L->cap ? L->cap * 2 : 256;
    asc__token *n = asc__arena_alloc(L->c, (size_t)ncap * sizeof *n);
    if (L->ntoks)
      memcpy(n, L->toks, (size_t)L->ntoks * sizeof *n);
    L->toks = n;
    L->cap = ncap;
  }
  t = &L->toks[L->ntoks++];
  memset(t, 0, sizeof *t);
  t->kind = k;
  t->loc = loc_at(L, start);
  t->offset = (size_t)(start - L->c->text);
  t->len = (size_t)(end - start);
  if (k != ASC_TK_NEWLINE && k != ASC_TK_INDENT && k != ASC_TK_DEDENT &&
      k != ASC_TK_EOF)
    L->line_has_tokens = true;
  return t;
}

static void newline(lexer *L, const char *nl) {
  L->line++;
  L->line_start = nl + 1;
}

/* ----------------------------------------------------------- spellings */

static const char *const punct_spell[] = {
#define X(id, s) s,
    ASC_PUNCTS(X)
#undef X
};
static const char *const kw_spell[] = {
#define X(id, s) s,
    ASC_KEYWORDS(X)
#undef X
};

const char *asc__tok_spelling(asc__tok_kind k) {
  if (k >= ASC_TK_LPAR && k <= ASC_TK_ELLIPSIS)
    return punct_spell[k - ASC_TK_LPAR];
  if (k >= ASC_TK_KW_FALSE && k < ASC_TK_COUNT)
    return kw_spell[k - ASC_TK_KW_FALSE];
  return NULL;
}

const char *asc__tok_kind_name(asc__tok_kind k) {
  static const char *const quoted[] = {
#define X(id, s) "'" s "'",
      ASC_PUNCTS(X) ASC_KEYWORDS(X)
#undef X
  };
  switch (k) {
  case ASC_TK_EOF: return "end of file";
  case ASC_TK_NEWLINE: return "newline";
  case ASC_TK_INDENT: return "indent";
  case ASC_TK_DEDENT: return "dedent";
  case ASC_TK_NAME: return "name";
  case ASC_TK_INT: return "integer";
  case ASC_TK_FLOAT: return "number";
  case ASC_TK_STR: return "string";
  default:
    if (k >= ASC_TK_LPAR && k < ASC_TK_COUNT)
      return quoted[k - ASC_TK_LPAR];
    return "?";
  }
}

/* ------------------------------------------------------------- helpers */

static bool is_id_start(unsigned char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
         ch >= 0x80;
}
static bool is_id_char(unsigned char ch) {
  return is_id_start(ch) || (ch >= '0' && ch <= '9');
}
static int digit_value(unsigned char ch) {
  if (ch >= '0' && ch <= '9')
    return ch - '0';
  if (ch >= 'a' && ch <= 'z')
    return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'Z')
    return ch - 'A' + 10;
  return 99;
}

/* ------------------------------------------------------------- numbers */

/* Digits of base `base` with single underscores between them; returns the
 * end.  Reports a misplaced underscore. */
static const char *scan_digits(lexer *L, const char *p, int base) {
  const char *start = p;
  while (p < L->end) {
    if (*p == '_') {
      if (p == start || p + 1 >= L->end || digit_value((unsigned char)p[1]) >= base) {
        asc__diag_error(L->c, loc_at(L, p), "invalid decimal literal: "
                        "'_' must separate digits");
        p++;
        while (p < L->end && (*p == '_' || digit_value((unsigned char)*p) < base))
          p++;
        return p;
      }
      p++;
      continue;
    }
    if (digit_value((unsigned char)*p) >= base)
      break;
    p++;
  }
  return p;
}

/* The literal text [s, p) without its '_' separators, NUL-terminated. */
static char *digits(lexer *L, const char *s, const char *p) {
  char *buf = asc__arena_alloc(L->c, (size_t)(p - s) + 1);
  size_t k = 0;
  for (const char *q = s; q < p; q++)
    if (*q != '_')
      buf[k++] = *q;
  buf[k] = '\0';
  return buf;
}

static void lex_number(lexer *L) {
  const char *s = L->p, *p = s;
  asc__loc loc = loc_at(L, s);
  int base = 10;
  bool is_float = false;

  if (*p == '0' && p + 1 < L->end &&
      (p[1] == 'x' || p[1] == 'X' || p[1] == 'o' || p[1] == 'O' ||
       p[1] == 'b' || p[1] == 'B')) {
    char k = (char)(p[1] | 0x20);
    base = k == 'x' ? 16 : k == 'o' ? 8 : 2;
    p += 2;
    if (p < L->end && *p == '_')
      p++;
    if (p >= L->end || digit_value((unsigned char)*p) >= base) {
      asc__diag_error(L->c, loc, "invalid %s literal",
                      base == 16 ? "hexadecimal" : base == 8 ? "octal"
                                                             : "binary");
    } else {
      p = scan_digits(L, p, base);
    }
    if (p < L->end && (digit_value((unsigned char)*p) < 10)) {
      asc__diag_error(L->c, loc_at(L, p), "invalid digit '%c' in %s literal",
                      *p, base == 8 ? "octal" : "binary");
      while (p < L->end && is_id_char((unsigned char)*p))
        p++;
    }
  } else {
    if (*p != '.')
      p = scan_digits(L, p, 10);
    if (p < L->end && *p == '.') {
      is_float = true;
      p++;
      if (p < L->end && digit_value((unsigned char)*p) < 10)
        p = scan_digits(L, p, 10);
    }
    if (p < L->end && (*p == 'e' || *p == 'E')) {
      const char *q = p + 1;
      if (q < L->end && (*q == '+' || *q == '-'))
        q++;
      if (q < L->end && digit_value((unsigned char)*q) < 10) {
        is_float = true;
        p = scan_digits(L, q, 10);
      } else {
        asc__diag_error(L->c, loc_at(L, p), "invalid float literal: "
                        "exponent has no digits");
        p = q;
      }
    }
  }
  if (p < L->end && (*p == 'j' || *p == 'J') && base == 10) {
    /* an imaginary literal: a FLOAT token with its value, flagged */
    char *buf = digits(L, s, p);
    asc__token *t;
    L->p = p + 1;
    t = push(L, ASC_TK_FLOAT, s, L->p);
    t->flags = ASC_TOKF_IMAG;
    t->v.fval = strtod(buf, NULL);
    return;
  }
  if (p < L->end && is_id_char((unsigned char)*p)) {
    asc__diag_error(L->c, loc_at(L, p), "invalid %s literal",
                    base == 16 ? "hexadecimal" : base == 8 ? "octal"
                    : base == 2 ? "binary" : "decimal");
    while (p < L->end && is_id_char((unsigned char)*p))
      p++;
  }

  {
    char *buf = digits(L, s, p);
    asc__token *t;
    L->p = p;
    if (is_float) {
      t = push(L, ASC_TK_FLOAT, s, p);
      t->v.fval = strtod(buf, NULL);
      return;
    }
    t = push(L, ASC_TK_INT, s, p);
    {
      const char *d = base == 10 ? buf : buf + 2;
      uint64_t v = 0;
      bool overflow = false;
      if (base == 10 && d[0] == '0') {
        for (const char *q = d; *q; q++)
          if (*q != '0') {
            asc__diag_error(L->c, loc, "leading zeros in decimal integer "
                            "literals are not permitted; use an 0o prefix "
                            "for octal integers");
            break;
          }
      }
      for (const char *q = d; *q; q++) {
        int dv = digit_value((unsigned char)*q);
        if (dv >= base)
          break;
        if (v > (UINT64_MAX - (uint64_t)dv) / (uint64_t)base)
          overflow = true;
        v = v * (uint64_t)base + (uint64_t)dv;
      }
      if (overflow)
        asc__diag_error(L->c, loc, "integer literal too large (the limit "
                        "is 2**64 - 1)");
      t->v.ival = overflow ? 0 : v;
    }
  }
}

/* ------------------------------------------------------------- strings */

static void put_utf8(char *out, size_t *k, uint32_t cp) {
  if (cp < 0x80) {
    out[(*k)++] = (char)cp;
  } else if (cp < 0x800) {
    out[(*k)++] = (char)(0xC0 | (cp >> 6));
    out[(*k)++] = (char)(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out[(*k)++] = (char)(0xE0 | (cp >> 12));
    out[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*k)++] = (char)(0x80 | (cp & 0x3F));
  } else {
    out[(*k)++] = (char)(0xF0 | (cp >> 18));
    out[(*k)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*k)++] = (char)(0x80 | (cp & 0x3F));
  }
}

/* p is at the prefix or quote.  Decodes escapes unless raw. */
static void lex_string(lexer *L, const char *prefix_end) {
  const char *s = L->p, *p = prefix_end;
  asc__loc loc = loc_at(L, s);
  bool raw = false, bytes = false, fmt = false;
  char q = *p;
  bool triple;
  char *out;
  size_t k = 0;
  int32_t start_line = L->line;

  for (const char *x = s; x < prefix_end; x++) {
    char ch = (char)(*x | 0x20);
    raw |= ch == 'r';
    bytes |= ch == 'b';
    fmt |= ch == 'f';
  }
  triple = L->end - p >= 3 && p[1] == q && p[2] == q;
  p += triple ? 3 : 1;
  /* decoded text is never longer than the source */
  out = asc__arena_alloc(L->c, (size_t)(L->end - p) + 1);
  for (;;) {
    if (p >= L->end || (!triple && (*p == '\n' || *p == '\r'))) {
      if (triple)
        asc__diag_error(L->c, loc, "unterminated triple-quoted string "
                        "literal (detected at line %d)",
                        (int)(L->line + L->c->first_line - 1));
      else
        asc__diag_error(L->c, loc, "unterminated string literal (detected "
                        "at line %d)",
                        (int)(start_line + L->c->first_line - 1));
      break;
    }
    if (*p == q && (!triple || (L->end - p >= 3 && p[1] == q && p[2] == q))) {
      p += triple ? 3 : 1;
      break;
    }
    if (*p == '\n') {
      out[k++] = '\n';
      newline(L, p);
      p++;
      continue;
    }
    if (*p == '\\' && p + 1 < L->end) {
      const char *e = p + 1;
      if (*e == '\n') {               /* line continuation inside a string */
        if (raw) {
          out[k++] = '\\';
          out[k++] = '\n';
        }
        newline(L, e);
        p = e + 1;
        continue;
      }
      if (raw) {
        out[k++] = '\\';
        out[k++] = *e;
        p = e + 1;
        continue;
      }
      p = e + 1;
      switch (*e) {
      case '\\': out[k++] = '\\'; break;
      case '\'': out[k++] = '\''; break;
      case '"': out[k++] = '"'; break;
      case 'a': out[k++] = '\a'; break;
      case 'b': out[k++] = '\b'; break;
      case 'f': out[k++] = '\f'; break;
      case 'n': out[k++] = '\n'; break;
      case 'r': out[k++] = '\r'; break;
      case 't': out[k++] = '\t'; break;
      case 'v': out[k++] = '\v'; break;
      case '0': case '1': case '2': case '3':
      case '4': case '5': case '6': case '7': {
        unsigned v = (unsigned)(*e - '0');
        for (int i = 0; i < 2 && p < L->end && *p >= '0' && *p <= '7'; i++)
          v = v * 8 + (unsigned)(*p++ - '0');
        put_utf8(out, &k, v);
        break;
      }
      case 'x': case 'u': case 'U': {
        int nd = *e == 'x' ? 2 : *e == 'u' ? 4 : 8;
        uint32_t v = 0;
        int i;
        for (i = 0; i < nd && p < L->end && digit_value((unsigned char)*p) < 16; i++)
          v = v * 16 + (uint32_t)digit_value((unsigned char)*p++);
        if (i < nd) {
          asc__diag_error(L->c, loc_at(L, e - 1), "truncated \\%c escape "
                          "in string literal", *e);
        } else if (v > 0x10FFFF) {
          asc__diag_error(L->c, loc_at(L, e - 1), "illegal Unicode "
                          "character in \\U escape");
        } else {
          put_utf8(out, &k, v);
        }
        break;
      }
      case 'N':
        asc__diag_error(L->c, loc_at(L, e - 1), "\\N{...} escapes are not "
                        "supported in kernels");
        break;
      default:                       /* unknown escapes stay as written */
        out[k++] = '\\';
        p = e;
        break;
      }
      continue;
    }
    out[k++] = *p++;
  }
  out[k] = '\0';
  {
    asc__token *t;
    L->p = p;
    t = push(L, ASC_TK_STR, s, p);
    t->loc = loc;   /* where it starts, even if it spans lines */
    t->flags = (fmt ? ASC_TOKF_FSTRING : 0) | (bytes ? ASC_TOKF_BYTES : 0);
    t->v.str.s = out;
    t->v.str.len = k;
  }
}

/* ------------------------------------------------------- indentation */

/* At the start of a logical line outside brackets: measures indentation,
 * skips blank and comment-only lines, emits INDENT/DEDENT. Returns false at
 * end of input. */
static bool begin_line(lexer *L) {
  for (;;) {
    const char *p = L->p;
    int col = 0, alt = 0;
    while (p < L->end) {
      if (*p == ' ') {
        col++;
        alt++;
      } else if (*p == '\t') {
        col = (col / 8 + 1) * 8;
        alt++;
      } else if (*p == '\f') {
        col = alt = 0;
      } else {
        break;
      }
      p++;
    }
    L->p = p;
    if (p >= L->end)
      return false;
    if (*p == '#' || *p == '\n' || *p == '\r' ||
        (*p == '\\' && p + 1 < L->end && p[1] == '\n')) {
      /* blank or comment-only line: no indentation meaning */
      if (*p == '#')
        while (p < L->end && *p != '\n')
          p++;
      if (p < L->end && *p == '\\')
        p++;
      while (p < L->end && *p == '\r')
        p++;
      if (p >= L->end) {
        L->p = p;
        return false;
      }
      if (*p != '\n') {
        L->p = p;          /* a lone '\r' or other char after comment */
        return true;
      }
      newline(L, p);
      L->p = p + 1;
      continue;
    }
    {
      int top = L->indent[L->nindent];
      int atop = L->altindent[L->nindent];
      asc__loc loc = loc_at(L, p);
      if (col == top) {
        if (alt != atop)
          asc__diag_error(L->c, loc, "inconsistent use of tabs and spaces "
                          "in indentation");
      } else if (col > top) {
        if (L->nindent >= ASC_MAX_NESTING)
          asc__diag_fatal(L->c, loc, "too deeply nested (more than %d "
                          "indentation levels)", ASC_MAX_NESTING);
        if (alt <= atop)
          asc__diag_error(L->c, loc, "inconsistent use of tabs and spaces "
                          "in indentation");
        L->nindent++;
        L->indent[L->nindent] = col;
        L->altindent[L->nindent] = alt;
        push(L, ASC_TK_INDENT, p, p);
      } else {
        while (L->nindent > 0 && col < L->indent[L->nindent]) {
          L->nindent--;
          push(L, ASC_TK_DEDENT, p, p);
        }
        if (col != L->indent[L->nindent])
          asc__diag_error(L->c, loc, "unindent does not match any outer "
                          "indentation level");
        else if (alt != L->altindent[L->nindent])
          asc__diag_error(L->c, loc, "inconsistent use of tabs and spaces "
                          "in indentation");
      }
    }
    return true;
  }
}

/* ------------------------------------------------------------ brackets */

static void open_bracket(lexer *L, const char *p) {
  if (L->nbrackets >= ASC_MAX_NESTING)
    asc__diag_fatal(L->c, loc_at(L, p), "too deeply nested (more than %d "
                    "nested brackets)", ASC_MAX_NESTING);
  L->brackets[L->nbrackets] = *p;
  L->bracket_loc[L->nbrackets] = loc_at(L, p);
  L->nbrackets++;
}

static void close_bracket(lexer *L, const char *p) {
  char want = *p == ')' ? '(' : *p == ']' ? '[' : '{';
  if (L->nbrackets == 0) {
    asc__diag_error(L->c, loc_at(L, p), "unmatched '%c'", *p);
    return;
  }
  if (L->brackets[L->nbrackets - 1] != want) {
    asc__loc o = L->bracket_loc[L->nbrackets - 1];
    asc__diag_error(L->c, loc_at(L, p), "closing parenthesis '%c' does not "
                    "match opening parenthesis '%c' on line %d", *p,
                    L->brackets[L->nbrackets - 1], (int)o.line);
  }
  L->nbrackets--;
}

/* --------------------------------------------------------- identifiers */

/* Decodes one UTF-8 character at p (n bytes left); returns its length,
 * 0 when malformed. */
static int utf8_decode(const unsigned char *p, size_t n, uint32_t *cp) {
  int len = p[0] < 0x80 ? 1 : (p[0] >> 5) == 6 ? 2 : (p[0] >> 4) == 14 ? 3
          : (p[0] >> 3) == 30 ? 4 : 0;
  uint32_t v;
  if (len == 0 || (size_t)len > n)
    return 0;
  v = len == 1 ? p[0] : p[0] & (0x7Fu >> len);
  for (int k = 1; k < len; k++) {
    if ((p[k] & 0xC0) != 0x80)
      return 0;
    v = (v << 6) | (p[k] & 0x3Fu);
  }
  *cp = v;
  return len;
}

static const char *nfkc_lookup(uint32_t cp) {
  size_t lo = 0, hi = ASC_ARRAY_SIZE(asc__nfkc_map);
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (asc__nfkc_map[mid].cp == cp)
      return asc__nfkc_map[mid].utf8;
    if (asc__nfkc_map[mid].cp < cp)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

static bool nfkc_combining(uint32_t cp) {
  for (size_t k = 0; k < ASC_ARRAY_SIZE(asc__nfkc_combining); k++)
    if (cp >= asc__nfkc_combining[k][0] && cp <= asc__nfkc_combining[k][1])
      return true;
  return false;
}

/* NFC(a b) when it is one character, else 0; *composite set when a is
 * itself a composition (a mark after it may need reordering). */
static uint32_t nfkc_compose(uint32_t a, uint32_t b, bool *composite) {
  *composite = false;
  if (a >= 0x1100 && a <= 0x1112 && b >= 0x1161 && b <= 0x1175)
    return 0xAC00 + ((a - 0x1100) * 21 + (b - 0x1161)) * 28;
  if (a >= 0xAC00 && a <= 0xD7A3 && (a - 0xAC00) % 28 == 0 && b >= 0x11A8 &&
      b <= 0x11C2)
    return a + (b - 0x11A7);
  for (size_t k = 0; k < ASC_ARRAY_SIZE(asc__nfkc_pairs); k++) {
    if (asc__nfkc_pairs[k][0] == a && asc__nfkc_pairs[k][1] == b)
      return asc__nfkc_pairs[k][2];
    if (asc__nfkc_pairs[k][2] == a)
      *composite = true;
  }
  if (a >= 0xAC00 && a <= 0xD7A3)
    *composite = true;
  return 0;
}

/* The name [p, p + n) in NFKC, as Python normalises identifiers (PEP
 * 3131): each character through its own NFKC form, a combining mark
 * composed with the character before it.  What needs more of the
 * algorithm (canonical reordering of several marks) is an error instead
 * of a silently different name. */
static char *nfkc_name(lexer *L, const char *p, size_t n) {
  uint32_t *cps = asc__arena_alloc(L->c, (n * 3 + 1) * sizeof *cps);
  size_t ncp = 0, k = 0;
  char *out;
  bool prev_mark = false;
  while (k < n) {
    uint32_t cp;
    int len = utf8_decode((const unsigned char *)p + k, n - k, &cp);
    const char *m;
    if (len == 0)       /* malformed UTF-8: the bytes stay as written */
      return asc__arena_strndup(L->c, p, n);
    m = cp >= 0x80 ? nfkc_lookup(cp) : NULL;
    k += (size_t)len;
    if (m != NULL) {
      const unsigned char *q = (const unsigned char *)m;
      size_t left = strlen(m);
      while (left > 0) {
        uint32_t c2;
        int l2 = utf8_decode(q, left, &c2);
        ASC_CHECK(L->c, l2 > 0);
        cps[ncp++] = c2;
        q += l2;
        left -= (size_t)l2;
      }
      prev_mark = false;
      continue;
    }
    if (ncp > 0 && cp >= 0x300 && nfkc_combining(cp)) {
      bool composite;
      uint32_t c = prev_mark ? 0 : nfkc_compose(cps[ncp - 1], cp, &composite);
      if (c != 0) {
        cps[ncp - 1] = c;
        continue;
      }
      if (prev_mark || composite) {
        asc__diag_error(L->c, loc_at(L, p + k - len), "identifier '%.*s': "
                        "U+%04X after this character needs Unicode "
                        "normalisation that libasc does not do (canonical "
                        "reordering); write the name precomposed",
                        (int)n, p, (unsigned)cp);
        return asc__arena_strndup(L->c, p, n);
      }
      prev_mark = true;
    } else {
      prev_mark = false;
    }
    cps[ncp++] = cp;
  }
  out = asc__arena_alloc(L->c, ncp * 4 + 1);
  k = 0;
  for (size_t i = 0; i < ncp; i++)
    put_utf8(out, &k, cps[i]);
  out[k] = '\0';
  return out;
}

/* ---------------------------------------------------------------- main */

static asc__tok_kind keyword(const char *s, size_t n) {
  for (size_t i = 0; i < ASC_ARRAY_SIZE(kw_spell); i++)
    if (strlen(kw_spell[i]) == n && memcmp(kw_spell[i], s, n) == 0)
      return (asc__tok_kind)(ASC_TK_KW_FALSE + (int)i);
  return ASC_TK_NAME;
}

static bool string_prefix(const char *s, size_t n) {
  static const char *const pre[] = {"r", "u", "b", "f", "br", "rb",
                                    "fr", "rf"};
  for (size_t i = 0; i < ASC_ARRAY_SIZE(pre); i++) {
    if (strlen(pre[i]) != n)
      continue;
    size_t j = 0;
    while (j < n && (s[j] | 0x20) == pre[i][j])
      j++;
    if (j == n)
      return true;
  }
  return false;
}

static void lex_punct(lexer *L) {
  const char *p = L->p;
  size_t best = 0;
  int kind = -1;
  for (size_t i = 0; i < ASC_ARRAY_SIZE(punct_spell); i++) {
    size_t n = strlen(punct_spell[i]);
    if (n > best && (size_t)(L->end - p) >= n &&
        memcmp(p, punct_spell[i], n) == 0) {
      best = n;
      kind = (int)i;
    }
  }
  if (kind < 0) {
    unsigned char ch = (unsigned char)*p;
    if (ch == '!')
      asc__diag_error(L->c, loc_at(L, p), "invalid syntax: '!' (did you "
                      "mean 'not'?)");
    else if (ch >= 0x20 && ch < 0x7f)
      asc__diag_error(L->c, loc_at(L, p), "invalid character '%c'", ch);
    else
      asc__diag_error(L->c, loc_at(L, p), "invalid character (byte 0x%02x)",
                      ch);
    L->p++;
    return;
  }
  if (*p == '(' || *p == '[' || *p == '{')
    open_bracket(L, p);
  else if (*p == ')' || *p == ']' || *p == '}')
    close_bracket(L, p);
  L->p = p + best;
  push(L, (asc__tok_kind)(ASC_TK_LPAR + kind), p, L->p);
}

asc__token *asc__lex(asc__cctx *c, int *ntokens) {
  lexer L0, *L = &L0;

  memset(L, 0, sizeof *L);
  L->c = c;
  L->p = c->text;
  L->end = c->text + c->len;
  L->line_start = c->text;
  L->line = 1;

  if (memchr(c->text, '\0', c->len) != NULL) {
    const char *z = memchr(c->text, '\0', c->len);
    for (const char *q = c->text; q < z; q++)
      if (*q == '\n')
        newline(L, q);
    asc__diag_fatal(c, loc_at(L, z), "source code cannot contain null "
                    "bytes");
  }
  /* Python reads source with universal newlines: a lone "\r" (old Mac
   * line ending) ends a line like "\n" ("\r\n" is handled where it
   * occurs).  Rewriting it in a copy keeps every offset and length. */
  for (const char *q = c->text; q < L->end; q++) {
    if (*q == '\r' && (q + 1 == L->end || q[1] != '\n')) {
      char *t = asc__arena_alloc(c, c->len + 1);
      memcpy(t, c->text, c->len);
      for (size_t k = (size_t)(q - c->text); k < c->len; k++)
        if (t[k] == '\r' && (k + 1 == c->len || t[k + 1] != '\n'))
          t[k] = '\n';
      c->text = t;
      L->p = L->line_start = t;
      L->end = t + c->len;
      break;
    }
  }
  /* a UTF-8 byte order mark is skipped */
  if (c->len >= 3 && memcmp(c->text, "\xEF\xBB\xBF", 3) == 0)
    L->p += 3;

  bool at_line_start = true;
  for (;;) {
    if (at_line_start && L->nbrackets == 0) {
      if (!begin_line(L))
        break;
      at_line_start = false;
    }
    if (L->p >= L->end)
      break;
    const char *p = L->p;
    unsigned char ch = (unsigned char)*p;
    if (ch == ' ' || ch == '\t' || ch == '\f' || ch == '\r') {
      L->p++;
      continue;
    }
    if (ch == '#') {
      while (L->p < L->end && *L->p != '\n')
        L->p++;
      continue;
    }
    if (ch == '\\') {
      const char *q = p + 1;
      while (q < L->end && *q == '\r')
        q++;
      if (q < L->end && *q == '\n') {
        newline(L, q);
        L->p = q + 1;
        if (L->p >= L->end)
          asc__diag_error(c, loc_at(L, p), "unexpected end of file after "
                          "line continuation character");
        continue;
      }
      asc__diag_error(c, loc_at(L, p), "unexpected character after line "
                      "continuation character");
      L->p++;
      continue;
    }
    if (ch == '\n') {
      if (L->nbrackets == 0) {
        if (L->line_has_tokens)
          push(L, ASC_TK_NEWLINE, p, p + 1);
        L->line_has_tokens = false;
        at_line_start = true;
      }
      newline(L, p);
      L->p = p + 1;
      continue;
    }
    if ((ch >= '0' && ch <= '9') ||
        (ch == '.' && p + 1 < L->end && p[1] >= '0' && p[1] <= '9')) {
      lex_number(L);
      continue;
    }
    if (ch == '\'' || ch == '"') {
      lex_string(L, p);
      continue;
    }
    if (is_id_start(ch)) {
      const char *q = p;
      while (q < L->end && is_id_char((unsigned char)*q))
        q++;
      if (q < L->end && (*q == '\'' || *q == '"') &&
          string_prefix(p, (size_t)(q - p))) {
        lex_string(L, q);
        continue;
      }
      asc__tok_kind k = keyword(p, (size_t)(q - p));
      asc__token *t = push(L, k, p, q);
      if (k == ASC_TK_NAME) {
        size_t n = (size_t)(q - p);
        bool ascii = true;
        for (size_t j = 0; j < n && ascii; j++)
          ascii = (unsigned char)p[j] < 0x80;
        t->v.name = ascii ? asc__arena_strndup(c, p, n) : nfkc_name(L, p, n);
      }
      L->p = q;
      continue;
    }
    lex_punct(L);
  }

  if (L->nbrackets > 0) {
    int i = L->nbrackets - 1;
    asc__diag_error(c, L->bracket_loc[i], "'%c' was never closed",
                    L->brackets[i]);
  }
  if (L->line_has_tokens)
    push(L, ASC_TK_NEWLINE, L->p, L->p);
  while (L->nindent > 0) {
    L->nindent--;
    push(L, ASC_TK_DEDENT, L->p, L->p);
  }
  push(L, ASC_TK_EOF, L->p, L->p);
  *ntokens = L->ntoks;
  return L->toks;
}

/* ---------------------------------------------------------------- dump */

void asc__buf_put_quoted(asc__buf *out, const char *s, size_t n) {
  asc__buf_puts(out, "\"");
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '"' || ch == '\\')
      asc__buf_printf(out, "\\%c", ch);
    else if (ch == '\n')
      asc__buf_puts(out, "\\n");
    else if (ch == '\t')
      asc__buf_puts(out, "\\t");
    else if (ch < 0x20 || ch == 0x7f)
      asc__buf_printf(out, "\\x%02x", ch);
    else
      asc__buf_put(out, &s[i], 1);
  }
  asc__buf_puts(out, "\"");
}

void asc__buf_put_double(asc__buf *out, double v) {
  char b[64];
  if (v != v) {
    asc__buf_puts(out, "nan");
    return;
  }
  if (v > 1.7976931348623157e308 || v < -1.7976931348623157e308) {
    asc__buf_puts(out, v > 0 ? "inf" : "-inf");
    return;
  }
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(b, sizeof b, "%.*g", prec, v);
    if (strtod(b, NULL) == v)
      break;
  }
  asc__buf_puts(out, b);
  if (strpbrk(b, ".e") == NULL)
    asc__buf_puts(out, ".0");
}

void asc__dump_tokens(const asc__token *toks, int n, asc__buf *out) {
  for (int i = 0; i < n; i++) {
    const asc__token *t = &toks[i];
    asc__buf_printf(out, "%d:%d ", (int)t->loc.line, (int)t->loc.col);
    switch (t->kind) {
    case ASC_TK_EOF: asc__buf_puts(out, "EOF"); break;
    case ASC_TK_NEWLINE: asc__buf_puts(out, "NEWLINE"); break;
    case ASC_TK_INDENT: asc__buf_puts(out, "INDENT"); break;
    case ASC_TK_DEDENT: asc__buf_puts(out, "DEDENT"); break;
    case ASC_TK_NAME: asc__buf_printf(out, "NAME %s", t->v.name); break;
    case ASC_TK_INT:
      asc__buf_printf(out, "INT %llu", (unsigned long long)t->v.ival);
      break;
    case ASC_TK_FLOAT:
      asc__buf_puts(out, "FLOAT ");
      asc__buf_put_double(out, t->v.fval);
      break;
    case ASC_TK_STR:
      asc__buf_puts(out, "STR ");
      asc__buf_put_quoted(out, t->v.str.s, t->v.str.len);
      break;
    default:
      if (t->kind >= ASC_TK_KW_FALSE)
        asc__buf_printf(out, "KEYWORD %s", asc__tok_spelling(t->kind));
      else
        asc__buf_printf(out, "OP %s", asc__tok_spelling(t->kind));
      break;
    }
    if (t->flags & ASC_TOKF_IMAG)
      asc__buf_puts(out, " imaginary");
    if (t->flags & ASC_TOKF_FSTRING)
      asc__buf_puts(out, " f-string");
    if (t->flags & ASC_TOKF_BYTES)
      asc__buf_puts(out, " bytes");
    asc__buf_puts(out, "\n");
  }
}
