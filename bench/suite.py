"""The libasc benchmark suite: asc kernels against hand-written C (serial
and OpenMP, built with libasc's kernel flags), numpy, numba and CPython,
and the runtime's launch, allocation, compile-cache and Python-launch costs
against their references, all measured in the same run.

Run it through bench/run.sh, which builds what it needs first:

    bash bench/run.sh            # full suite, about 6-8 minutes on 2 cores
    bash bench/run.sh --quick    # tiny sizes, well under a minute

Each kernel implementation is checked against numpy before it is timed; one
that fails to compile, crashes, times out or gives a wrong result is
reported as FAILED with the reason and is not timed.  Times are medians of
repetitions that alternate between implementations (so a noisy neighbour
slows them alike), with min and max.  The ratio column is
reference time / asc time: above 1, asc is faster.

Results go to the console and to bench/results/<date>.json, .csv and .png
(--out-dir changes the folder).
"""
import argparse
import csv
import ctypes
import datetime
import gc
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
KERNELS = os.path.join(HERE, "kernels", "suite_kernels.py")
SEED = os.path.join(ROOT, "examples", "python", "seed_kernels.asc.py")

MiB = 1 << 20

# ---------------------------------------------------------------- sizes

FULL = {
    "n": 16 * MiB,            # vector add, saxpy, histogram, dot
    "matmul": [(512, 3), (1024, 1)],   # (size, repetitions)
    "conv": ((1, 16, 64, 64), (32, 16, 3, 3)),
    "softmax": (4096, 1024),
    "reps": 7,
    "py_n": 200_000,          # CPython sizes, extrapolated per element
    "py_matmul": 48,
    "py_conv": ((1, 4, 16, 16), (8, 4, 3, 3)),
    "py_softmax_rows": 8,
    "py_reps": 3,
    "case_timeout": 300,
    "launch_args": ["20000", "1000000"],
    "pool_pairs": "300000",
    "py_launch": (20000, 7),
    "compile_reps": 3,
}
QUICK = {
    "n": 1 << 16,
    "matmul": [(64, 2), (96, 2)],
    "conv": ((1, 4, 16, 16), (8, 4, 3, 3)),
    "softmax": (64, 128),
    "reps": 2,
    "py_n": 2000,
    "py_matmul": 12,
    "py_conv": ((1, 2, 8, 8), (2, 2, 3, 3)),
    "py_softmax_rows": 2,
    "py_reps": 1,
    "case_timeout": 120,
    "launch_args": ["500", "5000"],
    "pool_pairs": "2000",
    "py_launch": (200, 3),
    "compile_reps": 1,
}

IMPL_ORDER = ["asc", "C serial", "C OpenMP", "numpy", "numba", "numba parallel",
              "CPython"]


class Failed(Exception):
    """An implementation that cannot be timed; the message says why."""


# ------------------------------------------------------------ the impls

def first_line(exc):
    text = str(exc).strip() or type(exc).__name__
    lines = text.splitlines()
    return f"{type(exc).__name__}: {lines[0]}" + (" ..." if len(lines) > 1 else "")


class Libs:
    """Lazily loaded implementations: asc modules, the C references and
    numba-compiled loops.  Each getter raises Failed with the reason."""

    def __init__(self, build):
        self.build = build
        self._asc = None
        self._c = {}
        self._numba = {}
        self.numba_error = None

    def asc_module(self, which):
        if self._asc is None:
            self._asc = {}
            try:
                import asc
                self._asc["suite"] = asc.compile(KERNELS)
                self._asc["seed"] = asc.compile(SEED)
            except Exception as exc:  # compile errors, missing compiler
                self._asc = exc
        if isinstance(self._asc, Exception):
            raise Failed(f"compile: {first_line(self._asc)}")
        return self._asc[which]

    def c(self, variant):
        name = {"C serial": "bench_ref_serial.so", "C OpenMP": "bench_ref_omp.so"}[variant]
        if variant not in self._c:
            path = os.path.join(self.build, "bench", name)
            try:
                lib = ctypes.CDLL(path)
            except OSError as exc:
                self._c[variant] = Failed(f"cannot load {path}: {exc}")
            else:
                p, i64, f32, f64 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_float, ctypes.c_double
                sig = {
                    "ref_vadd": [p, p, p, i64],
                    "ref_triad": [p, p, p, f32, i64],
                    "ref_saxpy": [f64, p, p, p, i64],
                    "ref_matmul": [p, p, p, i64, i64, i64],
                    "ref_conv2d": [p, p, p] + [i64] * 7,
                    "ref_softmax": [p, p, i64, i64],
                    "ref_histogram": [p, p, i64],
                    "ref_dot": [p, p, i64],
                }
                for fn, args in sig.items():
                    getattr(lib, fn).argtypes = args
                    getattr(lib, fn).restype = None
                lib.ref_dot.restype = f32
                self._c[variant] = lib
        if isinstance(self._c[variant], Failed):
            raise self._c[variant]
        return self._c[variant]

    def numba(self, name, parallel):
        key = (name, parallel)
        if key not in self._numba:
            try:
                import numba
            except ImportError:
                raise Failed("numba: not installed")
            sys.path.insert(0, HERE)
            import py_loops
            fn = getattr(py_loops, name)
            cache = os.path.join(self.build, "bench", "numba-cache")
            # numba's cache index does not tell parallel=True from False
            # builds of one function: each gets its own directory.  The
            # locator reads config.CACHE_DIR when the dispatcher is made.
            numba.config.CACHE_DIR = os.path.join(cache, "parallel" if parallel else "serial")
            self._numba[key] = numba.njit(parallel=parallel, cache=True)(fn)
        return self._numba[key]


def ptr(a):
    return a.ctypes.data


# ------------------------------------------------------------- the cases
#
# A case makes its inputs, a reference result, a checker, and for each
# implementation a runner: a function of the inputs that computes into
# preallocated output and returns what the checker reads.

def rng():
    return np.random.default_rng(12345)


def quarters(r, n):
    """Values k/4, k in -4..4: products are multiples of 1/16 and every
    float32 partial sum of 16M of them is exact, in any order, so a dot
    product can be compared exactly whatever the summation order."""
    return (r.integers(-4, 5, n).astype(np.float32) / 4).astype(np.float32)


class Case:
    name = ""
    unit = ""               # of the rate: GB/s or GFLOP/s
    reps = None             # overrides the size's repetitions
    note = ""

    def __init__(self, sizes, libs):
        self.sizes = sizes
        self.libs = libs

    # subclasses: inputs(scale), expected(inp), check(out, exp) -> reason
    # or None, work(inp) (bytes or flops), extrapolation(full, small), and
    # run_<impl>(inp) returning a zero-argument callable


