"""Run one corpus kernel against numpy and classify what happened.

Shared by tests/python/test_corpus.py and tests/tools/corpus_report.py.

The reference is the kernel's own Python function (``KERNEL.py_func``) run
by CPython on a copy of the same input: numpy executes every array
statement.  Inside it ``asc.prange`` is ``range`` (the real one raises
KernelOnlyError outside kernels); the module's other names are untouched.
"""
import ast
import importlib
import inspect
import re
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import asc

CORPUS_DIR = Path(__file__).resolve().parent

# statuses, from best to worst
OK = "ok"                    # compiled, ran, matched numpy
DIAG = "diagnostic"          # asc.CompileError at a line inside the kernel
WRONG = "wrong result"       # compiled and ran, differs from numpy
RAISED = "kernel raised"     # the compiled kernel raised a Python exception
DIAG_OUTSIDE = "diagnostic outside the kernel"   # CompileError, line not in the kernel
INTERNAL = "internal error"  # "internal compiler error" or a non-diagnostic asc.Error
LAUNCH = "launch error"      # TypeError/ValueError/... from the launch, no kernel line
CRASH = "crash"              # the process died (corpus_report.py's subprocess only)


def names():
    return sorted(p.stem for p in CORPUS_DIR.glob("*.py") if not p.stem.startswith("_"))


def load(name):
    return importlib.import_module(f"{__package__}.{name}")


@dataclass
class Result:
    name: str
    status: str
    lineno: int = 0
    message: str = ""
    diagnostics: list = field(default_factory=list)   # (lineno, message) of every diagnostic
    detail: str = ""

    def line(self):
        if self.status == DIAG:
            return f"{DIAG} at line {self.lineno}: {self.message}"
        if self.message:
            return f"{self.status}: {self.message}"
        return self.status


class _PrangeAsRange(types.ModuleType):
    """The asc module as the reference sees it: prange is range."""

    def __init__(self):
        super().__init__("asc")

    def __getattr__(self, name):
        if name == "prange":
            return range
        return getattr(asc, name)


def _reference(mod, args):
    fn = mod.KERNEL.py_func
    g = fn.__globals__
    saved = {k: g[k] for k in ("asc",) if k in g}
    g["asc"] = _PrangeAsRange()
    try:
        with np.errstate(all="ignore"):
            return fn(*args)
    finally:
        g.update(saved)


def kernel_line_range(mod):
    """Lines of the module's functions (the kernel and its helpers),
    decorators included."""
    src = Path(mod.__file__).read_text()
    spans = []
    for node in ast.parse(src).body:
        if isinstance(node, ast.FunctionDef) and node.decorator_list:
            spans.append((node.decorator_list[0].lineno, node.end_lineno))
    return spans


def _in_kernel(mod, filename, lineno):
    if not filename or Path(filename).resolve() != Path(mod.__file__).resolve():
        return False
    return any(a <= lineno <= b for a, b in kernel_line_range(mod))


def _tolerance(mod, arr):
    dt = np.asarray(arr).dtype
    if dt.kind in "fc":
        single = dt in (np.float32, np.complex64) or dt.itemsize <= 4
        rtol = getattr(mod, "RTOL", 1e-4 if single else 1e-9)
        atol = getattr(mod, "ATOL", 1e-5 if single else 1e-12)
        return rtol, atol
    return 0, 0


def _compare(mod, got, want, what):
    """None if equal within tolerance, else a short description."""
    if isinstance(want, tuple):
        if not isinstance(got, tuple) or len(got) != len(want):
            return f"{what}: returned {type(got).__name__}, numpy {type(want).__name__} of {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            bad = _compare(mod, g, w, f"{what}[{i}]")
            if bad:
                return bad
        return None
    if want is None:
        return None if got is None else f"{what}: returned {got!r}, numpy None"
    w = np.asarray(want)
    try:
        g = np.asarray(got)
    except Exception:   # noqa: BLE001 - anything not array-like is a mismatch
        return f"{what}: returned {type(got).__name__}"
    if g.shape != w.shape:
        return f"{what}: shape {g.shape}, numpy {w.shape}"
    rtol, atol = _tolerance(mod, w)
    try:
        if rtol == 0:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    except AssertionError as e:
        lines = [ln for ln in str(e).splitlines() if "Mismatched" in ln or "Max abs" in ln]
        return f"{what}: " + "; ".join(s.strip() for s in lines)
    return None


