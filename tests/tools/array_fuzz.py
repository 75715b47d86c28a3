#!/usr/bin/env python3
"""numpy-differential fuzzer for array expressions in kernels (issue 16).

Generates random kernels

    @asc.kernel
    def k(out, a, b, c):             # the inputs the expression uses
        out[...] = <expr>            # or out[1:-1, ::-2] = ..., out += ...,
                                     # out[1:] = out[:-1] * a ... (overlap)

over random shapes (broadcasting: missing leading axes and length-1 axes),
dtypes (float32, float64, int32, int64), basic slices (negative bounds,
negative steps, an integer index that drops an axis) and overlap between
the target and a source.  Each kernel is compiled with asc.compile and run;
the reference is the same function run by CPython on numpy arrays.  It
prints how many kernels compiled, matched, mismatched, and were rejected
(grouped by the first diagnostic), and the text of every mismatch.

    python3 tests/tools/array_fuzz.py --seed 1 --count 200
    python3 tests/tools/array_fuzz.py --mode loop --count 100   # see below
    python3 tests/tools/array_fuzz.py --seed 7 --count 1 --show  # print the kernels
    python3 tests/tools/array_fuzz.py --seed 9 --count 100000 --batch 50 --opt 0

--batch N puts N cases in one module, compiled ahead of time by ascc in
one C compilation (asc.load_module runs it); --opt 0 compiles that C at
-O0 (libasc's own passes are the same).  That is what makes 10^5 cases a
run of well under an hour by hand; a module that does not compile (a
kernel rejected) is redone case by case with asc.compile.

--mode array (the default) writes the kernels as array statements: today
libasc rejects nearly all of them (no slices or whole-array arithmetic yet).
--mode loop writes the same computation as an explicit loop nest over the
elements (out[i0, i1] = a[2 + -2 * i1] + ..., the outer loop an asc.prange
half of the time, no overlap forms): what
libasc compiles today, checked against numpy's array semantics (dtype
promotion, weak Python scalars, conversion on store, floor division and
modulo of negative numbers, slice index arithmetic).  --mode both does each
case both ways.  What libasc is known to do differently from numpy is not
generated unless --known-diffs: it promotes by JAX's lattice (docs/types.md:
int op float32 is float32, numpy says float64), np.sqrt of an int8 is
float64 (numpy float16), and np.* of Python scalars stays weak (numpy: a
strong float64/int64, so np.maximum(2.0, 0.5) + float32 is float64).

Exit status 1 if any kernel mismatched numpy or hit an internal error; 0
otherwise (rejections are expected until array expressions land).  The
kernel being run is also written to --last (default
$TMPDIR/array_fuzz_last.py), so a crash leaves its reproducer behind.
"""
import argparse
import collections
import os
import random
import re
import sys
import tempfile
import subprocess
import textwrap
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bindings" / "python"))
os.environ.setdefault("ASC_CACHE_DIR", tempfile.mkdtemp(prefix="asc-array-fuzz-"))

import asc  # noqa: E402

DTYPES = ["float32", "float64", "int32", "int64"]
HEADER = "import numpy as np\nimport asc\n\n\n@asc.kernel\n"


# ---- views: a base array, an index text, the view's shape ----------------

def _dim_slice(rng, n):
    """A slice of some base length L whose length is n: (L, text, start, step)."""
    step = rng.choice([1, 1, 1, 2, -1, -1, -2, 3])
    span = (n - 1) * abs(step) + 1
    L = span + rng.randint(0, 3)
    if step > 0:
        start = rng.randint(0, L - span)
        stop = start + span                       # exclusive, <= L
        s_txt = "" if start == 0 and rng.random() < 0.5 else str(
            start - L if rng.random() < 0.3 else start)
        if stop == L and rng.random() < 0.5:
            e_txt = ""
        else:
            e_txt = str(stop - L) if (stop < L and rng.random() < 0.5) else str(stop)
    else:
        start = rng.randint(span - 1, L - 1)
        stop = start - span                       # exclusive, >= -1
        s_txt = "" if start == L - 1 and rng.random() < 0.5 else str(
            start - L if rng.random() < 0.5 else start)
        e_txt = "" if stop < 0 else str(stop - L if rng.random() < 0.5 else stop)
    if e_txt == "" and stop not in (L, -1):
        e_txt = str(stop)
    st_txt = "" if step == 1 else str(step)
    text = f"{s_txt}:{e_txt}" + (f":{st_txt}" if st_txt else "")
    return L, text, start, step