def check_close(out, exp, rtol, atol):
    out = np.asarray(out)
    if out.shape != exp.shape:
        return f"shape {out.shape}, expected {exp.shape}"
    bad = ~np.isclose(out, exp, rtol=rtol, atol=atol)
    if bad.any():
        idx = np.unravel_index(np.argmax(bad), bad.shape)
        return (f"{int(bad.sum())} of {bad.size} elements differ from numpy, first at "
                f"{tuple(int(i) for i in idx)}: {out[idx]!r} vs {exp[idx]!r}")
    return None


def check_equal(out, exp):
    out = np.asarray(out)
    if out.shape != exp.shape:
        return f"shape {out.shape}, expected {exp.shape}"
    bad = out != exp
    if bad.any():
        idx = np.unravel_index(np.argmax(bad), bad.shape)
        return (f"{int(bad.sum())} of {bad.size} elements differ from numpy, first at "
                f"{tuple(int(i) for i in idx)}: {out[idx]!r} vs {exp[idx]!r}")
    return None


class VectorAdd(Case):
    name = "vector add"
    unit = "GB/s"
    note = "GB/s counts 3 x 4 B per element, as STREAM does"

    def size_text(self, inp):
        return f"n={inp['a'].size}"

    def inputs(self, n):
        r = rng()
        return {"a": r.random(n, np.float32), "b": r.random(n, np.float32),
                "c": np.zeros(n, np.float32)}

    def expected(self, inp):
        return inp["a"] + inp["b"]

    def check(self, out, exp):
        return check_equal(out, exp)

    def work(self, inp):
        return 12 * inp["a"].size

    def elements(self, inp):
        return inp["a"].size

    def run_asc(self, inp):
        k = self.libs.asc_module("suite").vadd
        a, b, c = inp["a"], inp["b"], inp["c"]
        return lambda: (k(a, b, c), c)[1]

    def run_c(self, inp, lib):
        a, b, c = inp["a"], inp["b"], inp["c"]
        return lambda: (lib.ref_vadd(ptr(a), ptr(b), ptr(c), a.size), c)[1]

    def run_numpy(self, inp):
        a, b, c = inp["a"], inp["b"], inp["c"]
        return lambda: np.add(a, b, out=c)

    def run_py(self, inp, fn):
        a, b, c = inp["a"], inp["b"], inp["c"]
        return lambda: (fn(a, b, c), c)[1]

    py_name = "vadd"


class Saxpy(VectorAdd):
    name = "saxpy"
    note = "alpha is a Python float; GB/s counts 3 x 4 B per element"
    alpha = 2.5

    def inputs(self, n):
        r = rng()
        return {"x": r.random(n, np.float32), "y": r.random(n, np.float32),
                "out": np.zeros(n, np.float32)}

    def size_text(self, inp):
        return f"n={inp['x'].size}"

    def expected(self, inp):
        return (np.float32(self.alpha) * inp["x"] + inp["y"]).astype(np.float32)

    def check(self, out, exp):
        return check_close(out, exp, 1e-6, 1e-6)

    def work(self, inp):
        return 12 * inp["x"].size

    def elements(self, inp):
        return inp["x"].size

    def run_asc(self, inp):
        k = self.libs.asc_module("suite").saxpy
        x, y, out, al = inp["x"], inp["y"], inp["out"], self.alpha
        return lambda: (k(al, x, y, out), out)[1]

    def run_c(self, inp, lib):
        x, y, out, al = inp["x"], inp["y"], inp["out"], self.alpha
        return lambda: (lib.ref_saxpy(al, ptr(x), ptr(y), ptr(out), x.size), out)[1]

    def run_numpy(self, inp):
        x, y, out, al = inp["x"], inp["y"], inp["out"], self.alpha

        def f():
            np.multiply(x, al, out=out)
            np.add(out, y, out=out)
            return out
        return f

    def run_py(self, inp, fn):
        x, y, out, al = inp["x"], inp["y"], inp["out"], self.alpha
        return lambda: (fn(al, x, y, out), out)[1]

    py_name = "saxpy"


class Matmul(Case):
    unit = "GFLOP/s"
    py_name = "matmul"
    note = "naive i-j-p loops with a scalar sum; numpy is BLAS sgemm"

    def __init__(self, sizes, libs, n, reps):
        super().__init__(sizes, libs)
        self.n = n
        self.reps = reps
        self.name = f"matmul {n}^3"
        if reps == 1:
            self.note += ("; one timed run per implementation (each takes seconds on "
                          "2 cores), so min = max = median")

    def size_text(self, inp):
        n, k = inp["a"].shape
        return f"{n}x{k} @ {k}x{inp['b'].shape[1]}"

    def inputs(self, n):
        r = rng()
        return {"a": r.uniform(-1, 1, (n, n)).astype(np.float32),
                "b": r.uniform(-1, 1, (n, n)).astype(np.float32),
                "c": np.zeros((n, n), np.float32)}

    def expected(self, inp):
        return inp["a"].astype(np.float64) @ inp["b"].astype(np.float64)

    def check(self, out, exp):
        return check_close(out, exp, 1e-4, 1e-5 * exp.shape[0])

    def work(self, inp):
        return 2 * inp["a"].shape[0] ** 3

    def elements(self, inp):
        return inp["a"].shape[0] ** 3

    def run_asc(self, inp):
        k = self.libs.asc_module("suite").matmul
        a, b, c = inp["a"], inp["b"], inp["c"]
        return lambda: (k(a, b, c), c)[1]

    def run_c(self, inp, lib):
        a, b, c = inp["a"], inp["b"], inp["c"]
        n = a.shape[0]
        return lambda: (lib.ref_matmul(ptr(a), ptr(b), ptr(c), n, n, n), c)[1]

    def run_numpy(self, inp):
        a, b, c = inp["a"], inp["b"], inp["c"]
        return lambda: np.matmul(a, b, out=c)

    def run_py(self, inp, fn):
        a, b, c = inp["a"], inp["b"], inp["c"]
        return lambda: (fn(a, b, c), c)[1]