def _first_line(s):
    s = str(s).strip()
    return s.splitlines()[0] if s else ""


def run(name):
    """Compile and run corpus kernel `name`; return a Result."""
    mod = load(name)
    want = _reference(mod, ref_args := mod.args())
    got_args = mod.args()
    try:
        got = mod.KERNEL(*got_args)
    except asc.CompileError as e:
        diags = [(ln, msg) for (_f, ln, _c, msg) in getattr(e, "diagnostics", [])]
        msg = diags[0][1] if diags else _first_line(e.msg)
        if "internal compiler error" in str(e.msg):
            return Result(name, INTERNAL, e.lineno or 0, msg, diags, str(e.msg))
        if not e.lineno or not _in_kernel(mod, e.filename, e.lineno):
            return Result(name, DIAG_OUTSIDE, e.lineno or 0, msg, diags,
                          f"{e.filename}:{e.lineno}")
        return Result(name, DIAG, e.lineno, msg, diags, str(e.msg))
    except asc.Error as e:
        return Result(name, INTERNAL, 0, f"{type(e).__name__}: {_first_line(e)}", [], str(e))
    except Exception as e:   # noqa: BLE001 - every other failure is classified
        ln = getattr(e, "lineno", None)
        if hasattr(e, "kernel_message") and ln and _in_kernel(mod, e.filename, ln):
            return Result(name, RAISED, ln, f"{type(e).__name__}: {e.kernel_message}", [], str(e))
        return Result(name, LAUNCH, 0, f"{type(e).__name__}: {_first_line(e)}", [], str(e))
    bad = _compare(mod, got, want, "result")
    if bad is None:
        for i, (g, w) in enumerate(zip(got_args, ref_args)):
            if isinstance(w, np.ndarray):
                bad = _compare(mod, g, w, f"argument {i}")
                if bad:
                    break
    if bad:
        return Result(name, WRONG, 0, bad)
    return Result(name, OK)


# ---- what blocks each kernel, by construct -------------------------------

# (construct, regex on a diagnostic's message), first match wins
DIAG_CONSTRUCTS = [
    ("slices / views", r"slices are not supported"),
    ("sub-array a[i] of an n-d array", r"indexed with \d+ index(es)?; it needs"),
    ("'@' / matmul", r"matrix multiplication|'@'"),
    ("returning a value", r"cannot return a value"),
    ("complex numbers", r"complex|element format 'Z"),
    ("whole-array arithmetic", r"whole-tensor arithmetic|expected a scalar, got|cannot compare Tensor"),
    ("for over an array / zip / enumerate", r"loops iterate over range|target of a kernel 'for' loop|name '(zip|enumerate)' is not defined"),
    ("list comprehensions", r"list comprehension"),
]


def diag_construct(message):
    # the list of names the compiler accepts (it names complex64 ...) is
    # not what blocks the kernel
    message = message.split(" (numpy names kernels accept")[0]
    m = re.search(r"\b(?:np|numpy)((?:\.\w+)+) is not supported in kernels", message)
    if m:
        return "np" + m.group(1)
    m = re.search(r"\b\w+\.(\w+) is not supported in kernels yet", message)
    if m:
        return "np." + m.group(1)
    m = re.search(r"method calls are not supported in kernels \('(\.\w+)\(\)'[;)]", message)
    if m:
        return "method " + m.group(1) + "()"
    for construct, rx in DIAG_CONSTRUCTS:
        if re.search(rx, message):
            return construct
    return "other: " + re.sub(r"'[^']*'", "'…'", message)[:70]


_MODULES = {"np", "numpy", "math", "asc"}
_CREATE = {"empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "eye",
           "arange", "linspace", "array"}
_SCALAR_NP = {"sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "arctan2", "power", "abs",
              "absolute", "maximum", "minimum", "float32", "float64", "int32", "int64", "pi"}