class View:
    """How one name is indexed in the kernel: base shape, index text, and
    per view axis (base axis, start, step); integer-indexed base axes fixed."""

    def __init__(self, rng, shape, sliced):
        self.shape = tuple(shape)
        base, parts, axes, fixed = [], [], [], {}
        if sliced and rng.random() < 0.25:       # a leading integer index
            L = rng.randint(2, 4)
            i = rng.randint(0, L - 1)
            fixed[0] = i
            base.append(L)
            parts.append(str(i - L if rng.random() < 0.5 else i))
        for n in self.shape:
            if sliced and rng.random() < 0.8:
                L, txt, start, step = _dim_slice(rng, n)
            else:
                L, txt, start, step = n, ":", 0, 1
            axes.append((len(base), start, step))
            base.append(L)
            parts.append(txt)
        self.base = tuple(base)
        self.axes = axes
        # loop mode: index this axis with negative numbers (all of start - L +
        # step * i is negative when the step is negative)
        self.negative = [step < 0 and rng.random() < 0.5 for (_ax, _st, step) in axes]
        self.fixed = fixed
        self.index = "" if not sliced else "[" + ", ".join(parts) + "]"
        if sliced and all(p == ":" for p in parts):
            self.index = "[...]" if rng.random() < 0.5 else "[" + ", ".join(parts) + "]"
        got = eval("x" + self.index, {"x": np.empty(self.base)}).shape   # noqa: S307
        assert got == self.shape, (self.base, self.index, got, self.shape)

    def element(self, name, ivars):
        """name[...] of the element at view position ivars (aligned right)."""
        idx = [None] * len(self.base)
        for ax, i in self.fixed.items():
            idx[ax] = str(i)
        off = len(ivars) - len(self.shape)
        for k, (ax, start, step) in enumerate(self.axes):
            if self.shape[k] == 1:
                idx[ax] = str(start)
            else:
                iv = ivars[off + k]
                if self.negative[k]:
                    # a run-time negative index: start - L + step * i is in [-L, -1]
                    start -= self.base[ax]
                idx[ax] = (iv if step == 1 else f"{step} * {iv}") if start == 0 else (
                    f"{start} + {iv}" if step == 1 else f"{start} + {step} * {iv}")
        return f"{name}[{', '.join(idx)}]"


# ---- expressions ----------------------------------------------------------

class Expr:
    def __init__(self, kind, *kids, text=None):
        self.kind, self.kids, self.text = kind, kids, text

    def array(self, views):
        k, c = self.kind, self.kids
        if k == "leaf":
            return self.text + views[self.text].index
        if k == "lit":
            return self.text
        if k in "+-*/" or k in ("//", "%", "**"):
            return f"({c[0].array(views)} {k} {c[1].array(views)})"
        if k == "neg":
            return f"(-{c[0].array(views)})"
        if k in ("maximum", "minimum", "abs"):
            return f"np.{k}({', '.join(x.array(views) for x in c)})"
        if k == "sqrt":
            return f"np.sqrt(np.abs({c[0].array(views)}))"
        if k == "cmp":
            return f"({c[0].array(views)} {self.text} {c[1].array(views)})"
        if k == "cast":
            return f"np.{self.text}({c[0].array(views)})"
        if k == "where":
            return (f"np.where({c[0].array(views)} > {c[1].array(views)}, "
                    f"{c[2].array(views)}, {c[3].array(views)})")
        raise AssertionError(k)

    def scalar(self, views, ivars):
        k, c = self.kind, self.kids
        if k == "leaf":
            return views[self.text].element(self.text, ivars)
        if k == "lit":
            return self.text
        if k in "+-*/" or k in ("//", "%", "**"):
            return f"({c[0].scalar(views, ivars)} {k} {c[1].scalar(views, ivars)})"
        if k == "neg":
            return f"(-{c[0].scalar(views, ivars)})"
        if k in ("maximum", "minimum", "abs"):
            return f"np.{k}({', '.join(x.scalar(views, ivars) for x in c)})"
        if k == "sqrt":
            return f"np.sqrt(np.abs({c[0].scalar(views, ivars)}))"
        if k == "cmp":
            return f"({c[0].scalar(views, ivars)} {self.text} {c[1].scalar(views, ivars)})"
        if k == "cast":
            return f"np.{self.text}({c[0].scalar(views, ivars)})"
        if k == "where":
            s = [x.scalar(views, ivars) for x in c]
            return f"({s[2]} if {s[0]} > {s[1]} else {s[3]})"
        raise AssertionError(k)


