/*
 * The compiler's pipeline in one place (compile.h has the picture).
 */
#include <string.h>

#include "compiler/compile.h"
#include "compiler/emit_c.h"
#include "compiler/lower.h"
#include "base/fastmath.h"
#include "base/trace.h"

static void emit(asc__cctx *c, const asc__irmodule *ir, bool may_alias,
                 asc__buf *c_out) {
  asc__emit_src src;
  memset(&src, 0, sizeof src);
  src.text = c->text;
  src.len = c->len;
  src.first_line = c->first_line;
  src.may_alias = may_alias;
  uint64_t t0 = asc__trace_clock();
  asc__emit_module(c, ir, &src, c_out);
  ASC_TRACE(asc__trace_span("compile", "emit C", NULL, c_out->len, t0));
  asc__cctx_budget(c, "emit");
}

bool asc__compile_kernel(asc__cctx *c, const asc__compile_in *in,
                         asc__compile_out *out, asc__buf *c_out) {
  asc__compile_out local;
  uint64_t t0;

  if (out == NULL)
    out = &local;
  memset(out, 0, sizeof *out);

  /* Each stage is a span of the trace (docs/latency.md reads them). */
  t0 = asc__trace_clock();
  out->typed = asc__infer_kernel(c, in->module, in->kernel, in->sig);
  ASC_TRACE(asc__trace_span("compile", "infer types", NULL, 0, t0));
  if (out->typed == NULL)
    return false;
  asc__cctx_budget(c, "infer");
  if (in->stop == ASC_STOP_TYPES)
    return true;

  out->fastmath =
      asc__kernel_fastmath(out->typed, (unsigned)c->opts.code.fastmath);
  t0 = asc__trace_clock();
  out->ir = asc__ir_module_new(c);
  asc__ir_module_add(c, out->ir, asc__lower_kernel(c, out->typed));
  ASC_TRACE(asc__trace_span("compile", "lower", NULL, 0, t0));
  out->ir->funcs[0]->may_alias = in->may_alias;
  asc__ir_pipeline(c, out->ir);
  asc__cctx_budget(c, "the passes");
  out->work_bounded = asc__ir_work_bounded(c, out->ir->funcs[0]);
  if (in->stop == ASC_STOP_IR)
    return true;

  ASC_CHECK(c, c_out != NULL);
  emit(c, out->ir, in->may_alias, c_out);
  return true;
}

bool asc__compile_module(asc__cctx *c, asc__ast_module *m,
                         const asc__compile_spec *specs, int n,
                         asc__buf *c_out, unsigned *fastmath) {
  asc__irmodule *ir = asc__ir_module_new(c);
  bool ok = true;
  unsigned mode = 0;

  /* Inference clears the tree's types, so each specialisation is lowered
   * before the next one is typed. */
  for (int i = 0; i < n; i++) {
    asc__typed *t = asc__infer_kernel(c, m, specs[i].kernel, specs[i].sig);
    if (t == NULL) {
      ok = false;
      continue;
    }
    asc__cctx_budget(c, "infer");
    {
      unsigned fm = asc__kernel_fastmath(t, (unsigned)c->opts.code.fastmath);
      if (ir->nfuncs == 0) {
        mode = fm;
      } else if (fm != mode) {
        asc__buf a, b;
        asc__buf_init(&a);
        asc__buf_init(&b);
        asc__fastmath_names(&a, mode);
        asc__fastmath_names(&b, fm);
        asc__diag_error(c, specs[i].kernel->loc, "kernel '%s' needs "
                        "fastmath={%s} but '%s' needs {%s}: one module "
                        "built ahead of time has one floating-point mode "
                        "(build them as separate modules)",
                        specs[i].kernel->name, asc__buf_str(&b),
                        ir->funcs[0]->name, asc__buf_str(&a));
        asc__buf_free(&a);
        asc__buf_free(&b);
        ok = false;
        continue;
      }
      asc__ir_module_add(c, ir, asc__lower_kernel(c, t));
    }
    ir->funcs[ir->nfuncs - 1]->may_alias = specs[i].may_alias;
  }
  if (fastmath != NULL)
    *fastmath = mode;
  if (!ok)
    return false;
  asc__ir_pipeline(c, ir);
  asc__cctx_budget(c, "the passes");
  emit(c, ir, n == 1 && specs[0].may_alias, c_out);
  return true;
}
