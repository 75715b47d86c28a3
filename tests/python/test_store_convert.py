"""Stores convert like numpy's item assignment (issue 16, docs/arrays.md):
float64 into float32, int64 products into int32 (wrapping), floats into
ints (truncating toward zero; NaN and out-of-range raise like int(x))."""
import numpy as np
import pytest

import asc

SRC = """
import asc

@asc.kernel
def k(f32, i32, i8, f64, i64, u8, b):
    for i in range(f64.shape[0]):
        f32[i] = f64[i] * 3.0
        i32[i] = i32[i] * i64[i]
        i8[i] += 1.5
        u8[i] = f64[i] * f64[i]
        b[i] = f64[i]

@asc.kernel
def to_int(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i]

@asc.kernel
def lit(out):
    out[0] = 2.7
    out[1] = -2.7
"""


def test_stores_convert_like_numpy():
    m = asc.compile(SRC)
    rng = np.random.default_rng(5)
    n = 64
    f64 = rng.uniform(-10, 10, n)
    f64[:4] = [0.0, -0.0, 0.5, -3.99]
    i64 = rng.integers(-2**40, 2**40, n)
    i32 = rng.integers(-1000, 1000, n).astype(np.int32)
    i8 = rng.integers(-100, 100, n).astype(np.int8)
    f32 = np.zeros(n, np.float32)
    u8 = np.zeros(n, np.uint8)
    b = np.zeros(n, np.bool_)
    w_f32, w_i32, w_i8, w_u8, w_b = f32.copy(), i32.copy(), i8.copy(), u8.copy(), b.copy()
    for i in range(n):             # numpy item assignment, element by element
        w_f32[i] = f64[i] * 3.0
        w_i32[i] = (np.int64(i32[i]) * i64[i]).astype(np.int32)  # wraps
        w_i8[i] = int(i8[i] + 1.5)
        w_u8[i] = int(f64[i] * f64[i])
        w_b[i] = f64[i]
    m.k(f32, i32, i8, f64, i64, u8, b)
    np.testing.assert_array_equal(f32, w_f32)
    np.testing.assert_array_equal(i32, w_i32)
    np.testing.assert_array_equal(i8, w_i8)
    np.testing.assert_array_equal(u8, w_u8)
    np.testing.assert_array_equal(b, w_b)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int16, np.uint32])
def test_float_to_int_truncates_toward_zero(dtype):
    m = asc.compile(SRC)
    x = np.array([0.0, 0.9, -0.9, 7.5, -7.5, 100.25])
    if np.dtype(dtype).kind == "u":
        x = np.abs(x)
    out = np.zeros(len(x), dtype)
    m.to_int(x, out)
    np.testing.assert_array_equal(out, np.trunc(x).astype(dtype))
    lit = np.zeros(2, np.int64)
    m.lit(lit)
    assert list(lit) == [2, -2]


def test_nan_and_out_of_range_raise_like_int():
    m = asc.compile(SRC)
    out = np.zeros(1, np.int32)
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        m.to_int(np.array([np.nan]), out)
    with pytest.raises(OverflowError, match="out of range"):
        m.to_int(np.array([3e9]), out)
    with pytest.raises(OverflowError):
        m.to_int(np.array([np.inf]), out)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_true_division_in_place_on_an_integer_element(dtype):
    """`a[i] /= v` on an integer array is `a[i] = a[i] / v`, as numpy's
    item assignment: true division in float64, truncated on the store
    (it was an internal compiler error: an integer `div`).  numpy's
    whole-array `a /= v` is refused (same_kind), and so is ours."""
    mod = asc.compile(
        "import asc\n"
        "@asc.kernel\n"
        "def k(a, v):\n"
        "    for i in range(a.shape[0]):\n"
        "        a[i] /= v[i]\n"
    )
    a = np.array([7, 9, 100, 1], dtype)
    # 9 / -4 = -2.25 would not fit uint8
    v = np.array([2, 4 if dtype == np.uint8 else -4, 3, 3], np.int64)
    want = a.copy()
    for i in range(len(a)):
        want[i] = int(int(want[i]) / int(v[i]))
    mod.k(a, v)
    assert np.array_equal(a, want)
    b = np.ones(2, dtype)
    with pytest.raises(OverflowError):
        mod.k(b, np.zeros(2, np.int64))     # 1 / 0 is inf in numpy's scalars