def _literal(rng, nonzero=False):
    return rng.choice(["2", "3", "0.5", "1.5", "2.0", "4", "-3", "100000"] +
                      ([] if nonzero else ["1", "-1"]))


def _weak(e):
    """True if e has no array operand: only Python literals."""
    return e.kind == "lit" or (e.kind not in ("leaf", "cast") and all(_weak(x) for x in e.kids))


def gen_expr(rng, names, depth, no_sqrt=False, known=False):
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.8:
            return Expr("leaf", text=rng.choice(names))
        return Expr("lit", text=_literal(rng))
    op = rng.choice(["+", "-", "*", "+", "*", "/", "//", "%", "**", "neg", "maximum",
                     "minimum", "abs", "where", "cmp", "cast"] + ([] if no_sqrt else ["sqrt"]))
    sub = lambda: gen_expr(rng, names, depth - 1, no_sqrt, known)   # noqa: E731
    if op in ("/", "//", "%"):
        # divisors are b, c (never 0) or a non-zero literal
        div = (Expr("leaf", text=rng.choice([n for n in names if n in "bc"] or ["b"]))
               if rng.random() < 0.7 else Expr("lit", text=_literal(rng, nonzero=True)))
        return Expr(op, sub(), div)
    if op == "**":
        return Expr(op, sub(), Expr("lit", text="2"))
    leaf = lambda: Expr("leaf", text=rng.choice(names))   # noqa: E731
    if op in ("abs", "sqrt"):
        # numpy functions of Python scalars give strong float64/int64 in
        # numpy and weak values in libasc (a known difference, --known-diffs)
        x = sub()
        return Expr(op, x if known or not _weak(x) else leaf())
    if op == "neg":
        return Expr(op, sub())
    if op == "where":
        x, y = sub(), sub()
        if not known and _weak(x) and _weak(y):
            x = leaf()
        return Expr(op, sub(), sub(), x, y)
    if op == "cmp":       # a bool operand: (x > y) + c
        e = Expr(op, sub(), sub(), text=rng.choice(["<", "<=", ">", ">=", "==", "!="]))
        return Expr(rng.choice(["+", "*"]), e, sub())
    if op == "cast":      # float casts only: an int cast of a huge float differs
        return Expr(op, sub(), text=rng.choice(["float32", "float64"]))
    x, y = sub(), sub()
    if op in ("maximum", "minimum") and not known and _weak(x) and _weak(y):
        x = leaf()
    return Expr(op, x, y)


# ---- cases ------------------------------------------------------------------

FORMS = ["all", "all", "slice", "inplace", "inplace_slice", "overlap"]


