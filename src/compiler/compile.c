/*
 * The compiler's pipeline in one place (compile.h has the picture).
 */
#include <string.h>

#include "compiler/compile.h"
#include "compiler/emit_c.h"
#include "compiler/lower.h"

bool asc__compile_kernel(asc__cctx *c, const asc__compile_in *in,
                         asc__compile_out *out, asc__buf *c_out) {
  asc__compile_out local;
  asc__emit_src src;

  if (out == NULL)
    out = &local;
  memset(out, 0, sizeof *out);

  out->typed = asc__infer_kernel(c, in->module, in->kernel, in->sig);
  if (out->typed == NULL)
    return false;
  if (in->stop == ASC_STOP_TYPES)
    return true;

  out->ir = asc__ir_module_new(c);
  asc__ir_module_add(c, out->ir, asc__lower_kernel(c, out->typed));
  out->ir->funcs[0]->may_alias = in->may_alias;
  asc__ir_pipeline(c, out->ir, in->passes);
  if (in->stop == ASC_STOP_IR)
    return true;

  ASC_CHECK(c, c_out != NULL);
  memset(&src, 0, sizeof src);
  src.text = c->text;
  src.len = c->len;
  src.first_line = c->first_line;
  src.may_alias = in->may_alias;
  asc__emit_module(c, out->ir, &src, c_out);
  return true;
}
