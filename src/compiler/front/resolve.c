/*
 * Name resolution: binds every name of the kernels and helpers to a symbol.
 *
 * Scoping is Python's: a name assigned anywhere in a function is local to
 * the whole function (found by a first walk over its statements, nested
 * functions excluded); other names are looked up in the enclosing functions
 * (nested defs and lambdas used as parallel-loop bodies capture them), then
 * at module level (imports, constants, classes, functions), then among the
 * Python builtins.  Module constants are folded and frozen here
 * (constfold.c).  Calls get their target and their arguments in parameter
 * order; loops and numpy calls that later stages do not know are
 * rewritten first (rewrite.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compiler/front/resolve_int.h"

/* ------------------------------------------------------- module scope */

static void declare_module(resolver *r, asc__sym *s) {
  asc__sym *old = find(r, &r->module, s->name);
  if (old != NULL && old->kind == ASC_SYM_FUNC && s->kind == ASC_SYM_FUNC &&
      (old->u.func->kind != ASC_FUNC_PLAIN ||
       s->u.func->kind != ASC_FUNC_PLAIN)) {
    asc__diag_error(r->c, s->loc, "redefinition of '%s'", s->name);
    asc__diag_note(r->c, old->loc, "'%s' was first defined here", s->name);
  }
  vpush(r, &r->module, s);
}

static void module_scope(resolver *r) {
  asc__ast_module *m = r->m;
  for (int i = 0; i < m->nimports; i++) {
    asc__ast_import *im = &m->imports[i];
    asc__sym *s;
    bool is_asc = strcmp(im->module, "asc") == 0 ||
                  strcmp(im->module, "pyasc") == 0;
    bool is_math = strcmp(im->module, "math") == 0;
    bool is_np = strcmp(im->module, "numpy") == 0;
    bool is_cmath = strcmp(im->module, "cmath") == 0;
    if (im->name == NULL && (is_np || is_cmath)) {
      s = new_sym(r, ASC_SYM_MODULE, im->asname, im->loc);
      s->u.module = is_np ? ASC_NS_NP : ASC_NS_CMATH;
    } else if (im->name == NULL) {
      s = new_sym(r, is_asc || is_math ? ASC_SYM_MODULE : ASC_SYM_FOREIGN,
                  im->asname, im->loc);
      s->u.module = is_asc ? ASC_NS_ASC : ASC_NS_MATH;
    } else if (is_asc || is_math) {
      const asc__builtin *b =
          asc__builtin_lookup(is_asc ? ASC_NS_ASC : ASC_NS_MATH, im->name);
      if (b == NULL) {
        asc__diag_error(r->c, im->loc, "cannot import name '%s' from '%s' "
                        "(not a kernel builtin)", im->name, im->module);
        continue;
      }
      s = new_sym(r, ASC_SYM_BUILTIN, im->asname, im->loc);
      s->u.builtin = b;
    } else {
      s = new_sym(r, ASC_SYM_FOREIGN, im->asname, im->loc);
    }
    if (s->kind == ASC_SYM_FOREIGN)
      s->u.import = im;
    vpush(r, &r->module, s);
  }
  for (int i = 0; i < m->nclasses; i++) {
    asc__sym *s = new_sym(r, ASC_SYM_CLASS, m->classes[i]->name,
                          m->classes[i]->loc);
    s->u.cls = m->classes[i];
    vpush(r, &r->module, s);
  }
  for (int i = 0; i < m->nfuncs; i++) {
    asc__sym *s = new_sym(r, ASC_SYM_FUNC, m->funcs[i]->name,
                          m->funcs[i]->loc);
    s->u.func = m->funcs[i];
    declare_module(r, s);
  }
  /* constants last, in source order, so each folds against those before */
  for (int i = 0; i < m->nconsts; i++) {
    asc__ast_const *k = m->consts[i];
    asc__sym *s = new_sym(r, ASC_SYM_CONST, k->name, k->loc);
    s->u.cnst = k;
    k->sym = s;
    k->folded.dtype = ascDataTypeCount;
    if (!asc__fold_const(r, k->value, &k->folded))
      k->folded.dtype = ascDataTypeCount;
    for (int g = 0; g < r->nglobals; g++)
      if (r->globals[g].name != NULL &&
          strcmp(r->globals[g].name, k->name) == 0) {
        k->folded = r->globals[g].value;
        k->from_caller = true;
      }
    vpush(r, &r->module, s);
  }
  /* caller-supplied names the module does not define */
  for (int g = 0; g < r->nglobals; g++) {
    asc__ast_const *k;
    asc__sym *s;
    asc__loc none = {0, 0};
    if (r->globals[g].name == NULL || find(r, &r->module, r->globals[g].name))
      continue;
    k = asc__arena_alloc(r->c, sizeof *k);
    k->name = asc__arena_strndup(r->c, r->globals[g].name,
                                 strlen(r->globals[g].name));
    k->folded = r->globals[g].value;
    k->from_caller = true;
    s = new_sym(r, ASC_SYM_CONST, k->name, none);
    s->u.cnst = k;
    k->sym = s;
    vpush(r, &r->module, s);
    {
      asc__ast_const **nc = asc__arena_alloc(
          r->c, (size_t)(r->m->nconsts + 1) * sizeof *nc);
      if (r->m->nconsts)
        memcpy(nc, r->m->consts, (size_t)r->m->nconsts * sizeof *nc);
      nc[r->m->nconsts++] = k;
      r->m->consts = nc;
    }
  }
}

/* ------------------------------------------------------------- locals */

static void bind_local(resolver *r, asc__ast_func *f, vec *locals,
                       const char *name, asc__loc loc, asc__sym_kind k) {
  asc__sym *s = find(r, locals, name);
  if (s != NULL)
    return;
  s = new_sym(r, k, name, loc);
  s->owner = f;
  s->u.index = locals->n;
  vpush(r, locals, s);
}

static void bind_target(resolver *r, asc__ast_func *f, vec *locals,
                        asc__ast_expr *t) {
  if (t->kind == ASC_EXPR_NAME)
    bind_local(r, f, locals, t->u.name.id, t->loc, ASC_SYM_LOCAL);
  else if (t->kind == ASC_EXPR_TUPLE)
    for (int i = 0; i < t->u.tuple.n; i++)
      bind_target(r, f, locals, t->u.tuple.elts[i]);
}

