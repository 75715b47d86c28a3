"""Run one corpus kernel against numpy and classify what happened.

Shared by tests/python/test_corpus.py and tests/tools/corpus_report.py.

The reference is the kernel's own Python function (``KERNEL.py_func``) run
by CPython on a copy of the same input: numpy executes every array
statement.  Inside it ``asc.prange`` is ``range`` (the real one raises
KernelOnlyError outside kernels); the module's other names are untouched.
"""
import ast
import copy
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

# (construct, regex on a diagnostic's message)
DIAG_CONSTRUCTS = [
    ("slices", r"slices are not supported"),
    ("np.<function>", r"\bnp\.\w+ is not supported"),
    ("'@' / matmul", r"matrix multiplication|'@'"),
    ("method calls", r"method calls are not supported"),
    ("returning a value", r"cannot return a value|return a value"),
    ("complex numbers", r"complex"),
    ("whole-array arithmetic", r"cannot (compare|add|subtract|multiply|divide|apply)|Tensor\[.*\] and|expected a scalar, got"),
    ("tuple/other assignment", r"tuple|unpack"),
]


def diag_construct(message):
    for construct, rx in DIAG_CONSTRUCTS:
        if re.search(rx, message):
            if construct == "np.<function>":
                m = re.search(r"\b(np\.\w+) is not supported", message)
                return m.group(1)
            return construct
    return "other: " + re.sub(r"'[^']*'", "'…'", message)[:60]


# (construct, regex on the kernel's source text): what each kernel uses,
# whether or not the compiler reaches it yet
SOURCE_CONSTRUCTS = [
    ("slices / views", r"\[[^\]\n]*:[^\]\n]*\]"),
    ("np.sum/max/min/mean/... reductions", r"\bnp\.(sum|max|min|mean|std|var|argmax|argmin|any|all|prod|cumsum)\(|\.(sum|max|min|mean|argmin|argmax)\("),
    ("reduction with axis=", r"axis\s*="),
    ("array creation (np.empty/zeros/...)", r"\bnp\.(empty|zeros|ones|full|empty_like|zeros_like|ones_like|eye|arange|linspace|array)\("),
    ("'@' / np.dot / np.outer", r"[\w\)\]]\s*@\s*[\w\(]|np\.(dot|outer|matmul)\("),
    ("reshape / transpose / .T", r"np\.(reshape|transpose)\(|\.T\b|\.reshape\("),
    ("array methods (.copy/.flat/...)", r"\.(copy|flat|astype|fill|ravel|flatten)\b"),
    ("complex numbers", r"\d[jJ]\b|complex"),
    ("boolean masks / gathers", r"\[\w+\s*(<=|>=|<|>|==)\s*[\w.]+\]|\[mask\w*\]|\[I\]|x\[cols\]"),
    ("in-place array operators", r"\]\s*[-+*/]=|^\s*\w+\s*[-+*/]=\s*[^\n]*\b(np\.|@)"),
    ("returns a value", r"^\s*return\s+\S"),
    ("np.linalg / np.cov / np.where / np.histogram ...", r"np\.(linalg|cov|where|histogram|triu|flip|hstack|eye|clip|logical_\w+|less|multiply|add|absolute|maximum|minimum|exp|sqrt|sin|cos|tanh|power|arctan2)\b"),
]


def source_constructs(mod):
    src = Path(mod.__file__).read_text()
    lines = src.splitlines()
    body = "\n".join("\n".join(lines[a - 1:b]) for a, b in kernel_line_range(mod))
    return [c for c, rx in SOURCE_CONSTRUCTS if re.search(rx, body, re.M)]


if __name__ == "__main__":   # python3 -m corpus._harness NAME: one kernel, one line
    r = run(sys.argv[1])
    print(f"{r.status}\t{r.lineno}\t{r.message}")
