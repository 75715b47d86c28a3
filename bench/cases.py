"""The kernel cases of the benchmark suite (bench/suite.py): for each
kernel, its inputs, a numpy reference result and checker, the amount of
work per run, and a runner per implementation (asc, the C references of
bench/ref/loops.c through ctypes, numpy, numba and CPython over
bench/py_loops.py).  A runner computes into preallocated output and
returns what the checker reads."""
import ctypes
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
KERNELS = os.path.join(HERE, "kernels", "suite_kernels.py")
SEED = os.path.join(ROOT, "examples", "python", "seed_kernels.asc")


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
                    "ref_transpose": [p, p, i64, i64],
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
    # The reference calls numpy's threaded OpenBLAS, which leaves its
    # threads spinning after each call (matmul's sgemm, conv2d's
    # tensordots; dot's sdot leaves none): the suite then pauses
    # BLAS_SETTLE_S before each timed call instead of 20 ms (bench/suite.py).
    blas = False

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
    blas = True
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


class MatmulModes(Matmul):
    """The naive i-j-p text (plain range loops, a scalar sum) in the default
    mode and with fastmath=True, against numpy in the same run: the loop-nest
    passes' goal (docs/optimizer.md)."""
    py_name = "matmul"
    note = ("naive i-j-p text, plain range loops (bench/kernels/suite_kernels.py "
            "matmul_naive / matmul_naive_fast), replaced by the gemmrec pass; "
            "'asc default' is bit for bit Python's order of operations per "
            "element (gemm_exact), fastmath=True calls the runtime's BLAS; "
            "numpy is BLAS sgemm")

    def __init__(self, sizes, libs, n, reps):
        super().__init__(sizes, libs, n, reps)
        self.name = f"matmul naive {n}^3"
        self.note = MatmulModes.note

    def _run(self, inp, name):
        k = getattr(self.libs.asc_module("suite"), name)
        a, b, c = inp["a"], inp["b"], inp["c"]
        return lambda: (k(a, b, c), c)[1]

    def variants(self, inp):
        return {"asc default": lambda: self._run(inp, "matmul_naive"),
                "asc fastmath=True": lambda: self._run(inp, "matmul_naive_fast"),
                "numpy": lambda: self.run_numpy(inp)}


class MatmulOperator(Matmul):
    """`c[:, :] = a @ b` in a kernel (asc_krt.gemm on the runtime's BLAS,
    docs/arrays.md) against numpy's matmul in the same run."""
    py_name = "matmul"
    note = ("c[:, :] = a @ b in a kernel (bench/kernels/suite_kernels.py "
            "matmul_op): the runtime's serial OpenBLAS, one slab per team "
            "thread; numpy is its own threaded OpenBLAS sgemm")

    def __init__(self, sizes, libs, n, reps):
        super().__init__(sizes, libs, n, reps)
        self.name = f"matmul a @ b {n}^3"
        self.note = MatmulOperator.note

    def variants(self, inp):
        def asc_op():
            k = self.libs.asc_module("suite").matmul_op
            a, b, c = inp["a"], inp["b"], inp["c"]
            return lambda: (k(a, b, c), c)[1]
        return {"asc a @ b": asc_op, "numpy": lambda: self.run_numpy(inp)}


class Conv2d(Case):
    name = "conv2d"
    blas = True
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