/* The names a block binds (Python: assigned anywhere => local). */
static void collect(resolver *r, asc__ast_func *f, vec *locals,
                    asc__ast_block *b) {
  for (int i = 0; i < b->n; i++) {
    asc__ast_stmt *s = b->stmts[i];
    switch (s->kind) {
    case ASC_STMT_ASSIGN:
      for (int j = 0; j < s->u.assign.ntargets; j++)
        bind_target(r, f, locals, s->u.assign.targets[j]);
      break;
    case ASC_STMT_AUGASSIGN: bind_target(r, f, locals, s->u.aug.target); break;
    case ASC_STMT_ANNASSIGN: bind_target(r, f, locals, s->u.ann.target); break;
    case ASC_STMT_IF:
      collect(r, f, locals, &s->u.if_.body);
      collect(r, f, locals, &s->u.if_.orelse);
      break;
    case ASC_STMT_FOR:
      if (asc__rewrite_loop(r, b, i) > 0) {
        i--; /* the values put before the loop first */
        break;
      }
      bind_target(r, f, locals, s->u.for_.target);
      if (s->u.for_.over_array)
        bind_target(r, f, locals,
                    s->u.for_.body.stmts[0]->u.assign.targets[0]);
      collect(r, f, locals, &s->u.for_.body);
      break;
    case ASC_STMT_WHILE: collect(r, f, locals, &s->u.while_.body); break;
    case ASC_STMT_TRY:
      collect(r, f, locals, &s->u.try_.body);
      for (int j = 0; j < s->u.try_.nhandlers; j++) {
        asc__ast_handler *h = &s->u.try_.handlers[j];
        if (h->name != NULL)
          bind_local(r, f, locals, h->name, h->name_loc, ASC_SYM_EXC_VAR);
        collect(r, f, locals, &h->body);
      }
      collect(r, f, locals, &s->u.try_.orelse);
      collect(r, f, locals, &s->u.try_.finalbody);
      break;
    case ASC_STMT_WITH: collect(r, f, locals, &s->u.with.body); break;
    case ASC_STMT_FUNCDEF: {
      asc__ast_func *g = s->u.funcdef.fn;
      if (find(r, locals, g->name) == NULL) {
        asc__sym *sym = new_sym(r, ASC_SYM_FUNC, g->name, g->loc);
        sym->owner = f;
        sym->u.func = g;
        vpush(r, locals, sym);
      }
      break;
    }
    default:
      break;
    }
  }
}

/* --------------------------------------------------------- expressions */

static void expr(resolver *r, asc__ast_expr *e);
static void as_sequence(resolver *r, asc__ast_expr *a);
static void block(resolver *r, asc__ast_block *b);
static void function(resolver *r, asc__ast_func *f);

static asc__sym *lookup(resolver *r, const char *name) {
  asc__sym *s;
  for (int i = r->comp.n - 1; i >= 0; i--)
    if (strcmp(((asc__sym *)r->comp.v[i])->name, name) == 0)
      return r->comp.v[i];
  s = find(r, r->locals, name);
  if (s != NULL)
    return s;
  for (asc__ast_func *f = r->fn ? r->fn->parent : NULL; f; f = f->parent) {
    for (int i = 0; i < f->nlocals; i++)
      if (strcmp(f->locals[i]->name, name) == 0) {
        f->locals[i]->captured = true;
        for (asc__ast_func *g = r->fn; g != f; g = g->parent)
          if (g->captures == NULL && f->locals[i]->kind != ASC_SYM_FUNC)
            g->captures = f->locals[i];
        return f->locals[i];
      }
  }
  s = find(r, &r->module, name);
  if (s != NULL)
    return s;
  /* Text taken from one function (inspect.getsource) has no imports:
   * asc, pyasc and math are then bound implicitly. */
  if (strcmp(name, "asc") == 0 || strcmp(name, "pyasc") == 0 ||
      strcmp(name, "math") == 0) {
    asc__loc none = {0, 0};
    s = new_sym(r, ASC_SYM_MODULE, name, none);
    s->u.module = name[0] == 'm' ? ASC_NS_MATH : ASC_NS_ASC;
    vpush(r, &r->module, s);
    return s;
  }
  {
    const asc__builtin *b = asc__builtin_lookup(ASC_NS_PY, name);
    if (b != NULL) {
      asc__loc none = {0, 0};
      s = new_sym(r, ASC_SYM_BUILTIN, name, none);
      s->u.builtin = b;
      vpush(r, &r->module, s);
      return s;
    }
  }
  return NULL;
}

static const char *callee_name(resolver *r, asc__ast_expr *f) {
  if (f->kind == ASC_EXPR_NAME)
    return f->u.name.id;
  if (f->kind == ASC_EXPR_ATTR && f->u.attr.value->kind == ASC_EXPR_NAME)
    return asc__arena_printf(r->c, "%s.%s", f->u.attr.value->u.name.id,
                             f->u.attr.attr);
  return "function";
}

/* A name imported from numpy (import numpy as np; from numpy import x). */
static bool is_numpy(const asc__sym *s) {
  const char *m;
  if (s == NULL || s->kind != ASC_SYM_FOREIGN || s->u.import == NULL)
    return false;
  m = s->u.import->module;
  return strcmp(m, "numpy") == 0 || strncmp(m, "numpy.", 6) == 0;
}

/* numpy's `fn` used in a kernel: name the asc equivalent when there is
 * one. */
static void numpy_error(resolver *r, asc__loc loc, const char *written,
                        const char *fn) {
  const asc__builtin *b = asc__builtin_lookup(ASC_NS_ASC, fn);
  if (asc__builtin_lookup(ASC_NS_NP, fn) != NULL)
    asc__diag_error(r->c, loc, "names imported from numpy are not supported "
                    "in kernels (%s): `import numpy as np` and write np.%s",
                    written, fn);
  else if (b != NULL && b->kind != ASC_BK_DECORATOR)
    asc__diag_error(r->c, loc, "numpy is not supported in kernels yet: use "
                    "asc.%s instead of %s", fn, written);
  else
    asc__diag_error(r->c, loc, "numpy is not supported in kernels yet, and "
                    "asc has no '%s' (%s)", fn, written);
}

/* `from numpy import sqrt [as s]`: the name is numpy's sqrt, as np.sqrt
 * is (numpy's semantics, not math's): e becomes the attribute `sqrt` of
 * numpy, so every later step sees np.sqrt.  Names kernels do not accept
 * are left to numpy_error. */
bool asc__resolve_numpy_name(resolver *r, asc__ast_expr *e) {
  asc__sym *s = lookup(r, e->u.name.id);
  asc__ast_expr *m;
  const char *name;
  if (!is_numpy(s) || s->u.import->name == NULL ||
      strcmp(s->u.import->module, "numpy") != 0)
    return false;
  name = s->u.import->name;
  if (asc__builtin_lookup(ASC_NS_NP, name) == NULL &&
      !asc__is_op_ufunc(name) && strcmp(name, "newaxis") != 0)
    return false;
  if (r->np_module == NULL) {
    r->np_module = new_sym(r, ASC_SYM_MODULE, "numpy", s->loc);
    r->np_module->u.module = ASC_NS_NP;
  }
  m = asc__arena_alloc(r->c, sizeof *m);
  *m = *e;
  m->u.name.id = "numpy";
  m->u.name.sym = r->np_module;
  e->kind = ASC_EXPR_ATTR;
  memset(&e->u, 0, sizeof e->u);
  e->u.attr.value = m;
  e->u.attr.attr = name;
  e->u.attr.attr_loc = e->loc;
  return true;
}

