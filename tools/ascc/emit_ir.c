/*
 * ascc --emit=ir and --emit=c.
 *
 *   ascc --emit=ir --signature 'conv2d(f32[4], f32[4], f32[4])' conv.py
 *   ascc --emit=c  --signature '...' conv.py   the C --emit=so compiles
 *   ascc --emit=ir passes.ir        IR text in (a .ir file), IR out
 *
 * The IR printed is the one after the pass pipeline; ASC_DUMP=fold,licm
 * (or all) also prints it after those passes, on stderr.
 */
#include <stdio.h>
#include <string.h>

#include "emit.h"
#include "compiler/emit_c.h"
#include "compiler/front/frontend.h"
#include "compiler/types/infer.h"
#include "compiler/compile.h"
#include "compiler/passes/passes.h"

static bool is_ir_file(const char *path) {
  size_t n = strlen(path);
  return n > 3 && strcmp(path + n - 3, ".ir") == 0;
}

/* The optimised IR of the file: a .ir file as is, else the kernel the
 * signature names (or the first kernel), lowered. */
static asc__irmodule *build(const ascc_emit_args *a, asc__cctx *c) {
  asc__irmodule *mod;
  if (is_ir_file(a->path)) {
    mod = asc__ir_parse(c, a->text, a->len);
  } else {
    asc__ast_module *m;
    asc__sig *sig;
    asc__ast_func *k = NULL;
    asc__compile_out res;
    if (a->signature == NULL) {
      fprintf(stderr, "ascc: --emit=%s needs --signature 'name(...)'\n",
              a->mode);
      return NULL;
    }
    m = asc__frontend(c, NULL, 0);
    sig = asc__sig_parse(c, a->signature);
    if (sig == NULL)
      asc__cctx_throw(c, ASC_FAIL_ERRORS);
    if (sig->name != NULL) {
      k = ascc_find_kernel(a, m, sig->name);
    } else {
      for (int i = 0; i < m->nfuncs && k == NULL; i++)
        if (m->funcs[i]->kind == ASC_FUNC_KERNEL)
          k = m->funcs[i];
      if (k == NULL)
        fprintf(stderr, "ascc: %s: no @asc.kernel function\n", a->path);
    }
    if (k == NULL)
      return NULL;
    /* as --emit=so and --emit=c: the kernel's own boundscheck= wins */
    if (a->boundscheck && k->opts.boundscheck < 0)
      k->opts.boundscheck = 1;
    asc__compile_in in = {.module = m, .kernel = k, .sig = sig,
                          .stop = ASC_STOP_IR};
    if (!asc__compile_kernel(c, &in, &res, NULL))
      asc__cctx_throw(c, ASC_FAIL_ERRORS);
    return res.ir;
  }
  asc__ir_pipeline(c, mod);
  return mod;
}

int ascc_emit_ir(const ascc_emit_args *a, asc__cctx *c, asc__buf *out) {
  asc__irmodule *mod = build(a, c);
  if (mod == NULL)
    return 2;
  asc__ir_print_module(out, mod);
  return 0;
}

int ascc_emit_c(const ascc_emit_args *a, asc__cctx *c, asc__buf *out) {
  asc__irmodule *mod;
  asc__emit_src src;
  if (!is_ir_file(a->path))
    return ascc_emit_aot_c(a, c, out);
  mod = build(a, c);
  if (mod == NULL)
    return 2;
  memset(&src, 0, sizeof src);
  src.text = is_ir_file(a->path) ? NULL : c->text;
  src.len = c->len;
  src.first_line = c->first_line;
  asc__emit_module(c, mod, &src, out);
  return 0;
}