class Conv2d(Case):
    name = "conv2d"
    unit = "GFLOP/s"
    py_name = "conv2d"
    note = "the seed's conv2d as written (no prange); numpy: 9 BLAS tensordots"

    def size_text(self, inp):
        return f"{'x'.join(map(str, inp['x'].shape))} * {'x'.join(map(str, inp['w'].shape))}"

    def inputs(self, shapes):
        xs, ws = shapes
        r = rng()
        out = (xs[0], ws[0], xs[2] - ws[2] + 1, xs[3] - ws[3] + 1)
        return {"x": r.uniform(-1, 1, xs).astype(np.float32),
                "w": r.uniform(-1, 1, ws).astype(np.float32),
                "out": np.zeros(out, np.float32)}

    def expected(self, inp):
        return conv_numpy(inp["x"].astype(np.float64), inp["w"].astype(np.float64))

    def check(self, out, exp):
        w = self.current_w_size
        return check_close(out, exp, 1e-4, 1e-5 * w)

    def macs(self, inp):
        o = inp["out"].shape
        w = inp["w"].shape
        return o[0] * o[1] * o[2] * o[3] * w[1] * w[2] * w[3]

    def work(self, inp):
        return 2 * self.macs(inp)

    def elements(self, inp):
        return self.macs(inp)

    def run_asc(self, inp):
        k = self.libs.asc_module("seed").conv2d
        x, w, out = inp["x"], inp["w"], inp["out"]
        return lambda: (k(x, w, out), out)[1]

    def run_c(self, inp, lib):
        x, w, out = inp["x"], inp["w"], inp["out"]
        b, ci, h, wd = x.shape
        co, _, kh, kw = w.shape
        return lambda: (lib.ref_conv2d(ptr(x), ptr(w), ptr(out), b, ci, h, wd, co, kh, kw), out)[1]

    def run_numpy(self, inp):
        x, w, out = inp["x"], inp["w"], inp["out"]
        return lambda: conv_numpy(x, w, out)

    def run_py(self, inp, fn):
        x, w, out = inp["x"], inp["w"], inp["out"]
        return lambda: (fn(x, w, out), out)[1]


def conv_numpy(x, w, out=None):
    b, c, h, wd = x.shape
    oc, _, kh, kw = w.shape
    shape = (b, oc, h - kh + 1, wd - kw + 1)
    if out is None:
        out = np.zeros(shape, x.dtype)
    else:
        out[...] = 0
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + shape[2], j:j + shape[3]]
            # (b, c, h, w) x (oc, c) -> (b, h, w, oc)
            out += np.moveaxis(np.tensordot(patch, w[:, :, i, j], axes=([1], [1])), 3, 1)
    return out


class Softmax(Case):
    name = "row softmax"
    unit = "GB/s"
    py_name = "softmax"
    note = "GB/s counts 8 B per element (read x, write out)"

    def size_text(self, inp):
        return "x".join(map(str, inp["x"].shape))

    def inputs(self, shape):
        r = rng()
        return {"x": r.standard_normal(shape).astype(np.float32),
                "out": np.zeros(shape, np.float32)}

    def expected(self, inp):
        x = inp["x"].astype(np.float64)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def check(self, out, exp):
        return check_close(out, exp, 1e-4, 1e-9)

    def work(self, inp):
        return 8 * inp["x"].size

    def elements(self, inp):
        return inp["x"].shape[0]

    def run_asc(self, inp):
        k = self.libs.asc_module("suite").softmax
        x, out = inp["x"], inp["out"]
        return lambda: (k(x, out), out)[1]

    def run_c(self, inp, lib):
        x, out = inp["x"], inp["out"]
        return lambda: (lib.ref_softmax(ptr(x), ptr(out), *x.shape), out)[1]

    def run_numpy(self, inp):
        x, out = inp["x"], inp["out"]

        def f():
            np.subtract(x, x.max(axis=1, keepdims=True), out=out)
            np.exp(out, out=out)
            return np.divide(out, out.sum(axis=1, keepdims=True), out=out)
        return f

    def run_py(self, inp, fn):
        x, out = inp["x"], inp["out"]
        return lambda: (fn(x, out), out)[1]


class Histogram(Case):
    name = "histogram"
    unit = "GB/s"
    py_name = "histogram"
    note = ("256 bins, one atomic add per value (C OpenMP: omp atomic); "
            "numba parallel: per-chunk private histograms (numba has no atomics); "
            "numpy: bincount; GB/s counts 4 B per value")

    def size_text(self, inp):
        return f"n={inp['x'].size}"

    def inputs(self, n):
        r = rng()
        return {"x": r.random(n, np.float32), "hist": np.zeros(256, np.int64)}

    def expected(self, inp):
        bins = np.minimum((inp["x"] * np.float32(256)).astype(np.int64), 255)
        return np.bincount(bins, minlength=256).astype(np.int64)

    def check(self, out, exp):
        return check_equal(np.asarray(out).astype(np.int64), exp)

    def work(self, inp):
        return 4 * inp["x"].size

    def elements(self, inp):
        return inp["x"].size

    def run_asc(self, inp):
        k = self.libs.asc_module("suite").histogram
        x, h = inp["x"], inp["hist"]

        def f():
            h[:] = 0
            k(x, h)
            return h
        return f

    def run_c(self, inp, lib):
        x, h = inp["x"], inp["hist"]

        def f():
            h[:] = 0
            lib.ref_histogram(ptr(x), ptr(h), x.size)
            return h
        return f

    def run_numpy(self, inp):
        x = inp["x"]

        def f():
            b = (x * np.float32(256)).astype(np.int64)
            np.minimum(b, 255, out=b)
            return np.bincount(b, minlength=256)
        return f

    def run_py(self, inp, fn):
        x, h = inp["x"], inp["hist"]

        def f():
            h[:] = 0
            fn(x, h)
            return h
        return f


class Dot(Case):
    name = "dot"
    unit = "GB/s"
    py_name = "dot"
    note = ("float32 accumulation; inputs are multiples of 1/4 so every "
            "summation order is exact; numpy is BLAS sdot; GB/s counts 8 B per element")

    def size_text(self, inp):
        return f"n={inp['a'].size}"

    def inputs(self, n):
        r = rng()
        return {"a": quarters(r, n), "b": quarters(r, n), "out": np.zeros(1, np.float32)}

    def expected(self, inp):
        return np.array([np.dot(inp["a"].astype(np.float64), inp["b"].astype(np.float64))])

    def check(self, out, exp):
        return check_equal(np.asarray(out, np.float64).reshape(1), exp)

    def work(self, inp):
        return 8 * inp["a"].size

    def elements(self, inp):
        return inp["a"].size

    def run_asc(self, inp):
        k = self.libs.asc_module("suite").dot
        a, b, out = inp["a"], inp["b"], inp["out"]
        return lambda: (k(a, b, out), out)[1]

    def run_c(self, inp, lib):
        a, b = inp["a"], inp["b"]
        return lambda: np.array([lib.ref_dot(ptr(a), ptr(b), a.size)])

    def run_numpy(self, inp):
        a, b = inp["a"], inp["b"]
        return lambda: np.array([np.dot(a, b)])

    def run_py(self, inp, fn):
        a, b, out = inp["a"], inp["b"], inp["out"]
        return lambda: (fn(a, b, out), out)[1]


def make_cases(sizes, libs):
    cases = [VectorAdd(sizes, libs), Saxpy(sizes, libs)]
    cases += [Matmul(sizes, libs, n, reps) for n, reps in sizes["matmul"]]
    cases += [Conv2d(sizes, libs), Softmax(sizes, libs), Histogram(sizes, libs),
              Dot(sizes, libs)]
    return cases