static void name_use(resolver *r, asc__ast_expr *e, bool as_attr_base) {
  asc__sym *s = lookup(r, e->u.name.id);
  e->u.name.sym = s;
  if (s != NULL)
    s->read = true;
  if (s == NULL) {
    if (strcmp(e->u.name.id, "print") == 0)
      asc__diag_error(r->c, e->loc, "printing is not supported in kernels "
                      "(write the values to a tensor, or raise an "
                      "exception with a message)");
    else
      asc__diag_error(r->c, e->loc, "name '%s' is not defined",
                      e->u.name.id);
    return;
  }
  if (is_numpy(s)) {
    /* np.sqrt: reported with its attribute (expr, ASC_EXPR_ATTR) */
    if (as_attr_base)
      return;
    if (s->u.import->name != NULL &&
        strcmp(s->u.import->module, "numpy") == 0)
      /* asc__resolve_numpy_name took the names kernels accept */
      asc__diag_error(r->c, e->loc, "numpy's %s ('%s', imported from "
                      "numpy) is not supported in kernels yet (numpy names "
                      "kernels accept: %s)", s->u.import->name,
                      e->u.name.id, asc__numpy_names);
    else if (s->u.import->name != NULL)
      numpy_error(r, e->loc, e->u.name.id, s->u.import->name);
    else
      asc__diag_error(r->c, e->loc, "numpy ('%s') is not supported in "
                      "kernels yet", e->u.name.id);
    return;
  }
  switch (s->kind) {
  case ASC_SYM_MODULE:
    if (!as_attr_base)
      asc__diag_error(r->c, e->loc, "module '%s' cannot be used as a value",
                      e->u.name.id);
    break;
  case ASC_SYM_FOREIGN:
    if (s->u.import != NULL && s->u.import->name != NULL &&
        strcmp(s->u.import->module, "cmath") == 0)
      /* a bare name has math's semantics: cmath's must be written so */
      asc__diag_error(r->c, e->loc, "'from cmath import %s' is not "
                      "supported in kernels: `import cmath` and write "
                      "cmath.%s", s->u.import->name, s->u.import->name);
    else
      asc__diag_error(r->c, e->loc, "'%s' names a Python module or object "
                      "that kernels cannot use", e->u.name.id);
    break;
  case ASC_SYM_CONST:
    if (!is_num(&s->u.cnst->folded))
      asc__diag_error(r->c, e->loc, "'%s' is not a compile-time constant "
                      "(module-level names used in kernels must be bool, "
                      "int or float constants)", e->u.name.id);
    break;
  case ASC_SYM_CLASS:
    if (s->u.cls->unsupported != NULL) {
      asc__diag_error(r->c, e->loc, "class '%s' cannot be used in a kernel",
                      e->u.name.id);
      asc__diag_note(r->c, s->u.cls->unsupported_loc, "%s",
                     s->u.cls->unsupported);
    }
    break;
  default:
    break;
  }
}

/* Maps a call's arguments to parameters: names[i] for keywords, n slots,
 * min required. */
/* Whether parameter p (a name, or names of the one parameter separated
 * by '|', as np.clip's a_min|min) is called name. */
static bool param_named(const char *p, const char *name) {
  size_t l = strlen(name);
  for (;;) {
    const char *e = strchr(p, '|');
    size_t pl = e ? (size_t)(e - p) : strlen(p);
    if (pl == l && strncmp(p, name, l) == 0)
      return true;
    if (e == NULL)
      return false;
    p = e + 1;
  }
}

static void bind_args(resolver *r, asc__ast_expr *call, const char *what,
                      int min, int max, const char *const *names,
                      asc__ast_expr *const *defaults) {
  int n = call->u.call.nargs;
  int slots = max < 0 ? n : max;
  asc__ast_expr **ra;
  if (max >= 0 && n > max) {
    asc__diag_error(r->c, call->u.call.args[max]->loc, "%s() takes %s%d "
                    "argument%s (%d given)", what,
                    min == max ? "" : "at most ", max, max == 1 ? "" : "s", n);
    return;
  }
  if (max < 0 && call->u.call.nkws > 0) {
    asc__diag_error(r->c, call->u.call.kws[0].loc, "%s() takes no keyword "
                    "arguments", what);
    return;
  }
  ra = asc__arena_alloc(r->c, (size_t)(slots ? slots : 1) * sizeof *ra);
  for (int i = 0; i < n; i++)
    ra[i] = call->u.call.args[i];
  for (int i = 0; i < call->u.call.nkws; i++) {
    asc__ast_keyword *k = &call->u.call.kws[i];
    int idx = -1;
    for (int j = 0; j < slots && names != NULL; j++)
      if (names[j] != NULL && param_named(names[j], k->name))
        idx = j;
    if (idx < 0) {
      asc__diag_error(r->c, k->loc, "%s() got an unexpected keyword "
                      "argument '%s'", what, k->name);
      return;
    }
    if (ra[idx] != NULL) {
      asc__diag_error(r->c, k->loc, "%s() got multiple values for argument "
                      "'%s'", what, k->name);
      return;
    }
    ra[idx] = k->value;
  }
  for (int j = 0; j < slots; j++) {
    if (ra[j] == NULL && defaults != NULL)
      ra[j] = defaults[j];
    if (ra[j] == NULL && j < min) {
      if (names != NULL && names[j] != NULL)
        asc__diag_error(r->c, call->loc, "%s() missing required argument "
                        "'%s'", what, names[j]);
      else
        asc__diag_error(r->c, call->loc, "%s() takes %s%d argument%s (%d "
                        "given)", what, min == max ? "" : "at least ", min,
                        min == 1 ? "" : "s", n);
      return;
    }
  }
  call->u.call.rargs = ra;
  call->u.call.nrargs = slots;
}

static const char **builtin_param_names(resolver *r, const asc__builtin *b) {
  int n = b->max_args < 0 ? 0 : b->max_args;
  const char **names = asc__arena_alloc(r->c, (size_t)(n + 1) * sizeof *names);
  const char *p = b->params;
  for (int i = 0; i < n && *p; i++) {
    const char *e = strchr(p, ',');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    names[i] = asc__arena_strndup(r->c, p, l);
    p = e ? e + 1 : p + l;
  }
  return names;
}

/* Methods that grow or shrink a Python list. */
static bool is_list_method(const char *m) {
  static const char *const names[] = {"append", "extend", "insert", "pop",
                                      "remove", "clear"};
  for (size_t i = 0; i < ASC_ARRAY_SIZE(names); i++)
    if (strcmp(m, names[i]) == 0)
      return true;
  return false;
}