class FastmathSum(Case):
    """One kernel text, fastmath=True against the default mode in the same
    run: the ratio of the "asc default" row is how much faster fastmath is."""
    name = "f32 sum fastmath"
    unit = "GB/s"
    py_name = "fsum"
    note = ("s += x[i] over a plain range, one kernel text: asc fastmath=True is "
            "the asc row, 'asc default' (Python's order, bit for bit) its "
            "reference, so its ratio = default time / fastmath time; inputs are "
            "multiples of 1/4, so every order sums exactly; GB/s counts 4 B per element")

    def size_text(self, inp):
        return f"n={inp['x'].size}"

    def inputs(self, n):
        return {"x": quarters(rng(), n), "out": np.zeros(1, np.float32)}

    def expected(self, inp):
        return np.array([inp["x"].astype(np.float64).sum()])

    def check(self, out, exp):
        return check_equal(np.asarray(out, np.float64).reshape(1), exp)

    def work(self, inp):
        return 4 * inp["x"].size

    def elements(self, inp):
        return inp["x"].size

    def _run(self, inp, name):
        k = getattr(self.libs.asc_module("suite"), name)
        x, out = inp["x"], inp["out"]
        return lambda: (k(x, out), out)[1]

    def variants(self, inp):
        """impl -> runner maker, replacing the suite's usual set."""
        x = inp["x"]
        return {"asc fastmath=True": lambda: self._run(inp, "fsum_fast"),
                "asc default": lambda: self._run(inp, "fsum"),
                "numpy": lambda: (lambda: np.array([x.sum()]))}

    def run_py(self, inp, fn):
        x, out = inp["x"], inp["out"]
        return lambda: (fn(x, out), out)[1]


class Transpose(Case):
    name = "transpose"
    unit = "GB/s"
    py_name = "transpose"
    note = ("b[j, i] = a[i, j], plain range loops; numpy: a.T.copy() (a new "
            "array each run); GB/s counts 8 B per element")

    def size_text(self, inp):
        n, m = inp["a"].shape
        return f"{n}^2 f32" if n == m else f"{n}x{m} f32"

    def inputs(self, n):
        r = rng()
        return {"a": r.random((n, n), np.float32), "b": np.zeros((n, n), np.float32)}

    def expected(self, inp):
        return inp["a"].T.copy()

    def check(self, out, exp):
        return check_equal(out, exp)

    def work(self, inp):
        return 8 * inp["a"].size

    def elements(self, inp):
        return inp["a"].size

    def run_asc(self, inp):
        k = self.libs.asc_module("suite").transpose
        a, b = inp["a"], inp["b"]
        return lambda: (k(a, b), b)[1]

    def run_c(self, inp, lib):
        a, b = inp["a"], inp["b"]
        n, m = a.shape
        return lambda: (lib.ref_transpose(ptr(a), ptr(b), n, m), b)[1]

    def run_numpy(self, inp):
        a = inp["a"]
        return lambda: a.T.copy()

    def run_py(self, inp, fn):
        a, b = inp["a"], inp["b"]
        return lambda: (fn(a, b), b)[1]


def make_cases(sizes, libs):
    cases = [VectorAdd(sizes, libs), Saxpy(sizes, libs)]
    cases += [Matmul(sizes, libs, n, reps) for n, reps in sizes["matmul"]]
    cases.append(MatmulModes(sizes, libs, *sizes["matmul_modes"]))
    cases.append(MatmulOperator(sizes, libs, *sizes["matmul_op"]))
    cases += [Conv2d(sizes, libs), Softmax(sizes, libs), Histogram(sizes, libs),
              Dot(sizes, libs), FastmathSum(sizes, libs), Transpose(sizes, libs)]
    return cases


def case_full_arg(case, sizes):
    if isinstance(case, Matmul):
        return case.n
    if isinstance(case, Conv2d):
        return sizes["conv"]
    if isinstance(case, Softmax):
        return sizes["softmax"]
    if isinstance(case, Transpose):
        return sizes["transpose"]
    return sizes["n"]


def case_small_arg(case, sizes):
    if isinstance(case, Matmul):
        return sizes["py_matmul"]
    if isinstance(case, Conv2d):
        return sizes["py_conv"]
    if isinstance(case, Softmax):
        return (sizes["py_softmax_rows"], sizes["softmax"][1])
    if isinstance(case, Transpose):
        return sizes["py_transpose"]
    return sizes["py_n"]