class Case:
    def __init__(self, seed, mode_loop, known_diffs=False, dtypes=DTYPES):
        rng = random.Random(seed)
        self.seed = seed
        r = rng.randint(1, 3)
        T = tuple(rng.randint(1, 5) for _ in range(r))
        form = rng.choice(FORMS[:-1] if mode_loop else FORMS)
        if form == "overlap":
            T = (rng.randint(2, 6),)
        self.form, self.T = form, T
        self.dt = {n: rng.choice(dtypes) for n in ("out", "a", "b", "c")}
        kinds = {np.dtype(self.dt[n]).kind for n in "abc"}
        if not known_diffs and kinds & {"i", "u"}:
            # libasc promotes with JAX's lattice (docs/types.md): int op float32 is
            # float32 where numpy gives float64 (and int16 op float16 is float16,
            # numpy float32).  Documented, so not generated unless --known-diffs:
            # with integer inputs, floats are float64.
            self.dt.update({n: "float64" for n in "abc" if np.dtype(self.dt[n]).kind == "f"})
        self.views = {}
        for n in "abc":
            rv = rng.randint(0, len(T)) if rng.random() < 0.4 else len(T)
            shp = tuple(1 if rng.random() < 0.2 else d for d in T[len(T) - rv:])
            if rv == 0:
                shp = (1,)
            self.views[n] = View(rng, shp, sliced=rng.random() < 0.6)
        self.views["out"] = View(rng, T, sliced=form in ("slice", "inplace_slice"))
        if form == "all":
            self.views["out"].index = rng.choice(["[...]", "[:]"] if len(T) == 1 else ["[...]"])
        # np.sqrt of an int8/int16 is float16/float32 in numpy, float64 in
        # libasc (docs/types.md, Builtins): left out unless --known-diffs
        small_int = any(np.dtype(self.dt[n]).kind in "iu" and np.dtype(self.dt[n]).itemsize <= 2
                        for n in "abc")
        self.expr = gen_expr(rng, list("abc"), rng.randint(1, 3),
                             no_sqrt=small_int and not known_diffs, known=known_diffs)
        self.op = rng.choice(["+=", "-=", "*="])
        if form == "overlap":
            n = T[0]
            k = rng.randint(1, 2)
            self.views["out"] = _Shift(n + k, 0 if rng.random() < 0.5 else k, n)
            self.src = _Shift(n + k, k if self.views["out"].start == 0 else 0, n)
        self.rng = rng
        self._loop = None

    def body_array(self):
        out = "out" + self.views["out"].index
        e = self.expr.array(self.views)
        if self.form in ("inplace", "inplace_slice"):
            if self.form == "inplace":
                out = "out"
            return f"    {out} {self.op} {e}\n"
        if self.form == "overlap":
            return f"    {out} = out{self.src.index} * 0.5 + {e}\n"
        return f"    {out} = {e}\n"

    def body_loop(self):
        if self._loop is None:
            self._loop = self._body_loop()
        return self._loop

    def _body_loop(self):
        iv = [f"i{d}" for d in range(len(self.T))]
        lines, ind = [], "    "
        par = self.rng.random() < 0.5      # the outer loop in parallel: out is written
        for d, v in enumerate(iv):         # once per element, so no two iterations race
            rng_fn = "asc.prange" if par and d == 0 else "range"
            lines.append(f"{ind}for {v} in {rng_fn}({self.T[d]}):")
            ind += "    "
        e = self.expr.scalar(self.views, iv)
        tgt = (self.views["out"].element("out", iv) if self.form != "inplace"
               else "out[" + ", ".join(iv) + "]")
        op = self.op if self.form.startswith("inplace") else "="
        lines.append(f"{ind}{tgt} {op} {e}")
        return "\n".join(lines) + "\n"

    def params(self):
        """out and the inputs the expression uses (an unused array parameter
        is typed as a scalar by libasc and fails at launch)."""
        used = set()

        def walk(e):
            if e.kind == "leaf":
                used.add(e.text)
            for x in e.kids:
                walk(x)
        walk(self.expr)
        return ["out"] + sorted(used)

    def text(self, loop):
        return (HEADER + f"def k({', '.join(self.params())}):\n" +
                (self.body_loop() if loop else self.body_array()))

    def inputs(self):
        g = np.random.default_rng(self.seed)
        arrs = {}
        for n in ("out", "a", "b", "c"):
            dt = np.dtype(self.dt[n])
            v = self.views[n]
            shape = v.base if n != "out" or self.form != "inplace" else self.T
            if dt.kind == "f":
                x = g.uniform(0.5, 2.0, shape) * g.choice([-1, 1], shape)
            else:
                x = g.integers(1, 5, shape) * g.choice([-1, 1], shape)
                if n in ("a", "out"):
                    x = g.integers(-4, 5, shape)
            arrs[n] = x.astype(dt)
        return arrs