static void call_expr(resolver *r, asc__ast_expr *e) {
  asc__ast_expr *f = e->u.call.func;
  const asc__builtin *b;
  const char *what;
  bool sort_stmt = r->sort_stmt;

  r->sort_stmt = false;

  if (f->kind == ASC_EXPR_NAME && asc__resolve_numpy_name(r, f))
    f = e->u.call.func; /* now np.NAME */
  if (asc__rewrite_ufunc_method(r, e) || asc__rewrite_op_ufunc(r, e))
    return;
  if (f->kind == ASC_EXPR_NAME)
    name_use(r, f, false);
  else if (f->kind == ASC_EXPR_ATTR)
    expr(r, f);
  else {
    expr(r, f);
    asc__diag_error(r->c, f->loc, "this expression is not callable in a "
                    "kernel");
    return;
  }
  what = callee_name(r, f);
  b = asc__expr_builtin(f);
  /* np.concatenate(arrays): a tuple or list held in a name, or made by a
   * comprehension, is the tuple of its elements written in place */
  if (b != NULL && e->u.call.nargs > 0 &&
      e->u.call.args[0]->kind != ASC_EXPR_TUPLE &&
      e->u.call.args[0]->kind != ASC_EXPR_COMP &&
      (b->id == ASC_BI_NP_CONCATENATE || b->id == ASC_BI_NP_STACK ||
       b->id == ASC_BI_NP_HSTACK || b->id == ASC_BI_NP_VSTACK ||
       b->id == ASC_BI_NP_COLUMN_STACK)) {
    as_sequence(r, e->u.call.args[0]);
    e->u.call.args[0]->comp->quiet = true;
  }

  /* arguments first; a parallel_for body may be a lambda */
  for (int i = 0; i < e->u.call.nargs; i++) {
    asc__ast_expr *a = e->u.call.args[i];
    bool body = b != NULL && b->id == ASC_BI_PARALLEL_FOR && i == 1;
    r->lambda_ok = body && a->kind == ASC_EXPR_LAMBDA;
    if (body && a->kind == ASC_EXPR_NAME) {
      name_use(r, a, false);
      if (a->u.name.sym != NULL && (a->u.name.sym->kind != ASC_SYM_FUNC ||
                                    a->u.name.sym->u.func->kind !=
                                        ASC_FUNC_NESTED))
        asc__diag_error(r->c, a->loc, "the body of asc.parallel_for must be "
                        "a lambda or a function defined in the kernel");
    } else {
      expr(r, a);
    }
    r->lambda_ok = false;
  }
  for (int i = 0; i < e->u.call.nkws; i++) {
    asc__ast_keyword *k = &e->u.call.kws[i];
    r->lambda_ok = b != NULL && b->id == ASC_BI_PARALLEL_FOR &&
                   strcmp(k->name, "body") == 0 &&
                   k->value->kind == ASC_EXPR_LAMBDA;
    expr(r, k->value);
    r->lambda_ok = false;
  }

  if (b != NULL) {
    switch (b->kind) {
    case ASC_BK_FUNC:
    case ASC_BK_DTYPE:
    case ASC_BK_EXC:
      e->u.call.builtin = b;
      bind_args(r, e, what, b->min_args, b->max_args,
                builtin_param_names(r, b), NULL);
      if (b->id == ASC_BI_NP_NORM && e->u.call.rargs != NULL)
        asc__rewrite_norm(r, e);
      if (e->u.call.rargs != NULL && asc__rewrite_numpy_more(r, e))
        return;
      asc__rewrite_tuple_axes(r, e, b);
      if (b->id == ASC_BI_NP_CLIP)
        asc__rewrite_clip_none(r, e, false);
      if (b->id == ASC_BI_BARRIER && r->parallel > 0)
        asc__diag_error(r->c, e->loc, "asc.barrier() cannot be used inside "
                        "a parallel loop");
      return;
    default:
      asc__diag_error(r->c, f->loc, "'%s' is not callable", what);
      return;
    }
  }
  if (f->kind == ASC_EXPR_ATTR) {
    const asc__ast_expr *base = f->u.attr.value;
    while (base->kind == ASC_EXPR_ATTR)
      base = base->u.attr.value;
    if (base != f->u.attr.value && base->kind == ASC_EXPR_NAME &&
        base->u.name.sym != NULL && base->u.name.sym->kind == ASC_SYM_MODULE)
      return; /* np.linalg.norm: np.linalg already reported */
    if (f->u.attr.value->kind == ASC_EXPR_NAME &&
        f->u.attr.value->u.name.sym != NULL &&
        (f->u.attr.value->u.name.sym->kind == ASC_SYM_MODULE ||
         f->u.attr.value->u.name.sym->kind == ASC_SYM_FOREIGN))
      return; /* unknown module attribute: already reported */
    b = asc__builtin_method(f->u.attr.attr);
    if (b != NULL && b->id == ASC_BI_NP_SORT && !sort_stmt) {
      asc__diag_error(r->c, f->u.attr.attr_loc, "a.sort() sorts a in place "
                      "and gives None: write it as a statement of its own "
                      "(a a name), or take a sorted copy with np.sort(a)");
      return;
    }
    if (b != NULL) {
      /* a.sum(axis=1) is np.sum(a, axis=1): the receiver goes first */
      asc__ast_expr **args = asc__arena_alloc(
          r->c, sizeof *args * ((size_t)e->u.call.nargs + 1));
      args[0] = f->u.attr.value;
      for (int i = 0; i < e->u.call.nargs; i++)
        args[i + 1] = e->u.call.args[i];
      e->u.call.args = args;
      e->u.call.nargs++;
      e->u.call.builtin = b;
      bind_args(r, e, what, b->min_args, b->max_args,
                builtin_param_names(r, b), NULL);
      if (e->u.call.rargs != NULL && asc__rewrite_numpy_more(r, e))
        return;
      asc__rewrite_tuple_axes(r, e, b);
      if (b->id == ASC_BI_NP_CLIP)
        asc__rewrite_clip_none(r, e, true);
      return;
    }
    if (is_list_method(f->u.attr.attr)) {
      asc__diag_error(r->c, f->u.attr.attr_loc, "lists in kernels have a "
                      "fixed length ('.%s()'): a list display is read as "
                      "a tuple; write the list whole, as a display or a "
                      "comprehension, or keep values that change in an "
                      "array (np.empty(n), asc.local_array)",
                      f->u.attr.attr);
      return;
    }
    asc__diag_error(r->c, f->u.attr.attr_loc, "method calls are not "
                    "supported in kernels ('.%s()'; array methods kernels "
                    "accept: sum, prod, min, max, mean, var, std, any, all, "
                    "argmin, argmax, dot, clip, copy, astype, fill, reshape, "
                    "transpose, ravel, flatten, cumsum, cumprod, round, argsort, "
                    "repeat)", f->u.attr.attr);
    return;
  }
  {
    asc__sym *s = f->u.name.sym;
    if (s == NULL)
      return;
    if (s->kind == ASC_SYM_FUNC) {
      asc__ast_func *g = s->u.func;
      const char **names;
      asc__ast_expr **defs;
      int min = 0;
      if (g->kind == ASC_FUNC_KERNEL) {
        asc__diag_error(r->c, f->loc, "'%s' is a kernel and cannot be called "
                        "from kernel code (make it an @asc.func helper)",
                        g->name);
        return;
      }
      if (g->kind == ASC_FUNC_PLAIN) {
        asc__diag_error(r->c, f->loc, "'%s' is a Python function; decorate "
                        "it with @asc.func to call it from a kernel",
                        g->name);
        return;
      }
      /* a nested def (or `f = lambda ...`) called is a helper, as an
       * @asc.func is, inlined where it is called: the locals of the
       * function around it that it reads (a closure's, read-only: an
       * assignment makes a name its own) are read there, with the
       * values they hold at the call, as Python's closures read them */
      if (g->kind == ASC_FUNC_NESTED)
        g->kind = ASC_FUNC_HELPER;
      names = asc__arena_alloc(r->c, (size_t)(g->nparams + 1) * sizeof *names);
      defs = asc__arena_alloc(r->c, (size_t)(g->nparams + 1) * sizeof *defs);
      for (int i = 0; i < g->nparams; i++) {
        names[i] = g->params[i].name;
        defs[i] = g->params[i].def;
        if (g->params[i].def == NULL)
          min = i + 1;
      }
      e->u.call.callee = g;
      bind_args(r, e, g->name, min, g->nparams, names, defs);
      if (r->fn != NULL) {
        asc__ast_func *top = r->fn;
        while (top->parent != NULL)
          top = top->parent;
        for (int i = 0; i < top->ncallees; i++)
          if (top->callees[i] == g)
            return;
        {
          asc__ast_func **nc = asc__arena_alloc(
              r->c, (size_t)(top->ncallees + 1) * sizeof *nc);
          if (top->ncallees)
            memcpy(nc, top->callees, (size_t)top->ncallees * sizeof *nc);
          nc[top->ncallees++] = g;
          top->callees = nc;
        }
      }
      return;
    }
    if (s->kind == ASC_SYM_CLASS) {
      asc__ast_class *k = s->u.cls;
      const char **names;
      asc__ast_expr **defs;
      int min = 0;
      if (k->unsupported != NULL)
        return; /* reported by name_use */
      names = asc__arena_alloc(r->c, (size_t)(k->nfields + 1) * sizeof *names);
      defs = asc__arena_alloc(r->c, (size_t)(k->nfields + 1) * sizeof *defs);
      for (int i = 0; i < k->nfields; i++) {
        names[i] = k->fields[i].name;
        defs[i] = k->fields[i].def;
        if (k->fields[i].def == NULL)
          min = i + 1;
      }
      e->u.call.cls = k;
      bind_args(r, e, k->name, min, k->nfields, names, defs);
      return;
    }
    if (s->kind == ASC_SYM_MODULE || s->kind == ASC_SYM_FOREIGN ||
        (s->kind == ASC_SYM_CONST && !is_num(&s->u.cnst->folded)))
      return; /* reported by name_use */
    asc__diag_error(r->c, f->loc, "'%s' is not callable", f->u.name.id);
  }
}

