"""Vector math (docs/vecmath.md): the math functions of kernel loops,
measured against a reference (mpmath for float64, Python's float64 math
for float32) within the documented bounds; IEEE special values; the same
answer for an element wherever it falls (vector body, vector epilogue,
scalar remainder) and whichever C compiler built the kernel; and the libm
fallback (ASC_VECMATH=libm, or no SLEEF), which is a separate cache
entry."""
import ctypes
import ctypes.util
import math
import os
import shutil
import subprocess

import numpy as np
import pytest

import asc

mpmath = pytest.importorskip("mpmath")

# name, arity, (kind, lo, hi) input ranges for float32 / float64:
# "u": uniform in [lo, hi]; "l": +-10**uniform(lo, hi); "p": 10**uniform.
FUNCS = [
    ("sin", 1, [("u", -10, 10), ("l", -30, 30)], [("u", -10, 10), ("l", -300, 300)]),
    ("cos", 1, [("u", -10, 10), ("l", -30, 30)], [("u", -10, 10), ("l", -300, 300)]),
    ("tan", 1, [("u", -10, 10), ("l", -30, 30)], [("u", -10, 10), ("l", -300, 300)]),
    ("asin", 1, [("u", -1, 1), ("l", -40, 0)], [("u", -1, 1), ("l", -300, 0)]),
    ("acos", 1, [("u", -1, 1), ("l", -40, 0)], [("u", -1, 1), ("l", -300, 0)]),
    ("atan", 1, [("l", -40, 38)], [("l", -300, 300)]),
    ("sinh", 1, [("u", -89, 89), ("l", -40, 1)], [("u", -710, 710), ("l", -300, 1)]),
    ("cosh", 1, [("u", -89, 89)], [("u", -710, 710)]),
    ("tanh", 1, [("u", -20, 20), ("l", -40, 1)], [("u", -40, 40), ("l", -300, 1)]),
    ("exp", 1, [("u", -104, 89)], [("u", -746, 710)]),
    ("expm1", 1, [("u", -20, 89), ("l", -40, 0)], [("u", -40, 710), ("l", -300, 0)]),
    ("log", 1, [("p", -45, 38)], [("p", -323, 308)]),
    ("log2", 1, [("p", -45, 38)], [("p", -323, 308)]),
    ("log10", 1, [("p", -45, 38)], [("p", -323, 308)]),
    ("log1p", 1, [("u", -0.999, 1), ("p", -40, 38)], [("u", -0.999, 1), ("p", -300, 308)]),
    ("erf", 1, [("u", -5, 5), ("l", -40, 0)], [("u", -7, 7), ("l", -300, 0)]),
    ("atan2", 2, [("u", -10, 10)], [("u", -10, 10)]),
    ("pow", 2, [("p", -3, 3)], [("p", -3, 3)]),
]
BOUND_ULP = 1.0         # SLEEF's u10 functions (docs/vecmath.md)
N = 1003                # not a multiple of any vector width: a remainder

MP = {"sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan,
      "asin": mpmath.asin, "acos": mpmath.acos, "atan": mpmath.atan,
      "sinh": mpmath.sinh, "cosh": mpmath.cosh, "tanh": mpmath.tanh,
      "exp": mpmath.exp, "expm1": mpmath.expm1, "log": mpmath.log,
      "log2": lambda x: mpmath.log(x, 2), "log10": mpmath.log10,
      "log1p": mpmath.log1p, "cbrt": mpmath.cbrt, "erf": mpmath.erf,
      "atan2": mpmath.atan2, "pow": mpmath.power}
PY = {"log1p": math.log1p, "cbrt": math.cbrt, "atan2": math.atan2,
      "pow": math.pow}
NP = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
      "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
      "atan2": np.arctan2, "pow": np.power, "erf": np.vectorize(math.erf)}

SPECIALS = [math.nan, math.inf, -math.inf, 0.0, -0.0]
PAIR_SPECIALS = [(1.0, math.nan), (math.nan, 0.0), (2.0, math.inf),
                 (0.5, math.inf), (-1.0, math.inf), (math.inf, -1.0),
                 (math.inf, 2.0), (-math.inf, 3.0), (math.nan, 2.0),
                 (-2.0, 0.5), (0.0, 2.0), (-0.0, 3.0), (0.0, -0.0),
                 (-0.0, -1.0), (math.inf, math.inf), (-math.inf, -math.inf)]