class _Shift:
    """out[start:start + n] of a 1-d out of length L (the overlap form)."""

    def __init__(self, L, start, n):
        self.base, self.start, self.n = (L,), start, n
        self.index = f"[{start}:{'' if start + n == L else start + n - L}]"
        self.shape = (n,)


# ---- running ----------------------------------------------------------------

def reference(text, ins, params):
    ns = {"np": np}
    src = text.replace(HEADER, "")
    exec(compile(src, "<fuzz>", "exec"), ns)   # noqa: S102 - our own generated text
    args = {k: v.copy() for k, v in ins.items()}
    with np.errstate(all="ignore"):
        ns["k"](*[args[p] for p in params])
    return args["out"]


def close(got, want, float_expr):
    """Element mask: True where got matches want within the dtype's tolerance."""
    if want.dtype.kind == "f":
        rtol = {2: 1e-3, 4: 1e-5}.get(want.dtype.itemsize, 1e-12)
        return np.isclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)
    if float_expr:   # a float truncated to int: rounding may differ by one
        return np.abs(got.astype(np.int64) - want.astype(np.int64)) <= 1
    return got == want


def short(msg):
    msg = str(msg).strip().splitlines()[0] if str(msg).strip() else ""
    msg = re.sub(r"^.*?:\d+:\d+: error: ", "", msg)
    msg = msg.split(" (numpy names kernels accept")[0]
    msg = re.sub(r"'[^']*'", "'…'", msg)
    msg = re.sub(r"\d+-dimensional", "N-dimensional", msg)
    msg = re.sub(r"Tensor\[\w+, \d+\]", "Tensor[…]", msg)
    msg = re.sub(r"\b(float|int)(32|64)\b", "<dtype>", msg)
    return msg[:110]


def prepare(case, loop, stats, args):
    """The case's text, inputs and numpy's result, or None when numpy
    refuses it (counted)."""
    text = case.text(loop)
    Path(args.last).write_text(f"# seed {case.seed}, mode {'loop' if loop else 'array'}\n" + text)
    if args.show:
        print(text)
    ins = case.inputs()
    try:
        try:
            want = reference(case.text(False), ins, case.params())
        except TypeError:
            if not case.form.startswith("inplace") or case.dt["out"] == "float64":
                raise
            # numpy's += casts same_kind only: a float into an int out is refused
            case.dt["out"] = "float64"
            text = case.text(loop)
            Path(args.last).write_text(f"# seed {case.seed}\n" + text)
            ins = case.inputs()
            want = reference(case.text(False), ins, case.params())
    except Exception as e:   # noqa: BLE001 - numpy refuses
        stats["numpy rejects"] += 1
        stats.reasons["numpy: " + short(f"{type(e).__name__}: {e}")] += 1
        return None
    with np.errstate(all="ignore"):
        rhs = eval(case.expr.array(case.views), {"np": np, **ins})   # noqa: S307
    return {"text": text, "ins": ins, "want": want,
            "float_expr": np.asarray(rhs).dtype.kind == "f"}