/* The names a comprehension's target binds, visible in the clauses after
 * it and in the element (Python 3: not outside the comprehension). */
static void comp_target(resolver *r, asc__ast_expr *t) {
  if (t->kind == ASC_EXPR_TUPLE) {
    for (int i = 0; i < t->u.tuple.n; i++)
      comp_target(r, t->u.tuple.elts[i]);
    return;
  }
  if (t->kind != ASC_EXPR_NAME) {
    asc__diag_error(r->c, t->loc, "a comprehension's target must be a name "
                    "or a tuple of names");
    return;
  }
  t->u.name.sym = new_sym(r, ASC_SYM_COMP_VAR, t->u.name.id, t->loc);
  t->u.name.sym->owner = r->fn;
  vpush(r, &r->comp, t->u.name.sym);
}

/* A call of Python's builtin `name` (not shadowed by a kernel name). */
static bool py_call(resolver *r, const asc__ast_expr *e, const char *name) {
  const asc__ast_expr *f = e->u.call.func;
  return f->kind == ASC_EXPR_NAME && strcmp(f->u.name.id, name) == 0 &&
         lookup(r, name) == NULL;
}

static void comprehension(resolver *r, asc__ast_comp *c) {
  int n0 = r->comp.n;
  for (int i = 0; i < c->nfors; i++) {
    asc__ast_expr *it = c->fors[i].iter;
    /* zip() and enumerate() of sequences of static length: inference
     * reads them by name */
    if (it->kind == ASC_EXPR_CALL &&
        (py_call(r, it, "zip") || py_call(r, it, "enumerate"))) {
      if (it->u.call.nkws > 0)
        asc__diag_error(r->c, it->loc, "%s() in a comprehension takes "
                        "positional arguments only",
                        it->u.call.func->u.name.id);
      for (int j = 0; j < it->u.call.nargs; j++)
        expr(r, it->u.call.args[j]);
    } else {
      expr(r, it);
    }
    comp_target(r, c->fors[i].target);
    if (c->fors[i].cond != NULL)
      expr(r, c->fors[i].cond);
  }
  expr(r, c->elt);
  r->comp.n = n0;
}

/* Makes a, in place, the comprehension `v for v in a` (unless it is a
 * comprehension or a display already): inference unrolls it into the
 * tuple a[0], a[1], ... of a's static length. */
static void as_sequence(resolver *r, asc__ast_expr *a) {
  asc__ast_comp *c;
  asc__ast_expr *v, *it;
  if (a->kind == ASC_EXPR_COMP)
    return;
  c = asc__arena_alloc(r->c, sizeof *c);
  v = asc__arena_alloc(r->c, sizeof *v);
  it = asc__arena_alloc(r->c, sizeof *it);
  *it = *a;
  v->kind = ASC_EXPR_NAME;
  v->loc = a->loc;
  v->depth = 1;
  v->u.name.id = "<element>";
  c->elt = asc__arena_alloc(r->c, sizeof *c->elt);
  *c->elt = *v;
  c->fors = asc__arena_alloc(r->c, sizeof *c->fors);
  c->fors[0].target = v;
  c->fors[0].iter = it;
  c->nfors = 1;
  c->list = a->kind == ASC_EXPR_TUPLE && a->u.tuple.list;
  memset(a, 0, sizeof *a);
  a->kind = ASC_EXPR_COMP;
  a->loc = it->loc;
  a->depth = it->depth + 1;
  a->comp = c;
}

/* tuple(x), list(x) and sum(x) of a sequence of static length become
 * the comprehension `v for v in x` (or x's own), which inference unrolls:
 * a tuple of x's elements, or their sum.  True when e was rewritten. */
static bool sequence_call(resolver *r, asc__ast_expr *e) {
  bool is_sum = py_call(r, e, "sum"), is_list = py_call(r, e, "list");
  asc__ast_expr *a;
  if (!is_sum && !is_list && !py_call(r, e, "tuple"))
    return false;
  if (e->u.call.nargs != 1 || e->u.call.nkws > 0) {
    asc__diag_error(r->c, e->loc, "%s() in a kernel takes one sequence of "
                    "static length (%s)", e->u.call.func->u.name.id,
                    is_sum ? "sum(x), without a start value"
                           : "a tuple, a shape or a comprehension");
    return false;
  }
  a = e->u.call.args[0];
  as_sequence(r, a);
  {
    asc__loc loc = e->loc;
    *e = *a;
    e->loc = loc;
  }
  e->comp->list = is_list;
  e->comp->sum = is_sum;
  return true;
}