def case_full_arg(case, sizes):
    if isinstance(case, Matmul):
        return case.n
    if isinstance(case, Conv2d):
        return sizes["conv"]
    if isinstance(case, Softmax):
        return sizes["softmax"]
    return sizes["n"]


def case_small_arg(case, sizes):
    if isinstance(case, Matmul):
        return sizes["py_matmul"]
    if isinstance(case, Conv2d):
        return sizes["py_conv"]
    if isinstance(case, Softmax):
        return (sizes["py_softmax_rows"], sizes["softmax"][1])
    return sizes["py_n"]


# ------------------------------------------------------------ measuring

def settle():
    """Lets the worker threads of the runtime measured last stop spinning,
    so they do not steal the 2 cores from the next one."""
    time.sleep(0.02)


def time_call(fn):
    settle()
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


class Progress:
    """JSON lines that tell the parent what the child finished, so that a
    crash or a hang is charged to the implementation that was running."""

    def __init__(self, path):
        self.f = open(path, "a", buffering=1)

    def write(self, **kw):
        self.f.write(json.dumps(kw) + "\n")
        self.f.flush()


def run_case_child(case_index, sizes, libs, skip, progress):
    case = make_cases(sizes, libs)[case_index]
    full = case.inputs(case_full_arg(case, sizes))
    exp = case.expected(full)
    if isinstance(case, Conv2d):
        case.current_w_size = int(np.prod(full["w"].shape[1:]))
    reps = case.reps or sizes["reps"]
    runners = {}
    variants = {"asc": lambda: case.run_asc(full),
                "C serial": lambda: case.run_c(full, libs.c("C serial")),
                "C OpenMP": lambda: case.run_c(full, libs.c("C OpenMP")),
                "numpy": lambda: case.run_numpy(full),
                "numba": lambda: case.run_py(full, libs.numba(case.py_name, False)),
                "numba parallel": lambda: case.run_py(
                    full, libs.numba("histogram_private" if isinstance(case, Histogram)
                                     else case.py_name, True))}
    if isinstance(case, VectorAdd) and not isinstance(case, Saxpy):
        variants["STREAM triad (C OpenMP)"] = lambda: triad_runner(full, libs)
    progress.write(event="case", name=case.name, size=case.size_text(full), unit=case.unit,
                   note=case.note, reps=reps)
    for impl, make in variants.items():
        if impl in skip:
            continue
        progress.write(event="start", impl=impl, phase="check")
        try:
            fn = make()
            out = fn()
            if impl.startswith("STREAM"):
                reason = None
            else:
                reason = case.check(out, exp)
            if reason is None and impl != "numpy" and reps > 1:
                # Run twice (unless a run is seconds long, as for matmul
                # 1024): a kernel that only works once is wrong.
                out = fn()
                reason = None if impl.startswith("STREAM") else case.check(out, exp)
            if reason is not None:
                raise Failed(f"wrong result: {reason}")
        except Failed as exc:
            progress.write(event="failed", impl=impl, reason=str(exc))
            continue
        except Exception as exc:
            progress.write(event="failed", impl=impl, reason=first_line(exc))
            continue
        runners[impl] = fn
    times = {impl: [] for impl in runners}
    gc.disable()
    for _ in range(reps):
        for impl, fn in runners.items():
            progress.write(event="start", impl=impl, phase="time")
            times[impl].append(time_call(fn))
    gc.enable()
    for impl, ts in times.items():
        progress.write(event="row", impl=impl, times=ts, work=case.work(full),
                       scale=1.0, note="")
    # CPython: the same loops at a smaller size, extrapolated per element.
    if "CPython" not in skip:
        progress.write(event="start", impl="CPython", phase="check")
        try:
            sys.path.insert(0, HERE)
            import py_loops
            fn_py = getattr(py_loops, case.py_name)
            small = case.inputs(case_small_arg(case, sizes))
            if isinstance(case, Conv2d):
                case.current_w_size = int(np.prod(small["w"].shape[1:]))
            run = case.run_py(small, fn_py)
            reason = case.check(run(), case.expected(small))
            if reason is not None:
                raise Failed(f"wrong result: {reason}")
            ts = [time_call(run) for _ in range(sizes["py_reps"])]
            scale = case.elements(full) / case.elements(small)
            progress.write(event="row", impl="CPython", times=[t * scale for t in ts],
                           work=case.work(full), scale=scale,
                           note=f"measured at {case.size_text(small)}, "
                                f"time x{scale:.4g} (per {'row' if isinstance(case, Softmax) else 'element' if not isinstance(case, (Matmul, Conv2d)) else 'multiply-add'})")
        except Failed as exc:
            progress.write(event="failed", impl="CPython", reason=str(exc))
        except Exception as exc:
            progress.write(event="failed", impl="CPython", reason=first_line(exc))
    progress.write(event="done")


def triad_runner(inp, libs):
    lib = libs.c("C OpenMP")
    b, c = inp["a"], inp["b"]
    a = np.zeros_like(b)
    return lambda: (lib.ref_triad(ptr(a), ptr(b), ptr(c), np.float32(3.0), a.size), a)[1]