def judge(case, loop, stats, prep, kernel):
    """Runs kernel() (which compiles the case's kernel, or returns it
    compiled) on copies of the inputs and compares with numpy."""
    text, ins, want = prep["text"], prep["ins"], prep["want"]
    try:
        k = kernel()
        got = {n: v.copy() for n, v in ins.items()}
        k(*[got[p] for p in case.params()])
    except asc.CompileError as e:
        kind = "internal error" if "internal compiler error" in str(e) else "rejected"
        stats[kind] += 1
        stats.reasons[f"{kind}: " + short(e.msg)] += 1
        if kind == "internal error":
            stats.failures.append((case, loop, text, str(e)[:400]))
        return
    except asc.Error as e:
        stats["internal error"] += 1
        stats.reasons["internal error: " + short(e)] += 1
        stats.failures.append((case, loop, text, str(e)[:400]))
        return
    except Exception as e:   # noqa: BLE001 - launch-time TypeError etc.
        if hasattr(e, "kernel_message"):
            # the kernel raised (a float out of an int's range on store raises
            # OverflowError, docs/arrays.md; numpy's cast gives garbage there)
            stats["kernel raised"] += 1
            stats.reasons[f"kernel raised {type(e).__name__}: " + short(e.kernel_message)] += 1
            return
        stats["launch error"] += 1
        stats.reasons["launch: " + short(f"{type(e).__name__}: {e}")] += 1
        return
    stats["compiled"] += 1
    ok = close(got["out"], want, prep["float_expr"])
    if ok.all():
        stats["matched"] += 1
    else:
        stats["mismatched"] += 1
        bad = np.argwhere(~ok)[:3]
        detail = "; ".join(f"out{tuple(i)}: asc {got['out'][tuple(i)]!r}, numpy {want[tuple(i)]!r}"
                           for i in bad)
        ins_txt = ", ".join(f"{n}={ins[n].dtype}{list(ins[n].shape)}" for n in ("out", "a", "b", "c"))
        stats.failures.append((case, loop, text, f"{ins_txt}: {detail}"))


OPT_LEVEL = None   # None: the compiler's default (-O3); --opt


def _compile_one(case, text):
    return asc.compile(text, filename=f"fuzz_{case.seed}.py", opt_level=OPT_LEVEL or 0).k


def run_case(case, loop, stats, args):
    prep = prepare(case, loop, stats, args)
    if prep is not None:
        judge(case, loop, stats, prep, lambda: _compile_one(case, prep["text"]))


# ---- many cases per compiled module (--batch) ------------------------------

_SIG = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8",
        "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
        "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool"}


def _signature(name, case, ins):
    parts = []
    for p in case.params():
        x = ins[p]
        dims = [":"] * (x.ndim - 1) + ["::1"] if x.ndim else []
        parts.append(f"{_SIG[x.dtype.name]}[{', '.join(dims)}]")
    return f"{name}({', '.join(parts)})"


def run_batch(batch, stats, args, workdir):
    """Cases [(case, loop)] as kernels k_0, k_1 ... of one module, compiled
    ahead of time by ascc in one go (one C compilation), then each run
    against numpy.  When the module does not compile (a kernel rejected),
    each case is compiled on its own instead, as without --batch."""
    preps = []
    for case, loop in batch:
        prep = prepare(case, loop, stats, args)
        if prep is not None:
            preps.append((case, loop, prep))
    if not preps:
        return
    defs, sigs = [], []
    for j, (case, loop, prep) in enumerate(preps):
        body = prep["text"][len(HEADER):].replace("def k(", f"def k_{j}(", 1)
        defs.append("@asc.kernel\n" + body)
        sigs.append(_signature(f"k_{j}", case, prep["ins"]))
    src = Path(workdir) / f"batch_{preps[0][0].seed}.py"
    so = src.with_suffix(".so")
    src.write_text(HEADER.replace("@asc.kernel\n", "") + "\n\n".join(defs))
    cmd = [args.ascc, "--emit=so", "-o", str(so)] + ([f"-O{OPT_LEVEL}"] if OPT_LEVEL is not None else [])
    for sg in sigs:
        cmd += ["--signature", sg]
    t = time.monotonic()
    p = subprocess.run(cmd + [str(src)], capture_output=True, text=True)
    stats.compile_secs += time.monotonic() - t
    if p.returncode != 0:
        stats["batches recompiled one by one"] += 1
        for case, loop, prep in preps:
            judge(case, loop, stats, prep, lambda: _compile_one(case, prep["text"]))
        return
    m = asc.load_module(so)
    for j, (case, loop, prep) in enumerate(preps):
        judge(case, loop, stats, prep, lambda: getattr(m, f"k_{j}"))
    stats["modules"] += 1