static void expr(resolver *r, asc__ast_expr *e) {
  if (e == NULL)
    return;
  switch (e->kind) {
  case ASC_EXPR_NAME:
    if (asc__resolve_numpy_name(r, e)) {
      expr(r, e);
      return;
    }
    name_use(r, e, false);
    return;
  case ASC_EXPR_INT:
  case ASC_EXPR_FLOAT:
  case ASC_EXPR_BOOL:
  case ASC_EXPR_NONE:
  case ASC_EXPR_STR:
    return;
  case ASC_EXPR_TUPLE:
    for (int i = 0; i < e->u.tuple.n; i++)
      expr(r, e->u.tuple.elts[i]);
    return;
  case ASC_EXPR_COMP:
    comprehension(r, e->comp);
    return;
  case ASC_EXPR_ATTR: {
    asc__ast_expr *v = e->u.attr.value;
    if (v->kind == ASC_EXPR_NAME) {
      if (v->u.name.sym == NULL || v->u.name.sym != r->np_module)
        name_use(r, v, true);
      if (is_numpy(v->u.name.sym)) {
        numpy_error(r, e->loc,
                    asc__arena_printf(r->c, "%s.%s", v->u.name.id,
                                      e->u.attr.attr),
                    e->u.attr.attr);
        return;
      }
      if (v->u.name.sym != NULL && v->u.name.sym->kind == ASC_SYM_MODULE &&
          v->u.name.sym->u.module == ASC_NS_NP &&
          strcmp(e->u.attr.attr, "newaxis") == 0) {
        e->kind = ASC_EXPR_NONE; /* np.newaxis is None */
        return;
      }
      if (v->u.name.sym != NULL && v->u.name.sym->kind == ASC_SYM_MODULE) {
        asc__namespace ns = v->u.name.sym->u.module;
        const asc__builtin *b = asc__builtin_lookup(ns, e->u.attr.attr);
        if (b != NULL && (b->id == ASC_BI_CM_INFJ || b->id == ASC_BI_CM_NANJ)) {
          /* cmath.infj, cmath.nanj: the imaginary literals infj, nanj */
          bool nanj = b->id == ASC_BI_CM_NANJ;
          e->kind = ASC_EXPR_FLOAT;
          e->u.fval = nanj ? NAN : HUGE_VAL;
          e->imag = true;
          return;
        }
        if (b == NULL && ns == ASC_NS_CMATH)
          asc__diag_error(r->c, e->u.attr.attr_loc, "%s.%s is not supported "
                          "in kernels (cmath names kernels accept: %s)",
                          v->u.name.id, e->u.attr.attr, asc__cmath_names);
        else if (b == NULL && ns == ASC_NS_NP)
          asc__diag_error(r->c, e->u.attr.attr_loc, "%s.%s is not supported "
                          "in kernels yet (numpy names kernels accept: %s)",
                          v->u.name.id, e->u.attr.attr, asc__numpy_names);
        else if (b == NULL)
          asc__diag_error(r->c, e->u.attr.attr_loc, "%s.%s is not supported "
                          "in kernels (module '%s' has no kernel builtin "
                          "'%s')", v->u.name.id, e->u.attr.attr,
                          ns == ASC_NS_ASC ? "asc" : "math", e->u.attr.attr);
        else if (b->kind == ASC_BK_DECORATOR)
          asc__diag_error(r->c, e->loc, "%s.%s is a decorator, not a value",
                          v->u.name.id, e->u.attr.attr);
        e->u.attr.builtin = b;
      }
      return;
    }
    if (v->kind == ASC_EXPR_ATTR && v->u.attr.value->kind == ASC_EXPR_NAME &&
        asc__builtin_is_numpy_sub(v->u.attr.attr)) {
      asc__ast_expr *m = v->u.attr.value;
      name_use(r, m, true);
      if (m->u.name.sym != NULL && m->u.name.sym->kind == ASC_SYM_MODULE &&
          m->u.name.sym->u.module == ASC_NS_NP) {
        e->u.attr.builtin =
            asc__builtin_numpy_sub(v->u.attr.attr, e->u.attr.attr);
        if (e->u.attr.builtin == NULL)
          asc__diag_error(r->c, e->u.attr.attr_loc, "%s.%s.%s is not "
                          "supported in kernels (numpy names kernels "
                          "accept: %s)", m->u.name.id, v->u.attr.attr,
                          e->u.attr.attr, asc__numpy_names);
        return;
      }
    }
    expr(r, v);
    return;
  }
  case ASC_EXPR_SUBSCRIPT:
    expr(r, e->u.sub.value);
    expr(r, e->u.sub.index);
    return;
  case ASC_EXPR_SLICE: /* only inside a subscript: the parser sees to it */
    if (e->u.slice.lower)
      expr(r, e->u.slice.lower);
    if (e->u.slice.upper)
      expr(r, e->u.slice.upper);
    if (e->u.slice.step)
      expr(r, e->u.slice.step);
    return;
  case ASC_EXPR_CALL:
    if (sequence_call(r, e)) {
      expr(r, e);
      return;
    }
    call_expr(r, e);
    return;
  case ASC_EXPR_UNARY:
    expr(r, e->u.unary.operand);
    return;
  case ASC_EXPR_BINARY:
    expr(r, e->u.binary.lhs);
    expr(r, e->u.binary.rhs);
    return;
  case ASC_EXPR_BOOLOP:
    expr(r, e->u.boolop.lhs);
    expr(r, e->u.boolop.rhs);
    return;
  case ASC_EXPR_COMPARE:
    for (int i = 0; i <= e->u.cmp.n; i++)
      expr(r, e->u.cmp.operands[i]);
    return;
  case ASC_EXPR_IFEXP:
    expr(r, e->u.ifexp.cond);
    expr(r, e->u.ifexp.then);
    expr(r, e->u.ifexp.orelse);
    return;
  case ASC_EXPR_LAMBDA: {
    asc__ast_func *f = e->u.lambda.fn;
    bool ok = r->lambda_ok;
    r->lambda_ok = false;
    if (!ok) {
      if (f->body.n == 1 && f->body.stmts[0]->kind != ASC_STMT_RETURN)
        asc__diag_error(r->c, e->loc, "a lambda whose body is an "
                        "assignment is only allowed as the body of "
                        "asc.parallel_for");
      else
        asc__diag_error(r->c, e->loc, "lambda is only supported as the "
                        "body of asc.parallel_for or assigned to a name "
                        "(f = lambda x: ..., then f(...))");
      return;
    }
    r->parallel++;
    function(r, f);
    r->parallel--;
    return;
  }
  case ASC_EXPR_COUNT:
    break;
  }
}

/* Annotations name types: asc.float32, int, asc.Tensor[asc.float32, 2],
 * a struct class. */