def _kernel_text():
    lines = ["import asc", "", "@asc.kernel", "def vm(x, y, o):",
             "    n = x.shape[1]"]
    for k, (name, arity, _, _) in enumerate(FUNCS):
        args = f"x[{k}, i]" + (f", y[{k}, i]" if arity == 2 else "")
        lines += [f"    for i in range(n):",
                  f"        o[{k}, i] = asc.{name}({args})"]
    return "\n".join(lines) + "\n"


TEXT = _kernel_text()


def _edges(dt):
    fi = np.finfo(dt)
    tiny = float(fi.smallest_subnormal)
    return [tiny, -tiny, float(fi.smallest_normal) * 0.5,
            float(fi.smallest_normal), float(fi.max), -float(fi.max),
            1.0, -1.0, 0.5, -0.5]


def _boundaries(name, dt):
    """Inputs next to the overflow and underflow thresholds."""
    if name not in ("exp", "expm1", "sinh", "cosh", "pow"):
        return []
    big = float(np.log(np.finfo(dt).max))
    small = float(np.log(np.finfo(dt).smallest_subnormal))
    out = []
    for c in (big, small, -big):
        v = np.array(c, dtype=dt)
        for _ in range(3):
            out += [float(v), float(np.nextafter(v, dt(math.inf)))]
            v = np.nextafter(v, dt(-math.inf))
    return out