def run_case(case_index, args, env):
    """Runs one case in a child process; restarts it without the
    implementation that crashed or hung, until it completes."""
    skip, rows, info = [], [], {}
    failed = {}
    for attempt in range(len(IMPL_ORDER) + 2):
        fd, path = tempfile.mkstemp(prefix="asc-bench-", suffix=".jsonl")
        os.close(fd)
        cmd = [sys.executable, os.path.abspath(__file__), "--child-case", str(case_index),
               "--progress", path, "--build", args.build] + \
              (["--quick"] if args.quick else []) + \
              [x for s in skip for x in ("--skip", s)]
        try:
            p = subprocess.run(cmd, env=env, timeout=args.sizes["case_timeout"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            status = None if p.returncode == 0 else describe_rc(p.returncode, p.stdout)
        except subprocess.TimeoutExpired:
            status = f"timed out after {args.sizes['case_timeout']} s"
        events = [json.loads(line) for line in open(path) if line.strip()]
        os.unlink(path)
        running = None
        for e in events:
            if e["event"] == "case":
                info = e
            elif e["event"] == "start":
                running = e["impl"], e["phase"]
            elif e["event"] == "failed":
                failed[e["impl"]] = e["reason"]
            elif e["event"] == "row":
                rows.append(e)
        done = events and events[-1]["event"] == "done"
        if done:
            break
        if running is None:
            failed["(case)"] = status or "the child process stopped before running anything"
            break
        impl, phase = running
        failed[impl] = f"{status or 'the process stopped'} during {'the correctness check' if phase == 'check' else 'timing'}"
        skip.append(impl)
        # rows timed before the crash are dropped: their runs are redone.
        rows = [r for r in rows if r["impl"] == "CPython"]
    return info, rows, failed


def describe_rc(rc, out):
    tail = (out or "").strip().splitlines()[-1:] or [""]
    if rc < 0:
        import signal
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = str(-rc)
        return f"crashed ({name})"
    return f"exited {rc}: {tail[0][:200]}"


# ---------------------------------------------------------- runtime rows

def run_tool(cmd, env, timeout):
    try:
        p = subprocess.run(cmd, env=env, timeout=timeout, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    except subprocess.TimeoutExpired:
        raise Failed(f"timed out after {timeout} s")
    except OSError as exc:
        raise Failed(str(exc))
    if p.returncode != 0:
        raise Failed(describe_rc(p.returncode, p.stdout))
    return p.stdout


def parse_stats(text, pattern):
    """`stats` lines of bench/launch_latency and bench/pool_alloc."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"stats (.+) (\S+) (\S+) (\S+)$", line)
        if m:
            out[m.group(1)] = tuple(float(m.group(i)) for i in (2, 3, 4))
    return out


def row(section, bench, impl, med, lo, hi, unit, size="", note="", reps=None,
        rate=None, rate_unit="", status="ok", is_asc=None):
    return {"section": section, "benchmark": bench, "size": size, "impl": impl,
            "median": med, "min": lo, "max": hi, "unit": unit, "reps": reps,
            "rate": rate, "rate_unit": rate_unit, "ratio": None, "status": status,
            "note": note, "is_asc": impl.startswith("asc") if is_asc is None else is_asc}


def failed_row(section, bench, impl, reason, size=""):
    r = row(section, bench, impl, None, None, None, "", size=size, status="FAILED")
    r["note"] = reason
    return r


def launch_rows(args, env):
    exe = os.path.join(args.build, "bench", "launch_latency")
    bench = "launch round trip"
    try:
        text = run_tool([exe] + args.sizes["launch_args"], env, 300)
        st = parse_stats(text, "")
        a, o, r = st["asc_roundtrip_us"], st.get("openmp_roundtrip_us"), st["async_launches_per_s"]
    except (Failed, KeyError) as exc:
        return [failed_row("runtime", bench, "asc", f"bench/launch_latency: {exc}"),
                failed_row("runtime", "async launch", "asc", f"bench/launch_latency: {exc}")]
    size = f"{args.sizes['launch_args'][0]} launches x 9"
    rows = [row("runtime", bench, "asc (launch + stream sync)", *a, "us", size=size, reps=9,
                note="empty kernel, one block, empty parallel loop over all cores")]
    if o:
        rows.append(row("runtime", bench, "OpenMP empty parallel for", *o, "us", size=size, reps=9))
    # async: time per launch = 1 / rate; the max time is the min rate.
    rows.append(row("runtime", "async launch", "asc (back-to-back launches)",
                    1e6 / r[0], 1e6 / r[2], 1e6 / r[1], "us",
                    size=f"{args.sizes['launch_args'][1]} launches", reps=9,
                    rate=r[0], rate_unit="launches/s",
                    note="empty one-block kernel, one stream, one sync"))
    if o:
        rows.append(row("runtime", "async launch", "OpenMP empty parallel for", *o, "us",
                        size=size, reps=9, note="the same OpenMP region as above"))
    return rows


def pool_rows(args, env):
    exe = os.path.join(args.build, "bench", "pool_alloc")
    try:
        text = run_tool([exe, args.sizes["pool_pairs"]], env, 300)
    except Failed as exc:
        return [failed_row("runtime", "pool alloc+free", "asc", f"bench/pool_alloc: {exc}")]
    rows = []
    names = [("ascMallocAsync/ascFreeAsync", "asc pool (ascMallocAsync/ascFreeAsync)"),
             ("mallocx/sdallocx (tcache)", "jemalloc mallocx/sdallocx (tcache)"),
             ("mallocx/sdallocx (arena, no tcache)", "jemalloc private arena, no tcache"),
             ("malloc/free", "malloc/free")]
    for size, label in ((64, "64 B"), (4096, "4 KiB"), (1 << 20, "1 MiB")):
        for key, impl in names:
            m = re.search(rf"^stats {re.escape(key)} {size} (\S+) (\S+) (\S+)$", text, re.M)
            if not m:
                rows.append(failed_row("runtime", f"pool alloc+free {label}", impl,
                                       "no stats line from bench/pool_alloc"))
                continue
            med, lo, hi = (float(x) for x in m.groups())
            # pairs/s -> ns per pair; slowest run = lowest rate.
            rows.append(row("runtime", f"pool alloc+free {label}", impl,
                            1e9 / med, 1e9 / hi, 1e9 / lo, "ns", reps=7,
                            size=f"{args.sizes['pool_pairs']} pairs", rate=med,
                            rate_unit="pairs/s",
                            note="malloc is jemalloc (libasc links it)" if key == "malloc/free" else ""))
    return rows


COMPILE_CHILD = r"""
import json, os, sys, time
t0 = time.perf_counter()
import numpy as np
import asc
t1 = time.perf_counter()
text = open(sys.argv[1]).read()
x = np.ones((4, 8), np.float32); out = np.empty_like(x)
t = time.perf_counter()
m = asc.compile(text, filename=sys.argv[1])
m.softmax(x, out)
asc_s = time.perf_counter() - t
assert abs(float(out.sum()) - 4.0) < 1e-4, out
print(json.dumps({"asc_s": asc_s, "import_s": t1 - t0}))
"""

NUMBA_COMPILE_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import numba
import py_loops
x = np.ones((4, 8), np.float32); out = np.empty_like(x)
t = time.perf_counter()
f = numba.njit(parallel=True)(py_loops.softmax)
f(x, out)
print(json.dumps({"numba_s": time.perf_counter() - t}))
"""


def compile_rows(args, env):
    """Compile + first call of the softmax kernel (with its
    specialisation) in a fresh process: cold with an empty ASC_CACHE_DIR,
    then a cache hit from a new process on that directory."""
    reps = args.sizes["compile_reps"]
    cold, hit, nb = [], [], []
    text_path = os.path.join(tempfile.mkdtemp(prefix="asc-bench-src-"), "softmax_kernel.py")
    src = open(KERNELS).read()
    with open(text_path, "w") as f:
        f.write("import math\n\nimport asc\n\n\n" + src[src.index("@asc.kernel\ndef softmax"):].split("\n\n\n")[0] + "\n")
    rows = []
    try:
        for _ in range(reps):
            cache = tempfile.mkdtemp(prefix="asc-bench-cache-")
            e = dict(env, ASC_CACHE_DIR=cache)
            out = run_tool([sys.executable, "-c", COMPILE_CHILD, text_path], e, 300)
            cold.append(json.loads(out.strip().splitlines()[-1])["asc_s"])
            out = run_tool([sys.executable, "-c", COMPILE_CHILD, text_path], e, 300)
            hit.append(json.loads(out.strip().splitlines()[-1])["asc_s"])
            shutil.rmtree(cache, ignore_errors=True)
    except Failed as exc:
        rows.append(failed_row("runtime", "compile softmax: cold", "asc", f"{exc}"))
    if cold:
        rows.append(row("runtime", "compile softmax: cache hit", "asc cache hit (new process)",
                        *ms(hit), "ms", reps=reps,
                        note="asc.compile + first call (specialise, load the cached .so)"))
        rows.append(row("runtime", "compile softmax: cache hit", "asc cold (empty ASC_CACHE_DIR)",
                        *ms(cold), "ms", reps=reps, is_asc=False,
                        note="the same, cold: front end, passes, cc, load"))
        rows.append(row("runtime", "compile softmax: cold", "asc cold (empty ASC_CACHE_DIR)",
                        *ms(cold), "ms", reps=reps, note="asc.compile + first call"))
    try:
        for _ in range(reps):
            out = run_tool([sys.executable, "-c", NUMBA_COMPILE_CHILD, HERE], env, 300)
            nb.append(json.loads(out.strip().splitlines()[-1])["numba_s"])
        rows.append(row("runtime", "compile softmax: cold", "numba @njit(parallel=True) cold",
                        *ms(nb), "ms", reps=reps, note="njit + first call, new process"))
    except Failed as exc:
        rows.append(failed_row("runtime", "compile softmax: cold", "numba @njit(parallel=True) cold",
                               "numba: not installed" if "No module named 'numba'" in str(exc)
                               else str(exc)))
    shutil.rmtree(os.path.dirname(text_path), ignore_errors=True)
    return rows


def ms(ts):
    return statistics.median(ts) * 1e3, min(ts) * 1e3, max(ts) * 1e3


def python_launch_child(args):
    sys.path.insert(0, HERE)
    import python_launch
    calls, repeat = args.sizes["py_launch"]
    rows, info = python_launch.measure(calls, repeat)
    print(json.dumps({"rows": rows, "info": info}))


def python_launch_rows(args, env):
    bench = "py launch"
    cmd = [sys.executable, os.path.abspath(__file__), "--child-python-launch",
           "--build", args.build] + (["--quick"] if args.quick else [])
    try:
        out = run_tool(cmd, env, 300)
        data = json.loads(out.strip().splitlines()[-1])
    except (Failed, ValueError) as exc:
        return [failed_row("runtime", bench, "asc", f"bench/python_launch.py: {exc}")]
    calls, repeat = args.sizes["py_launch"]
    rows = []
    for name, ts in data["rows"]:
        if isinstance(ts, str):
            what = "empty prange" if "empty" in name else "64-float store"
            rows.append(failed_row("runtime", f"{bench}: {what}", "asc", ts))
            continue
        what = "empty prange" if "empty" in name or name.startswith("python") else "64-float store"
        if name.startswith("python"):
            rows.append(row("runtime", f"{bench}: {what}", "CPython no-op function call",
                            statistics.median(ts), min(ts), max(ts), "us", reps=repeat,
                            size=f"{calls} calls", is_asc=False,
                            note="the floor of any call from Python"))
            continue
        impl = "asc" if name.startswith("asc") else "numba @njit(parallel=True)"
        rows.append(row("runtime", f"{bench}: {what}", impl, statistics.median(ts), min(ts),
                        max(ts), "us", reps=repeat, size=f"{calls} calls",
                        note="synchronous call from Python"))
    if data["info"] is None:
        rows.append(failed_row("runtime", f"{bench}: empty prange",
                               "numba @njit(parallel=True)", "numba: not installed"))
    return rows


# --------------------------------------------------------------- machine

def sh(cmd):
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=30).stdout.strip()
    except Exception:
        return ""


def load_average():
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def machine_info(args):
    info = {"platform": platform.platform(), "python": sys.version.split()[0]}
    cpu = {}
    try:
        for line in open("/proc/cpuinfo"):
            k, _, v = line.partition(":")
            k = k.strip()
            if k in ("model name", "flags") and k not in cpu:
                cpu[k] = v.strip()
    except OSError:
        pass
    info["cpu"] = cpu.get("model name", platform.processor())
    flags = cpu.get("flags", "").split()
    info["cpu_flags"] = " ".join(flags)
    info["simd"] = " ".join(f for f in flags if f in (
        "sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_fp16",
        "avx512_bf16", "amx_tile"))
    info["cores_online"] = os.cpu_count()
    info["cores_usable"] = len(os.sched_getaffinity(0))
    try:
        kb = int(open("/proc/meminfo").readline().split()[1])
        info["memory"] = f"{kb / MiB:.1f} GiB"
    except (OSError, ValueError, IndexError):
        info["memory"] = "?"
    info["cc"] = sh(["sh", "-c", "${ASC_CC:-cc} --version | head -1"])
    try:
        info["kernel_flags"] = open(os.path.join(args.build, "bench", "bench_ref_flags.txt")).read().strip()
    except OSError:
        info["kernel_flags"] = "?"
    info["ASC_CFLAGS"] = os.environ.get("ASC_CFLAGS", "")
    info["cmake"] = sh(["cmake", "--version"]).splitlines()[0] if sh(["cmake", "--version"]) else ""
    info["libomp"] = "libgomp (gcc -fopenmp)"
    info["numpy"] = np.__version__
    info["OPENBLAS_CORETYPE"] = os.environ.get("OPENBLAS_CORETYPE", "(not set)")
    info["OMP_NUM_THREADS"] = os.environ.get("OMP_NUM_THREADS", "(not set)")
    try:
        from threadpoolctl import threadpool_info
        info["blas"] = [f"{p.get('internal_api')} {p.get('version')} ({p.get('architecture')}), "
                        f"{p.get('num_threads')} threads, {p.get('threading_layer')}"
                        for p in threadpool_info() if p.get("user_api") == "blas"]
        info["openmp_pools"] = [f"{p.get('prefix')} {p.get('num_threads')} threads"
                                for p in threadpool_info() if p.get("user_api") == "openmp"]
    except ImportError:
        cfg = np.show_config(mode="dicts") if "mode" in np.show_config.__code__.co_varnames else {}
        b = cfg.get("Build Dependencies", {}).get("blas", {})
        info["blas"] = [f"{b.get('name', '?')} {b.get('version', '')} (threadpoolctl not installed: "
                        "thread count unknown)"]
    try:
        import numba
        info["numba"] = f"{numba.__version__}, {numba.config.NUMBA_NUM_THREADS} threads"
    except ImportError:
        info["numba"] = "not installed"
    try:
        import asc
        p = asc.device_properties()
        info["asc"] = f"{asc.__version__}; device {p.name}, {p.cores} cores"
    except Exception as exc:
        info["asc"] = f"unavailable: {first_line(exc)}"
    info["git"] = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"])
    return info


# ---------------------------------------------------------------- report

def kernel_rows(args, env):
    rows = []
    cases = make_cases(args.sizes, Libs(args.build))
    for i, case in enumerate(cases):
        t = time.perf_counter()
        print(f"  {case.name} ...", end="", flush=True)
        info, got, failed = run_case(i, args, env)
        print(f" {time.perf_counter() - t:.0f} s", flush=True)
        name, size, unit = info.get("name", case.name), info.get("size", ""), info.get("unit", case.unit)
        by_impl = {r["impl"]: r for r in got}
        impls = [x for x in IMPL_ORDER + ["STREAM triad (C OpenMP)"]
                 if x in by_impl or x in failed]
        if "(case)" in failed:
            rows.append(failed_row("kernel", name, "asc", failed["(case)"], size))
            continue
        for impl in impls:
            if impl in failed:
                rows.append(failed_row("kernel", name, impl, failed[impl], size))
                continue
            r = by_impl[impl]
            ts = r["times"]
            med = statistics.median(ts)
            notes = [r["note"]] if r["note"] else []
            rows.append(row("kernel", name, impl, med * 1e3, min(ts) * 1e3, max(ts) * 1e3,
                            "ms", size=size, reps=len(ts),
                            rate=r["work"] / med / 1e9, rate_unit=unit,
                            note="; ".join(notes)))
            rows[-1]["times_ms"] = [t * 1e3 for t in ts]
        if info.get("note"):
            rows[-1]["case_note"] = info["note"]
            for r in rows:
                if r["benchmark"] == name:
                    r["case_note"] = info["note"]
    # vector add as a fraction of the triad of the same run
    triad = next((r for r in rows if r["impl"].startswith("STREAM") and r["status"] == "ok"), None)
    if triad:
        for r in rows:
            if r["benchmark"] == "vector add" and r["status"] == "ok" and r is not triad:
                frac = f"{r['rate'] / triad['rate']:.0%} of STREAM triad"
                r["note"] = f"{r['note']}; {frac}" if r["note"] else frac
    return rows


def group(rows):
    """Rows of one benchmark together, benchmarks in order of first row."""
    order = {}
    for r in rows:
        order.setdefault(r["benchmark"], len(order))
    return sorted(rows, key=lambda r: order[r["benchmark"]])


def add_ratios(rows):
    """ratio = reference median / asc median of the same benchmark (time:
    above 1, asc is faster).  The asc row of a benchmark is the first
    row with is_asc."""
    groups = {}
    for r in rows:
        groups.setdefault(r["benchmark"], []).append(r)
    for name, rs in groups.items():
        a = next((r for r in rs if r["is_asc"]), None)
        for r in rs:
            if r is a or r["status"] != "ok":
                continue
            if a is None or a["status"] != "ok":
                r["ratio"] = None
                r["ratio_note"] = "n/a"
                continue
            r["ratio"] = r["median"] / a["median"]


def fmt(x):
    if x is None:
        return ""
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def print_table(rows, info, quick):
    print()
    print(f"machine: {info['cpu']}; {info['cores_usable']} usable cores; {info['memory']}")
    print(f"  simd: {info['simd']}")
    print(f"  cc: {info['cc']}; kernel and C-reference flags: {info['kernel_flags']}"
          + (f" + ASC_CFLAGS={info['ASC_CFLAGS']}" if info["ASC_CFLAGS"] else ""))
    print(f"  python {info['python']}, numpy {info['numpy']}, BLAS: {'; '.join(info['blas'])}")
    print(f"  OPENBLAS_CORETYPE={info['OPENBLAS_CORETYPE']}, OMP_NUM_THREADS={info['OMP_NUM_THREADS']}, numba {info['numba']}")
    print(f"  asc {info['asc']}; git {info['git']}")
    print(f"  load average (1, 5, 15 min) before: {info['loadavg_before']}, after: {info['loadavg_after']}"
          f" (above 0 means other work shared the cores)")
    if quick:
        print("  --quick: tiny sizes, for checking the suite only; do not read the numbers")
    print()
    head = f"{'benchmark':28s} {'implementation':38s} {'median':>9s} {'min':>9s} {'max':>9s} {'unit':4s} {'n':>2s} {'rate':>10s} {'ref/asc':>8s}  note"
    print(head)
    print("-" * len(head))
    last = None
    for r in rows:
        if r["benchmark"] != last and last is not None:
            print()
        bench = r["benchmark"] if r["benchmark"] != last else ""
        last = r["benchmark"]
        if r["status"] != "ok":
            print(f"{bench:28s} {r['impl']:38s} {'FAILED':>9s}  {r['note']}")
            continue
        rate = f"{fmt(r['rate'])} {r['rate_unit']}" if r["rate"] is not None else ""
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else ("-" if r["is_asc"] else r.get("ratio_note", ""))
        print(f"{bench:28s} {r['impl']:38s} {fmt(r['median']):>9s} {fmt(r['min']):>9s} {fmt(r['max']):>9s} "
              f"{r['unit']:4s} {r['reps'] or '':>2} {rate:>10s} {ratio:>8s}  {r['note']}")
    print()
    print("ref/asc = reference median / asc median of the same benchmark: above 1, asc is faster.")
    notes = {}
    for r in rows:
        if r.get("case_note"):
            notes[r["benchmark"]] = r["case_note"]
    for k, v in notes.items():
        print(f"  {k}: {v}")


def write_outputs(rows, info, args, started):
    os.makedirs(args.out_dir, exist_ok=True)
    stem = os.path.join(args.out_dir, started.strftime("%Y-%m-%d") + ("-quick" if args.quick else ""))
    doc = {"date": started.isoformat(timespec="seconds"), "quick": args.quick,
           "ratio": "reference median / asc median (time); above 1 asc is faster",
           "machine": info, "rows": rows}
    with open(stem + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    cols = ["section", "benchmark", "size", "impl", "status", "median", "min", "max", "unit",
            "reps", "rate", "rate_unit", "ratio", "note"]
    with open(stem + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow(["" if r.get(c) is None else r.get(c) for c in cols])
    png = stem + ".png"
    how = chart(rows, info, png, args.quick)
    return stem, how


def chart_data(rows):
    """(label, [(reference, ratio or None, failed_reason)]) per benchmark."""
    out = []
    groups = {}
    for r in rows:
        groups.setdefault(r["benchmark"], []).append(r)
    for name, rs in groups.items():
        a = next((r for r in rs if r["is_asc"]), None)
        refs = [r for r in rs if r is not a]
        if not refs:
            continue
        if a is None or a["status"] != "ok":
            out.append((name, [], "asc FAILED" if a is not None else "no asc row"))
            continue
        out.append((name, [(r["impl"], r["ratio"]) for r in refs if r["ratio"] is not None], None))
    return out


def chart(rows, info, png, quick):
    data = chart_data(rows)
    title = (f"libasc vs references (reference time / asc time; > 1: asc faster)\n"
             f"{info['cpu']}, {info['cores_usable']} cores{' — QUICK sizes, not meaningful' if quick else ''}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return gnuplot_chart(data, title, png)
    bars = []
    for name, refs, why in data:
        if why:
            bars.append((f"{name}: {why}", None, None))
        for impl, ratio in refs:
            bars.append((f"{name} — vs {impl}", ratio, impl))
    fig_h = max(4, 0.22 * len(bars) + 2)
    fig, ax = plt.subplots(figsize=(11, fig_h))
    ys = list(range(len(bars)))[::-1]
    refs_seen = []
    for b in bars:
        if b[2] and b[2] not in refs_seen:
            refs_seen.append(b[2])
    cmap = plt.get_cmap("tab20")
    colors = {n: cmap(i % 20) for i, n in enumerate(refs_seen)}
    vals = [b[1] for b in bars if b[1]]
    lo = min(vals + [0.5]) / 2
    hi = max(vals + [2]) * 3
    labelled = set()
    for y, (label, ratio, impl) in zip(ys, bars):
        if ratio is None:
            ax.text(1.0, y, "  no ratio", va="center", fontsize=7, color="red")
            continue
        # from 1 to the ratio: right of 1 asc is faster, left it is slower
        ax.barh(y, ratio - 1, left=1, color=colors[impl], height=0.8,
                label=None if impl in labelled else impl)
        labelled.add(impl)
        ax.text(ratio * 1.06 if ratio >= 1 else ratio / 1.06, y, f"{ratio:.2f}x", va="center",
                ha="left" if ratio >= 1 else "right", fontsize=6.5)
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    if labelled:
        ax.legend(fontsize=7, loc="lower right", title="reference", title_fontsize=7)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(ys)
    ax.set_yticklabels([b[0] for b in bars], fontsize=7)
    ax.set_xlabel("reference median time / asc median time (log scale; right of 1: asc is faster)")
    ax.set_title(title, fontsize=9)
    ax.set_ylim(-1, len(bars))
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return "matplotlib"


def gnuplot_chart(data, title, png):
    if shutil.which("gnuplot") is None:
        return "none (neither matplotlib nor gnuplot)"
    lines = []
    for name, refs, why in data:
        if why:
            lines.append((f"{name}: {why}", 1e-9))
        for impl, ratio in refs:
            lines.append((f"{name} vs {impl}", ratio))
    d = tempfile.mkdtemp(prefix="asc-bench-plot-")
    dat = os.path.join(d, "ratios.dat")
    with open(dat, "w") as f:
        for i, (label, v) in enumerate(reversed(lines)):
            f.write(f"{i} {v} \"{label.replace(chr(34), '')}\"\n")
    h = max(480, 18 * len(lines) + 120)
    title = title.replace("\n", "\\n").replace('"', "'")
    script = f"""
set terminal pngcairo size 1100,{h} font ",8" noenhanced
set output "{png}"
set title "{title}"
set logscale x
set xrange [0.01:1000]
set yrange [-1:{len(lines)}]
set style fill solid 0.8
set xlabel "reference median time / asc median time (log; right of 1: asc faster)"
set arrow from 1, graph 0 to 1, graph 1 nohead lc rgb "black"
unset key
set grid x
plot "{dat}" using (1):1:($2 < 1 ? $2 : 1):($2 > 1e-8 ? ($2 > 1 ? $2 : 1) : 1/0):($1-0.4):($1+0.4):ytic(3) with boxxyerror, \\
     "{dat}" using ($2 > 1e-8 ? ($2 > 1 ? $2*1.1 : 1.1) : 1.1):1:($2 > 1e-8 ? sprintf("%.2fx", $2) : "no ratio") with labels left
"""
    gp = os.path.join(d, "plot.gp")
    open(gp, "w").write(script)
    p = subprocess.run(["gnuplot", gp], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    shutil.rmtree(d, ignore_errors=True)
    if p.returncode != 0:
        return f"gnuplot failed: {p.stdout.strip()[:200]}"
    return "gnuplot"


# ------------------------------------------------------------------ main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes, well under a minute")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="CMake build folder")
    ap.add_argument("--out-dir", help="default: bench/results, or BUILD/bench/results with --quick")
    ap.add_argument("--only", default="", help="comma-separated: kernels,runtime")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 if a row FAILED (a missing optional package aside)")
    ap.add_argument("--child-case", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--child-python-launch", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--progress", help=argparse.SUPPRESS)
    ap.add_argument("--skip", action="append", default=[], help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.sizes = QUICK if args.quick else FULL
    args.build = os.path.abspath(args.build)
    if args.out_dir is None:
        args.out_dir = os.path.join(args.build, "bench", "results") if args.quick \
            else os.path.join(HERE, "results")

    if args.child_case is not None:
        run_case_child(args.child_case, args.sizes, Libs(args.build), set(args.skip),
                       Progress(args.progress))
        return
    if args.child_python_launch:
        python_launch_child(args)
        return

    started = datetime.datetime.now(datetime.timezone.utc)
    t0 = time.perf_counter()
    env = dict(os.environ)
    info = machine_info(args)
    info["loadavg_before"] = load_average()
    parts = set(args.only.split(",")) if args.only else {"kernels", "runtime"}
    rows = []
    if "kernels" in parts:
        print("kernels (each in its own process):", flush=True)
        rows += kernel_rows(args, env)
    if "runtime" in parts:
        print("runtime:", flush=True)
        for name, fn in (("launch latency", launch_rows), ("pool alloc", pool_rows),
                         ("compile cold/hit", compile_rows),
                         ("Python launch", python_launch_rows)):
            t = time.perf_counter()
            print(f"  {name} ...", end="", flush=True)
            rows += fn(args, env)
            print(f" {time.perf_counter() - t:.0f} s", flush=True)
    rows = group(rows)
    add_ratios(rows)
    info["loadavg_after"] = load_average()
    print_table(rows, info, args.quick)
    stem, how = write_outputs(rows, info, args, started)
    print(f"\nwrote {stem}.json, {stem}.csv, {stem}.png (chart: {how}); "
          f"suite took {time.perf_counter() - t0:.0f} s")
    failed = [r for r in rows if r["status"] != "ok" and "not installed" not in r["note"]]
    if failed:
        print(f"{len(failed)} rows FAILED")
        if args.strict:
            sys.exit(1)


if __name__ == "__main__":
    main()