static void annotation(resolver *r, asc__ast_expr *e) {
  if (e == NULL)
    return;
  if (e->kind == ASC_EXPR_STR) {
    asc__diag_error(r->c, e->loc, "string annotations are not supported in "
                    "kernels");
    return;
  }
  expr(r, e);
}

static void target(resolver *r, asc__ast_expr *t) {
  switch (t->kind) {
  case ASC_EXPR_NAME:
    t->u.name.sym = lookup(r, t->u.name.id);
    if (t->u.name.sym != NULL)
      t->u.name.sym->bound = true;
    return;
  case ASC_EXPR_TUPLE:
    for (int i = 0; i < t->u.tuple.n; i++)
      target(r, t->u.tuple.elts[i]);
    return;
  default:
    expr(r, t);
    return;
  }
}

/* ------------------------------------------------------------ statements */

/* `x = v` in the function's own body (run once, in order) where x is a
 * local already bound: from here on x is a new version of the variable,
 * which may hold an array of another type, as Python's names may
 * (datacol = a[:, 0], then datacol = np.zeros(n); x = x.astype(...)):
 * inference decides (asc__sym.prev).  Not in functions with nested defs
 * or lambdas, which may read x later. */
static void new_version(resolver *r, asc__ast_expr *t) {
  asc__sym *old = find(r, r->locals, t->u.name.id), *s;
  if (old == NULL || old->kind != ASC_SYM_LOCAL || !old->bound ||
      old->owner != r->fn || r->fn->has_nested)
    return;
  s = new_sym(r, ASC_SYM_LOCAL, old->name, t->loc);
  s->prev = old;
  s->owner = r->fn;
  s->u.index = r->locals->n;
  vpush(r, r->locals, s);
}

static bool is_exc_class(asc__ast_expr *e) {
  const asc__builtin *b = asc__expr_builtin(e);
  return b != NULL && b->kind == ASC_BK_EXC;
}

static void for_stmt(resolver *r, asc__ast_stmt *s) {
  asc__ast_expr *it = s->u.for_.iter;
  const asc__builtin *b = NULL;
  target(r, s->u.for_.target);
  if (s->u.for_.target->kind != ASC_EXPR_NAME)
    asc__diag_error(r->c, s->u.for_.target->loc, "the target of a kernel "
                    "'for' loop must be a single name");
  if (s->u.for_.over_array) {
    s->u.for_.loop = ASC_BI_RANGE;
    expr(r, s->u.for_.stop);
    block(r, &s->u.for_.body);
    return;
  }
  expr(r, it);
  if (it->kind == ASC_EXPR_CALL)
    b = it->u.call.builtin;
  if (b == NULL || (b->id != ASC_BI_RANGE && b->id != ASC_BI_PRANGE &&
                    b->id != ASC_BI_STATIC_RANGE)) {
    asc__diag_error(r->c, it->loc, "kernel 'for' loops iterate over "
                    "range(), asc.prange(), asc.static_range(), an array, "
                    "zip() or enumerate()");
  } else if (it->u.call.rargs != NULL) {
    asc__ast_expr **a = it->u.call.rargs;
    s->u.for_.loop = b->id;
    if (a[1] == NULL) {     /* range(stop) */
      s->u.for_.stop = a[0];
    } else {
      s->u.for_.start = a[0];
      s->u.for_.stop = a[1];
      s->u.for_.step = a[2];
    }
  }
  if (b != NULL && b->id == ASC_BI_PRANGE) {
    r->parallel++;
    block(r, &s->u.for_.body);
    r->parallel--;
  } else {
    block(r, &s->u.for_.body);
  }
}

static void stmt(resolver *r, asc__ast_stmt *s) {
  asc__cctx_tick(r->c, "resolve");
  switch (s->kind) {
  case ASC_STMT_EXPR:
    if (asc__rewrite_op_ufunc_out(r, s) || asc__rewrite_sort_stmt(r, s)) {
      stmt(r, s); /* now an assignment */
      return;
    }
    expr(r, s->u.expr.value);
    return;
  case ASC_STMT_ASSIGN:
    expr(r, s->u.assign.value);
    if (s == r->top && s->u.assign.ntargets == 1 &&
        s->u.assign.targets[0]->kind == ASC_EXPR_NAME)
      new_version(r, s->u.assign.targets[0]);
    for (int i = 0; i < s->u.assign.ntargets; i++)
      target(r, s->u.assign.targets[i]);
    return;
  case ASC_STMT_AUGASSIGN:
    expr(r, s->u.aug.value);
    target(r, s->u.aug.target);
    /* `out += v` reads out first (and changes a caller's array in place) */
    if (s->u.aug.target->kind == ASC_EXPR_NAME &&
        s->u.aug.target->u.name.sym != NULL)
      s->u.aug.target->u.name.sym->read = true;
    return;
  case ASC_STMT_ANNASSIGN:
    annotation(r, s->u.ann.annotation);
    expr(r, s->u.ann.value);
    target(r, s->u.ann.target);
    return;
  case ASC_STMT_IF:
    expr(r, s->u.if_.cond);
    block(r, &s->u.if_.body);
    block(r, &s->u.if_.orelse);
    return;
  case ASC_STMT_FOR:
    for_stmt(r, s);
    return;
  case ASC_STMT_WHILE:
    expr(r, s->u.while_.cond);
    block(r, &s->u.while_.body);
    return;
  case ASC_STMT_BREAK:
  case ASC_STMT_CONTINUE:
  case ASC_STMT_PASS:
    return;
  case ASC_STMT_RETURN:
    expr(r, s->u.ret.value);
    return;
  case ASC_STMT_ASSERT:
    expr(r, s->u.assert_.test);
    expr(r, s->u.assert_.msg);
    return;
  case ASC_STMT_RAISE: {
    asc__ast_expr *x = s->u.raise.exc;
    if (x == NULL) {
      if (r->handlers == 0)
        asc__diag_error(r->c, s->loc, "bare 'raise' is only allowed inside "
                        "an 'except' block");
      return;
    }
    expr(r, x);
    if (!(is_exc_class(x) ||
          (x->kind == ASC_EXPR_CALL && is_exc_class(x->u.call.func))))
      asc__diag_error(r->c, x->loc, "'raise' takes an exception class, "
                      "e.g. raise ValueError(\"message\")");
    return;
  }
  case ASC_STMT_TRY:
    block(r, &s->u.try_.body);
    for (int i = 0; i < s->u.try_.nhandlers; i++) {
      asc__ast_handler *h = &s->u.try_.handlers[i];
      if (h->type != NULL) {
        expr(r, h->type);
        if (h->type->kind == ASC_EXPR_TUPLE) {
          for (int j = 0; j < h->type->u.tuple.n; j++)
            if (!is_exc_class(h->type->u.tuple.elts[j]))
              asc__diag_error(r->c, h->type->u.tuple.elts[j]->loc,
                              "'except' takes exception classes");
        } else if (!is_exc_class(h->type)) {
          asc__diag_error(r->c, h->type->loc, "'except' takes exception "
                          "classes");
        }
      }
      if (h->name != NULL)
        h->name_sym = lookup(r, h->name);
      r->handlers++;
      block(r, &h->body);
      r->handlers--;
    }
    block(r, &s->u.try_.orelse);
    block(r, &s->u.try_.finalbody);
    return;
  case ASC_STMT_WITH: {
    asc__ast_expr *x = s->u.with.ctx;
    expr(r, x);
    if (x->kind != ASC_EXPR_CALL || x->u.call.builtin == NULL ||
        x->u.call.builtin->id != ASC_BI_CRITICAL)
      asc__diag_error(r->c, x->loc, "only 'with asc.critical():' is "
                      "supported in kernels");
    block(r, &s->u.with.body);
    return;
  }
  case ASC_STMT_FUNCDEF:
    r->parallel++;
    function(r, s->u.funcdef.fn);
    r->parallel--;
    return;
  case ASC_STMT_COUNT:
    return;
  }
}