def source_constructs(mod):
    """What the kernel and its helpers use (a static scan of their AST), as
    a sorted list of construct names."""
    tree = ast.parse(Path(mod.__file__).read_text())
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name != "args"]
    used = set()
    entry = mod.KERNEL.py_func.__name__
    params = list(inspect.signature(mod.KERNEL.py_func).parameters)
    array_params = {p for p, v in zip(params, mod.args()) if isinstance(v, np.ndarray)}
    if any(isinstance(v, np.ndarray) and v.dtype.kind == "c" for v in mod.args()):
        used.add("complex numbers")
    for fn in fns:
        arrays = set(array_params) if fn.name == entry else set()
        arrays |= {n.value.id for n in ast.walk(fn)
                  if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)}
        masks = set()
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign) and isinstance(n.value, (ast.Compare, ast.Call)):
                v = n.value
                is_mask = isinstance(v, ast.Compare) or (
                    isinstance(v.func, ast.Attribute) and v.func.attr in ("logical_and", "less"))
                for t in n.targets:
                    if isinstance(t, ast.Name) and is_mask:
                        masks.add(t.id)
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call):
                f = n.value.func
                if isinstance(f, ast.Attribute) and f.attr in _CREATE:
                    arrays |= {t.id for t in n.targets if isinstance(t, ast.Name)}
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Subscript) and any(
                    isinstance(x, ast.Slice) for x in ast.walk(n.value.slice)):
                arrays |= {t.id for t in n.targets if isinstance(t, ast.Name)}

        def sliced(e):
            return isinstance(e, ast.Subscript) and any(
                isinstance(x, ast.Slice) for x in ast.walk(e.slice))

        def arrayish(e):
            return sliced(e) or (isinstance(e, ast.Name) and e.id in arrays)

        for n in ast.walk(fn):
            if isinstance(n, ast.Subscript):
                if sliced(n):
                    used.add("slices / views")
                idx = n.slice
                if isinstance(idx, ast.Compare) or (isinstance(idx, ast.Name) and idx.id in masks):
                    used.add("boolean masks")
                if isinstance(idx, ast.Name) and idx.id not in masks and idx.id in arrays:
                    used.add("integer-array gathers")
            elif isinstance(n, (ast.BinOp, ast.AugAssign)) and isinstance(n.op, ast.MatMult):
                used.add("'@' / np.dot / np.outer")
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                f = n.func
                base = f.value.id if isinstance(f.value, ast.Name) else None
                if base in ("np", "numpy") or isinstance(f.value, ast.Attribute):
                    if f.attr in _CREATE:
                        used.add("array creation (np.empty/zeros/...)")
                    elif f.attr in ("dot", "outer", "matmul"):
                        used.add("'@' / np.dot / np.outer")
                    elif f.attr in ("sum", "max", "min", "mean", "std", "argmin", "argmax"):
                        used.add("reductions (np.sum/max/mean ...)")
                    elif f.attr in ("reshape", "transpose"):
                        used.add("reshape / transpose / .T")
                    elif f.attr not in _SCALAR_NP:
                        used.add("other numpy functions (np.where, np.linalg, np.triu, ...)")
                elif base not in _MODULES:
                    used.add("array methods (.copy(), .max(), .reshape() ...)")
                if any(k.arg == "axis" for k in n.keywords):
                    used.add("reduction with axis=")
            elif isinstance(n, ast.Attribute) and n.attr in ("T", "flat"):
                used.add("reshape / transpose / .T" if n.attr == "T" else
                         "array methods (.copy(), .max(), .reshape() ...)")
            elif isinstance(n, ast.Constant) and isinstance(n.value, complex):
                used.add("complex numbers")
            elif isinstance(n, ast.Attribute) and n.attr.startswith("complex"):
                used.add("complex numbers")
            elif isinstance(n, ast.ListComp):
                used.add("list comprehensions")
            elif isinstance(n, ast.For) and not (isinstance(n.iter, ast.Call) and isinstance(
                    n.iter.func, (ast.Name, ast.Attribute)) and getattr(
                    n.iter.func, "id", getattr(n.iter.func, "attr", "")) in ("range", "prange")):
                used.add("for over an array / zip / enumerate")
            if isinstance(n, ast.AugAssign) and arrayish(n.target):
                used.add("in-place array operators")
            if isinstance(n, ast.BinOp) and not isinstance(n.op, ast.MatMult) and (
                    arrayish(n.left) or arrayish(n.right)):
                used.add("whole-array arithmetic")
            if isinstance(n, ast.Assign) and any(sliced(t) for t in n.targets):
                used.add("slice assignment")
    for fn in fns:
        if fn.name == entry:
            if any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(fn)):
                used.add("kernel returns a value")
    return sorted(used)


if __name__ == "__main__":   # python3 -m corpus._harness NAME: one kernel, one line
    r = run(sys.argv[1])
    print(f"{r.status}\t{r.lineno}\t{r.message}")
