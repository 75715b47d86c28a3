"""np.sign, np.reciprocal, np.fmax, np.fmin, np.heaviside and np.logaddexp at their
edges (NaN, infinities, -0.0, zero, integer dtypes, equal operands), of
numbers and of arrays, compared with numpy (docs/arrays.md "numpy and
math names")."""
import numpy as np
import pytest

import asc

SRC = """
import numpy as np
import asc

@asc.kernel
def sign_a(a):
    return np.sign(a)

@asc.kernel
def sign_s(x: asc.float64):
    return np.sign(x)

@asc.kernel
def sign_i(x: asc.int64):
    return np.sign(x)

@asc.kernel
def fmax_a(a, b):
    return np.fmax(a, b)

@asc.kernel
def fmin_a(a, b):
    return np.fmin(a, b)

@asc.kernel
def fmax_s(x: asc.float64, y: asc.float64):
    return np.fmax(x, y)

@asc.kernel
def heaviside_a(a, h):
    return np.heaviside(a, h)

@asc.kernel
def heaviside_half(a):
    return np.heaviside(a, 0.5)

@asc.kernel
def reciprocal_a(a):
    return np.reciprocal(a)

@asc.kernel
def reciprocal_s(x: asc.float64):
    return np.reciprocal(x)

@asc.kernel
def logaddexp_a(a, b):
    return np.logaddexp(a, b)

@asc.kernel
def logaddexp_s(x: asc.float64, y: asc.float64):
    return np.logaddexp(x, y)
"""

EDGE = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.5, 1e-30,
                 -1e30])


@pytest.fixture(scope="module")
def mod():
    return asc.compile(SRC)


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_sign_floats(mod, dt):
    a = EDGE.astype(dt)
    same(mod.sign_a(a), np.sign(a))
    same(mod.sign_a(a[::-2]), np.sign(a[::-2]))


@pytest.mark.parametrize("dt", ["int8", "int32", "int64", "uint8",
                                "uint64"])
def test_sign_integers_keep_dtype(mod, dt):
    info = np.iinfo(dt)
    a = np.array([info.min, info.max, 0, 1, 3], dtype=dt)
    same(mod.sign_a(a), np.sign(a))


def test_sign_numbers(mod):
    for x in EDGE:
        got = mod.sign_s(float(x))
        want = np.sign(x)
        assert got == want or (np.isnan(got) and np.isnan(want)), x
    assert [mod.sign_i(v) for v in (-7, 0, 9)] == [-1, 0, 1]


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_fmax_fmin_ignore_nan(mod, dt):
    a = np.array([np.nan, 1.0, np.nan, -np.inf, 2.0, 0.5], dtype=dt)
    b = np.array([3.0, np.nan, np.nan, 1.0, np.inf, 0.5], dtype=dt)
    same(mod.fmax_a(a, b), np.fmax(a, b))
    same(mod.fmin_a(a, b), np.fmin(a, b))
    same(mod.fmax_a(a[::-1], b[::-1]), np.fmax(a[::-1], b[::-1]))
    assert mod.fmax_s(float("nan"), 2.0) == 2.0
    assert mod.fmax_s(2.0, float("nan")) == 2.0
    assert np.isnan(mod.fmax_s(float("nan"), float("nan")))


@pytest.mark.parametrize("dt", ["int16", "int64", "uint32", "bool"])
def test_fmax_fmin_integers(mod, dt):
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2 if dt == "bool" else 50, 12).astype(dt)
    b = rng.integers(0, 2 if dt == "bool" else 50, 12).astype(dt)
    same(mod.fmax_a(a, b), np.fmax(a, b))
    same(mod.fmin_a(a, b), np.fmin(a, b))


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_heaviside(mod, dt):
    a = EDGE.astype(dt)
    h = np.full_like(a, 0.25)
    same(mod.heaviside_a(a, h), np.heaviside(a, h))
    same(mod.heaviside_half(a), np.heaviside(a, 0.5))
    i = np.array([-3, 0, 4])
    same(mod.heaviside_a(i, i), np.heaviside(i, i))  # float64


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_logaddexp(mod, dt):
    a = np.array([np.inf, -np.inf, np.nan, 1.0, -np.inf, 700.0, -800.0,
                  0.0, 3.0], dtype=dt)
    b = np.array([np.inf, -np.inf, 1.0, np.nan, 2.0, 700.0, -800.5,
                  0.0, -40.0], dtype=dt)
    with np.errstate(invalid="ignore"):
        got, want = mod.logaddexp_a(a, b), np.logaddexp(a, b)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if dt == "float32"
                               else 1e-15, equal_nan=True)
    assert mod.logaddexp_s(float("inf"), float("inf")) == float("inf")
    assert mod.logaddexp_s(1.0, 1.0) == np.logaddexp(1.0, 1.0)
    i = np.array([1, 2, 3])
    got = mod.logaddexp_a(i, i[::-1])
    np.testing.assert_allclose(got, np.logaddexp(i, i[::-1]), rtol=1e-15)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_reciprocal_floats(mod, dt):
    a = EDGE.astype(dt)
    with np.errstate(divide="ignore", over="ignore"):
        same(mod.reciprocal_a(a), np.reciprocal(a))
    assert mod.reciprocal_s(0.0) == np.inf
    assert mod.reciprocal_s(-0.0) == -np.inf
    assert mod.reciprocal_s(4.0) == 0.25


@pytest.mark.parametrize("dt", ["int8", "int32", "int64", "uint8",
                                "uint64"])
def test_reciprocal_integers(mod, dt):
    # numpy's integer reciprocal truncates 1 / x: 1, -1 or 0
    a = np.array([1, 2, 3, 100, np.iinfo(dt).max], dtype=dt)
    if np.iinfo(dt).min < 0:
        a = np.concatenate([a, np.array([-1, -2, -100], dtype=dt)])
    same(mod.reciprocal_a(a), np.reciprocal(a))
    # numpy's value for 0 is its platform's cast of inf: here 0
    same(mod.reciprocal_a(np.zeros(2, dtype=dt)), np.zeros(2, dtype=dt))


def test_complex_is_a_compile_error():
    # np.sign of complex numbers is numpy 2's z / |z| (test_numpy_more3)
    with pytest.raises(asc.CompileError, match="complex"):
        asc.compile("import numpy as np\nimport asc\n\n@asc.kernel\n"
                    "def k(a):\n    return np.reciprocal(a)\n").k(
            np.zeros(3, dtype=np.complex128))