static void block(resolver *r, asc__ast_block *b) {
  for (int i = 0; i < b->n; i++)
    stmt(r, b->stmts[i]);
}

static void function(resolver *r, asc__ast_func *f) {
  asc__ast_func *saved_fn = r->fn;
  vec *saved_locals = r->locals;
  int saved_handlers = r->handlers;
  const asc__ast_stmt *saved_top = r->top;
  vec *locals = asc__arena_alloc(r->c, sizeof *locals);

  /* defaults and annotations live in the enclosing scope */
  for (int i = 0; i < f->nparams; i++) {
    annotation(r, f->params[i].annotation);
    expr(r, f->params[i].def);
  }
  annotation(r, f->returns);

  for (int i = 0; i < f->nparams; i++) {
    asc__sym *s = new_sym(r, ASC_SYM_PARAM, f->params[i].name,
                          f->params[i].loc);
    s->owner = f;
    s->u.index = i;
    f->params[i].sym = s;
    vpush(r, locals, s);
  }
  asc__rewrite_shape_sets(r, f, &f->body);
  collect(r, f, locals, &f->body);
  f->locals = (asc__sym **)locals->v;
  f->nlocals = locals->n;
  for (int i = f->nparams; i < locals->n; i++)
    if (((asc__sym *)locals->v[i])->kind == ASC_SYM_LOCAL ||
        ((asc__sym *)locals->v[i])->kind == ASC_SYM_EXC_VAR)
      ((asc__sym *)locals->v[i])->u.index = i;

  r->fn = f;
  r->locals = locals;
  r->handlers = 0;
  for (int i = 0; i < f->body.n; i++) {
    r->top = f->body.stmts[i];
    stmt(r, f->body.stmts[i]);
  }
  r->top = saved_top;
  f->locals = (asc__sym **)locals->v; /* with the new versions */
  f->nlocals = locals->n;
  r->fn = saved_fn;
  r->locals = saved_locals;
  r->handlers = saved_handlers;
}

/* --------------------------------------------------------- recursion */

/* Depth-first search over helper calls; colour 1 = on the stack. */
static void check_recursion(resolver *r, asc__ast_func *f, asc__ast_func **stack,
                            int depth, unsigned char *colour,
                            asc__ast_func **all, int nall) {
  int me = -1;
  for (int i = 0; i < nall; i++)
    if (all[i] == f)
      me = i;
  if (me < 0 || colour[me] == 2)
    return;
  if (colour[me] == 1) {
    int from = 0;
    asc__buf path;
    while (from < depth && stack[from] != f)
      from++;
    asc__buf_init(&path);
    for (int i = from; i < depth; i++)
      asc__buf_printf(&path, "%s -> ", stack[i]->name);
    asc__buf_puts(&path, f->name);
    if (path.oom) {
      asc__buf_free(&path);
      asc__cctx_throw(r->c, ASC_FAIL_OOM);
    }
    {
      char msg[512];
      snprintf(msg, sizeof msg, "%s", asc__buf_str(&path));
      asc__buf_free(&path);
      asc__diag_error(r->c, f->loc, "recursion is not supported in kernels "
                      "(%s)", msg);
    }
    return;
  }
  colour[me] = 1;
  stack[depth] = f;
  for (int i = 0; i < f->ncallees; i++)
    check_recursion(r, f->callees[i], stack, depth + 1, colour, all, nall);
  colour[me] = 2;
}

/* ---------------------------------------------------------------- API */

void asc__resolve(asc__cctx *c, asc__ast_module *m,
                  const ascGlobalValue *globals, int nglobals) {
  resolver R, *r = &R;
  vec empty = {0};

  memset(r, 0, sizeof *r);
  r->c = c;
  r->m = m;
  r->globals = globals;
  r->nglobals = globals != NULL && nglobals > 0 ? nglobals : 0;
  r->locals = &empty;
  module_scope(r);

  for (int i = 0; i < m->nfuncs; i++) {
    asc__ast_func *f = m->funcs[i];
    if (f->kind != ASC_FUNC_KERNEL && f->kind != ASC_FUNC_HELPER)
      continue;
    r->parallel = 0;
    r->locals = &empty;
    function(r, f);
  }
  for (int i = 0; i < m->nclasses; i++) {
    asc__ast_class *k = m->classes[i];
    if (k->unsupported != NULL)
      continue;
    for (int j = 0; j < k->nfields; j++) {
      annotation(r, k->fields[j].annotation);
      expr(r, k->fields[j].def);
    }
  }
  {
    unsigned char *colour = asc__arena_alloc(c, (size_t)m->nfuncs + 1);
    asc__ast_func **stack =
        asc__arena_alloc(c, ((size_t)m->nfuncs + 1) * sizeof *stack);
    for (int i = 0; i < m->nfuncs; i++)
      if (m->funcs[i]->kind == ASC_FUNC_HELPER)
        check_recursion(r, m->funcs[i], stack, 0, colour, m->funcs,
                        m->nfuncs);
  }
}

asc__ast_module *asc__frontend(asc__cctx *c, const ascGlobalValue *globals,
                               int nglobals) {
  asc__ast_module *m;
  c->phase = "parse";
  m = asc__parse(c);
  if (c->nerrors > 0)
    asc__cctx_throw(c, ASC_FAIL_ERRORS);
  asc__cctx_budget(c, "parse");
  c->phase = "resolve";
  asc__resolve(c, m, globals, nglobals);
  if (c->nerrors > 0)
    asc__cctx_throw(c, ASC_FAIL_ERRORS);
  asc__cctx_budget(c, "resolve");
  return m;
}

asc__sym *asc__resolve_lookup(resolver *r, const char *name) {
  return lookup(r, name);
}

void asc__resolve_expr(resolver *r, asc__ast_expr *e) { expr(r, e); }

asc__ast_func *asc__module_func(const asc__ast_module *m, const char *name) {
  for (int i = m->nfuncs - 1; i >= 0; i--)
    if (strcmp(m->funcs[i]->name, name) == 0)
      return m->funcs[i];
  return NULL;
}
