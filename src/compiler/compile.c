/*
 * The compiler's pipeline in one place (compile.h has the picture).
 */
#include <string.h>

#include "compiler/compile.h"
#include "compiler/emit_c.h"
#include "compiler/lower.h"

static void emit(asc__cctx *c, const asc__irmodule *ir, bool may_alias,
                 asc__buf *c_out) {
  asc__emit_src src;
  memset(&src, 0, sizeof src);
  src.text = c->text;
  src.len = c->len;
  src.first_line = c->first_line;
  src.may_alias = may_alias;
  asc__emit_module(c, ir, &src, c_out);
  asc__cctx_budget(c, "emit");
}

bool asc__compile_kernel(asc__cctx *c, const asc__compile_in *in,
                         asc__compile_out *out, asc__buf *c_out) {
  asc__compile_out local;

  if (out == NULL)
    out = &local;
  memset(out, 0, sizeof *out);

  out->typed = asc__infer_kernel(c, in->module, in->kernel, in->sig);
  if (out->typed == NULL)
    return false;
  asc__cctx_budget(c, "infer");
  if (in->stop == ASC_STOP_TYPES)
    return true;

  out->ir = asc__ir_module_new(c);
  asc__ir_module_add(c, out->ir, asc__lower_kernel(c, out->typed));
  out->ir->funcs[0]->may_alias = in->may_alias;
  asc__ir_pipeline(c, out->ir, in->passes);
  asc__cctx_budget(c, "the passes");
  if (in->stop == ASC_STOP_IR)
    return true;

  ASC_CHECK(c, c_out != NULL);
  emit(c, out->ir, in->may_alias, c_out);
  return true;
}

bool asc__compile_module(asc__cctx *c, asc__ast_module *m,
                         const asc__compile_spec *specs, int n,
                         const asc__pipeline_opts *passes, asc__buf *c_out) {
  asc__irmodule *ir = asc__ir_module_new(c);
  bool ok = true;

  /* Inference clears the tree's types, so each specialisation is lowered
   * before the next one is typed. */
  for (int i = 0; i < n; i++) {
    asc__typed *t = asc__infer_kernel(c, m, specs[i].kernel, specs[i].sig);
    if (t == NULL) {
      ok = false;
      continue;
    }
    asc__cctx_budget(c, "infer");
    asc__ir_module_add(c, ir, asc__lower_kernel(c, t));
    ir->funcs[ir->nfuncs - 1]->may_alias = specs[i].may_alias;
  }
  if (!ok)
    return false;
  asc__ir_pipeline(c, ir, passes);
  asc__cctx_budget(c, "the passes");
  emit(c, ir, n == 1 && specs[0].may_alias, c_out);
  return true;
}