class Stats(collections.Counter):
    def __init__(self):
        super().__init__()
        self.reasons = collections.Counter()
        self.failures = []
        self.compile_secs = 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--mode", choices=["array", "loop", "both"], default="array")
    ap.add_argument("--show", action="store_true", help="print every kernel")
    ap.add_argument("--dtypes", default=",".join(DTYPES),
                    help="comma-separated numpy dtypes to draw from (default: %(default)s)")
    ap.add_argument("--known-diffs", dest="known_diffs", action="store_true",
                    help="also generate what libasc is known to do differently from numpy: "
                         "float32 (or float16) mixed with int inputs (JAX lattice, docs/types.md), "
                         "np.sqrt of int8/int16, np.maximum/np.abs/np.sqrt/np.where of Python "
                         "scalars only (numpy: a strong float64/int64; libasc: weak)")
    ap.add_argument("--max-failures", type=int, default=10, help="failures printed in full")
    ap.add_argument("--last", default=os.path.join(tempfile.gettempdir(), "array_fuzz_last.py"))
    ap.add_argument("--batch", type=int, default=1,
                    help="cases per compiled module: N > 1 writes N kernels into one "
                         "module and compiles it ahead of time with ascc (one C "
                         "compilation for all), for long runs by hand")
    ap.add_argument("--ascc", default=os.environ.get("ASCC") or str(
                        Path(os.environ.get("ASC_BUILD_DIR", ROOT / "build")) / "ascc"),
                    help="the ascc used by --batch (default: $ASCC, else "
                         "$ASC_BUILD_DIR/ascc, else build/ascc)")
    ap.add_argument("--opt", type=int, choices=[0, 1, 2, 3], default=None,
                    help="with --batch: the C compiler's optimisation level (default "
                         "-O3); -O0/-O1 compile faster for long runs (the libasc passes "
                         "run the same)")
    args = ap.parse_args()
    global OPT_LEVEL
    OPT_LEVEL = args.opt
    if args.batch > 1 and not os.path.exists(args.ascc):
        ap.error(f"--batch needs ascc: {args.ascc} does not exist (--ascc PATH)")

    stats = Stats()
    t0 = time.monotonic()
    pending = []
    workdir = tempfile.mkdtemp(prefix="asc-array-fuzz-batch-")
    for i in range(args.count):
        seed = args.seed * 1_000_003 + i
        modes = {"array": [False], "loop": [True], "both": [False, True]}[args.mode]
        for loop in modes:
            case = Case(seed, mode_loop=loop, known_diffs=args.known_diffs,
                        dtypes=args.dtypes.split(","))
            stats["cases"] += 1
            if args.batch <= 1:
                run_case(case, loop, stats, args)
                continue
            pending.append((case, loop))
            if len(pending) == args.batch:
                run_batch(pending, stats, args, workdir)
                pending = []
    if pending:
        run_batch(pending, stats, args, workdir)
    secs = time.monotonic() - t0

    print(f"array_fuzz seed={args.seed} count={args.count} mode={args.mode}"
          + (f" batch={args.batch}" if args.batch > 1 else ""))
    for k in ("cases", "compiled", "matched", "mismatched", "rejected", "launch error",
              "kernel raised", "internal error", "numpy rejects"):
        print(f"  {k:15s} {stats[k]}")
    if args.batch > 1:
        print(f"  modules         {stats['modules']} (and {stats['batches recompiled one by one']} "
              f"batches compiled case by case); {stats.compile_secs:.1f} s in ascc")
    print(f"  seconds         {secs:.1f} ({stats['cases'] / secs if secs else 0:.1f} cases/s)")
    print("by message:")
    for msg, c in stats.reasons.most_common():
        print(f"  {c:5d}  {msg}")
    for case, loop, text, detail in stats.failures[:args.max_failures]:
        print(f"\n--- seed {case.seed} ({'loop' if loop else 'array'} mode): {detail}")
        print(textwrap.indent(text, "    "))
    return 1 if stats["mismatched"] or stats["internal error"] else 0


if __name__ == "__main__":
    sys.exit(main())