def _inputs(dt, rng):
    """x, y of shape (len(FUNCS), N): random inputs in each function's
    ranges, then special values and edges."""
    x = np.empty((len(FUNCS), N), dtype=dt)
    y = np.empty((len(FUNCS), N), dtype=dt)
    for k, (name, arity, r32, r64) in enumerate(FUNCS):
        ranges = r32 if dt == np.float32 else r64
        parts = []
        m = N // len(ranges)
        for kind, lo, hi in ranges:
            u = rng.uniform(lo, hi, m)
            if kind == "l":
                u = np.sign(rng.uniform(-1, 1, m)) * 10.0 ** u
            elif kind == "p":
                u = 10.0 ** u
            parts.append(u)
        v = np.concatenate(parts + [rng.uniform(-1, 1, N)])[:N]
        w = rng.uniform(-30, 30, N) if name == "pow" else rng.uniform(-10, 10, N)
        if name == "pow":  # negative bases with integer exponents too
            v[: N // 8] = -v[: N // 8]
            w[: N // 8] = np.round(w[: N // 8])
        if name == "atan2":
            v[: N // 4] *= 10.0 ** rng.uniform(-30, 30, N // 4)
        extra = SPECIALS + _edges(dt) + _boundaries(name, dt)
        if arity == 2:
            pairs = PAIR_SPECIALS if name == "pow" else [
                (a, b) for a in SPECIALS[:4] for b in SPECIALS]
            for j, (a, b) in enumerate(pairs):
                v[N - 1 - j], w[N - 1 - j] = a, b
        else:
            v[N - len(extra):] = extra
        with np.errstate(over="ignore"):
            x[k] = v.astype(dt)
            y[k] = w.astype(dt)
    return x, y


def _run(mod, x, y):
    o = np.zeros_like(x)
    mod.vm(x, y, o)
    return o


def _ulp(ref, dt):
    """The spacing of dt at |ref| (its subnormal spacing below)."""
    fi = np.finfo(dt)
    e = max(math.frexp(abs(ref))[1] - 1, int(np.log2(fi.smallest_normal)))
    return math.ldexp(1.0, e - fi.nmant)


def _exact_expected(name, a, b, dt):
    """numpy's float64 answer for a special input, in dt."""
    f = NP.get(name, getattr(np, name, None))
    with np.errstate(all="ignore"):
        r = f(np.float64(a)) if b is None else f(np.float64(a), np.float64(b))
        return np.asarray(r).astype(dt)


def _reference(name, a, b, dt):
    if dt == np.float32:
        f = PY.get(name, getattr(math, name))
        try:
            return f(a) if b is None else f(a, b)
        except (ValueError, OverflowError):
            pass  # a pole, a domain error or an overflow: ask mpmath
    with mpmath.workdps(60):
        try:
            r = MP[name](mpmath.mpf(a)) if b is None else \
                MP[name](mpmath.mpf(a), mpmath.mpf(b))
        except (ValueError, ZeroDivisionError):
            return None
        return None if isinstance(r, mpmath.mpc) else r


def _ulp_error(got, ref, dt):
    fi = np.finfo(dt)
    if abs(ref) > float(fi.max) * (1 + 2.0 ** -(fi.nmant + 1)):
        return 0.0 if got == math.copysign(math.inf, ref) else math.inf
    if not math.isfinite(got):
        return math.inf
    d = abs(mpmath.mpf(got) - ref) if dt == np.float64 else abs(got - ref)
    return float(d) / _ulp(float(ref), dt)


def _check(o, x, y, dt, bound):
    """Max ulp error per function; every special matches exactly."""
    worst = {}
    for k, (name, arity, _, _) in enumerate(FUNCS):
        w = 0.0
        for i in range(N):
            a = float(x[k, i])
            b = float(y[k, i]) if arity == 2 else None
            got = o[k, i]
            special = not math.isfinite(a) or a == 0 or (
                b is not None and (not math.isfinite(b) or b == 0))
            if special:
                exp = _exact_expected(name, a, b, dt)
                same = (np.isnan(exp) and np.isnan(got)) or (
                    exp == got and np.signbit(exp) == np.signbit(got))
                assert same, f"{name}({a}, {b}) {dt.__name__}: got {got!r}, " \
                             f"expected {exp!r}"
                continue
            ref = _reference(name, a, b, dt)
            if ref is None:
                assert np.isnan(got), f"{name}({a}, {b}): got {got!r}, not nan"
                continue
            e = _ulp_error(float(got), ref, dt)
            assert e <= bound, f"{name}({a!r}, {b!r}) {dt.__name__}: got " \
                f"{float(got)!r}, reference {float(ref)!r}: {e:.3f} ulp"
            w = max(w, e)
        worst[name] = w
    return worst


def _sleef_found(cc=None):
    cc = cc or os.environ.get("ASC_CC") or "cc"
    try:
        p = subprocess.run([cc, "-print-file-name=libsleef.so.3"],
                           capture_output=True, text=True, timeout=60)
    except OSError:
        return False
    path = p.stdout.strip()
    return os.path.isabs(path) and os.path.exists(path)


def _same_bits(a, b):
    """The same bits, except that a NaN equals any NaN: the AVX-512
    variants of SLEEF give log(-0.5) a NaN of the other sign than the
    AVX2 and scalar ones (docs/vecmath.md)."""
    a, b = np.asarray(a), np.asarray(b)
    both_nan = np.isnan(a) & np.isnan(b)
    u = np.uint32 if a.dtype == np.float32 else np.uint64
    return bool(np.all((a.view(u) == b.view(u)) | both_nan))


@pytest.fixture
def vecmath_env(monkeypatch):
    """Sets ASC_VECMATH for compilations made while the test runs."""
    def set_(value):
        if value is None:
            monkeypatch.delenv("ASC_VECMATH", raising=False)
        else:
            monkeypatch.setenv("ASC_VECMATH", value)
    return set_


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_each_function_within_its_documented_ulp(dt, vecmath_env):
    vecmath_env(None)
    if not _sleef_found():
        pytest.skip("no SLEEF here: the libm path is tested below")
    x, y = _inputs(dt, np.random.default_rng(1234))
    worst = _check(_run(asc.compile(TEXT), x, y), x, y, dt, BOUND_ULP)
    print(dt.__name__, {k: round(v, 3) for k, v in worst.items()})


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_an_element_gets_one_answer_wherever_it_falls(dt, vecmath_env):
    """Shifting the inputs moves each element between the vector body,
    the narrower vector epilogue and the scalar remainder."""
    vecmath_env(None)
    x, y = _inputs(dt, np.random.default_rng(99))
    mod = asc.compile(TEXT)
    o = _run(mod, x, y)
    for s in (1, 3, 5, 7):
        xs, ys = np.roll(x, s, axis=1), np.roll(y, s, axis=1)
        os_ = _run(mod, np.ascontiguousarray(xs), np.ascontiguousarray(ys))
        assert _same_bits(np.roll(o, s, axis=1), os_), f"shift {s}"
    # element by element (a loop of one: only the scalar path)
    for k in range(len(FUNCS)):
        for i in (0, 1, 2, N // 2, N - 30):
            o1 = _run(mod, np.ascontiguousarray(x[:, i:i + 1]),
                      np.ascontiguousarray(y[:, i:i + 1]))
            assert _same_bits(o1[k, :1], o[k, i:i + 1]), (FUNCS[k][0], i)


def test_gcc_and_clang_give_the_same_bits(vecmath_env, monkeypatch):
    """gcc vectorises the calls, clang calls the scalar entry: both run
    the same SLEEF variant, so the bits agree."""
    vecmath_env(None)
    if not (shutil.which("gcc") and shutil.which("clang")):
        pytest.skip("needs gcc and clang")
    if not (_sleef_found("gcc") and _sleef_found("clang")):
        pytest.skip("no SLEEF here")
    x, y = _inputs(np.float32, np.random.default_rng(5))
    xd, yd = _inputs(np.float64, np.random.default_rng(6))
    res = []
    for cc in ("gcc", "clang"):
        monkeypatch.setenv("ASC_CC", cc)
        mod = asc.compile(TEXT)
        res.append((_run(mod, x, y), _run(mod, xd, yd)))
    for a, b in zip(res[0], res[1]):
        assert _same_bits(a, b)


def _libm():
    return ctypes.CDLL(ctypes.util.find_library("m"))


def _libm_value(libm, name, a, b, dt):
    cname = name + ("f" if dt == np.float32 else "")
    f = getattr(libm, cname)
    ct = ctypes.c_float if dt == np.float32 else ctypes.c_double
    f.restype = ct
    f.argtypes = [ct] * (1 if b is None else 2)
    return dt(f(a) if b is None else f(a, b))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_libm_fallback_is_libm_and_a_separate_cache_entry(dt, vecmath_env):
    """ASC_VECMATH=libm (what a machine without SLEEF gets): every function
    is libm's, bit for bit; the default build, compiled in the same cache
    next, is SLEEF's where SLEEF is found (its sin differs from libm's in
    the last bit somewhere), so neither build was served the other's
    cached kernel."""
    libm = _libm()
    x, y = _inputs(dt, np.random.default_rng(7))
    vecmath_env("libm")
    o_libm = _run(asc.compile(TEXT), x, y)
    for k, (name, arity, _, _) in enumerate(FUNCS):
        for i in range(0, N, 7):
            b = float(y[k, i]) if arity == 2 else None
            a = float(x[k, i])
            if name == "pow" and a == 0 and b is not None and b < 0:
                continue
            ref = _libm_value(libm, name, a, b, dt)
            got = o_libm[k, i]
            assert (np.isnan(ref) and np.isnan(got)) or \
                ref.tobytes() == got.tobytes(), (name, a, b, got, ref)
    vecmath_env(None)
    o_def = _run(asc.compile(TEXT), x, y)
    differs = not np.array_equal(o_def.view(np.uint8), o_libm.view(np.uint8))
    assert differs == _sleef_found()


def test_a_fastmath_kernel_leaves_subnormals_to_later_kernels(vecmath_env):
    """Loading a fastmath=True kernel (linked with crtfastmath.o) must not
    turn on flush-to-zero in the loading thread: a default-mode exp whose
    result is subnormal still gives it, on that thread and on workers."""
    vecmath_env(None)
    fast = asc.compile("import asc\n@asc.kernel(fastmath=True)\n"
                       "def f(x):\n    x[0] = x[0] * 2.0\n")
    x = np.ones(1, np.float32)
    fast.f(x)
    assert np.float32(1e-30) * np.float32(1e-10) != 0  # numpy, this thread
    x, y = _inputs(np.float32, np.random.default_rng(3))
    k = [f[0] for f in FUNCS].index("exp")
    x[k, :] = np.float32(-98.0)       # exp(-98) = 2.7e-43, subnormal
    o = _run(asc.compile(TEXT), x, y)
    assert (o[k] > 0).all(), o[k][o[k] == 0][:4]
