"""Views and whole-array statements in kernels (issue 16, docs/arrays.md):
basic slicing (start:stop:step, negative bounds and steps, None, fewer
indices than axes), .T, names bound to views, whole-array assignment and
in-place operators with numpy broadcasting and dtype rules, numbers passed
as 0-d arrays, and the errors numpy raises.  Each result is compared with
numpy running the same statements."""
import numpy as np
import pytest

import asc

TEXT = """
import numpy as np
import asc

@asc.kernel
def fused(out, b, c, d):
    out[:] = b + c * d

@asc.kernel
def scale(B, alpha):
    B *= alpha

@asc.kernel
def jacobi(A, B):
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:]
                           + A[2:, 1:-1] + A[:-2, 1:-1])

@asc.kernel
def rows(a, out):
    for i in range(a.shape[0]):
        row = a[i]
        out[i, :] = np.sqrt(row) + row[::-1]

@asc.kernel
def steps(a, out, lo, hi, st):
    out[:] = -1.0
    v = a[lo:hi:st]
    out[:v.shape[0]] = v
    out[out.shape[0] - 1] = v.shape[0]

@asc.kernel
def transpose(a, out):
    out[:, :] = a.T

@asc.kernel
def outer(x, y, out):
    out[:, :] = x[:, None] * y[None, :]

@asc.kernel
def bcast(a, col, row, out):
    out[:] = a - col + row

@asc.kernel
def fill(a, v):
    a[1:, ::2] = v

@asc.kernel
def inplace_slices(a, b):
    a[::2] += b[1::2]
    a[1::2] -= 2 * b[::2]

@asc.kernel
def ufuncs(a, out):
    out[:] = np.exp(a) * np.sin(a) + np.abs(a) - np.maximum(a, 0.5)

@asc.kernel
def int_ops(a, b, out):
    out[:] = a // b + a % b

@asc.kernel
def true_div(a, b, out):
    out[:] = a / b

@asc.kernel
def shape_of_view(a, out):
    v = a[1:, ::3]
    out[0] = v.shape[0]
    out[1] = v.shape[1]
    out[2] = v.size
    out[3] = v.ndim

@asc.kernel
def overlap(a):
    a[1:] = a[:-1] + 1.0

@asc.kernel
def same_view(a):
    a[1:] = a[1:] * 2.0
"""


@pytest.fixture(scope="module")
def m():
    return asc.compile(TEXT)


def rnd(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).uniform(0.5, 2.0, shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_expression(m, dtype):
    b, c, d = rnd(1000, dtype=dtype), rnd(1000, dtype=dtype, seed=1), rnd(
        1000, dtype=dtype, seed=2)
    out = np.zeros(1000, dtype)
    m.fused(out, b, c, d)
    np.testing.assert_array_equal(out, b + c * d)


def test_fused_broadcasts_scalars_and_0d(m):
    b = rnd(7)
    out = np.zeros(7)
    m.fused(out, b, 2.0, 3)  # numbers are passed as 0-d arrays
    np.testing.assert_array_equal(out, b + 2.0 * 3)
    m.fused(out, 1.5, b, np.float64(4.0))
    np.testing.assert_array_equal(out, 1.5 + b * 4.0)


def test_inplace_whole_array(m):
    B = rnd(4, 5)
    ref = B * 2.5
    m.scale(B, 2.5)
    np.testing.assert_array_equal(B, ref)
    I = np.arange(12, dtype=np.int32).reshape(3, 4)
    m.scale(I, 3)
    np.testing.assert_array_equal(I, np.arange(12).reshape(3, 4) * 3)


def test_inplace_int_by_float_is_an_error():
    with pytest.raises(asc.CompileError, match="same_kind"):
        asc.compile("import asc\n@asc.kernel\ndef k(a: asc.Tensor[asc.int32, 1]):\n"
                    "    a[:] *= 2.5\n").k(np.zeros(3, np.int32))


def test_jacobi_stencil(m):
    A = rnd(33, 47)
    B = np.zeros_like(A)
    m.jacobi(A, B)
    ref = np.zeros_like(A)
    ref[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] +
                             A[2:, 1:-1] + A[:-2, 1:-1])
    np.testing.assert_array_equal(B, ref)


def test_row_views_and_reverse(m):
    a = rnd(5, 6)
    out = np.zeros_like(a)
    m.rows(a, out)
    np.testing.assert_array_equal(out, np.sqrt(a) + a[:, ::-1])


@pytest.mark.parametrize("lo,hi,st", [
    (0, 10, 1), (2, -2, 1), (-3, 100, 1), (9, 0, -1), (-1, -11, -2),
    (100, -100, -3), (5, 5, 1), (3, 1, 1), (-100, 100, 4), (0, 10, 11),
    (8, None, -2), (None, None, -1),
])
def test_slice_bounds_like_python(m, lo, hi, st):
    a = np.arange(10.0)
    out = np.zeros(11)
    big = 1 << 40
    # None bounds: the kernel takes integers, so pass what Python would use
    lo_ = lo if lo is not None else (0 if st > 0 else big)
    hi_ = hi if hi is not None else (big if st > 0 else -big)
    m.steps(a, out, lo_, hi_, st)
    v = a[lo:hi:st]
    assert out[-1] == len(v)
    np.testing.assert_array_equal(out[:len(v)], v)


def test_zero_step_raises(m):
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        m.steps(np.arange(4.0), np.zeros(5), 0, 4, 0)


def test_transpose(m):
    a = rnd(3, 5)
    out = np.zeros((5, 3))
    m.transpose(a, out)
    np.testing.assert_array_equal(out, a.T)


def test_new_axes_outer_product(m):
    x, y = rnd(4), rnd(6, seed=1)
    out = np.zeros((4, 6))
    m.outer(x, y, out)
    np.testing.assert_array_equal(out, np.outer(x, y))


def test_runtime_broadcasting(m):
    a = rnd(4, 5)
    out = np.zeros_like(a)
    col = rnd(4, 1, seed=1)
    row = rnd(5, seed=2)
    m.bcast(a, col, row, out)
    np.testing.assert_array_equal(out, a - col + row)
    m.bcast(a, rnd(1, 5, seed=3), rnd(1, seed=4), out)
    np.testing.assert_array_equal(out, a - rnd(1, 5, seed=3) + rnd(1, seed=4))


def test_broadcast_mismatch_raises(m):
    with pytest.raises(ValueError, match="could not be broadcast"):
        m.bcast(rnd(4, 5), rnd(3, 1), rnd(5), np.zeros((4, 5)))


def test_fill_slice_with_scalar(m):
    a = np.zeros((4, 7), np.float32)
    m.fill(a, 3)
    ref = np.zeros((4, 7), np.float32)
    ref[1:, ::2] = 3
    np.testing.assert_array_equal(a, ref)


def test_inplace_on_slices(m):
    a, b = rnd(10), rnd(10, seed=1)
    ref = a.copy()
    ref[::2] += b[1::2]
    ref[1::2] -= 2 * b[::2]
    m.inplace_slices(a, b)
    np.testing.assert_array_equal(a, ref)
    # 9 elements: a[::2] has 5, b[1::2] has 4; numpy raises too
    with pytest.raises(ValueError, match="could not be broadcast"):
        m.inplace_slices(rnd(9), rnd(9))


def test_ufuncs_elementwise(m):
    a = np.linspace(-2, 2, 101)
    out = np.zeros_like(a)
    m.ufuncs(a, out)
    np.testing.assert_allclose(
        out, np.exp(a) * np.sin(a) + np.abs(a) - np.maximum(a, 0.5),
        rtol=1e-15, atol=0)


def test_integer_floor_division_and_modulo(m):
    a = np.arange(-12, 12, dtype=np.int64)
    b = np.array([3, -3, 5, -7] * 6, dtype=np.int64)
    out = np.zeros_like(a)
    m.int_ops(a, b, out)
    np.testing.assert_array_equal(out, a // b + a % b)


def test_int_true_division_gives_float(m):
    a = np.arange(1, 9, dtype=np.int32)
    b = np.full(8, 3, np.int32)
    out = np.zeros(8)
    m.true_div(a, b, out)
    np.testing.assert_array_equal(out, a / b)


def test_view_shape_size_ndim(m):
    a = np.zeros((5, 10))
    out = np.zeros(4, np.int64)
    m.shape_of_view(a, out)
    v = a[1:, ::3]
    assert list(out) == [v.shape[0], v.shape[1], v.size, v.ndim]


def test_overlapping_views_copy_first_like_numpy():
    m = asc.compile("import asc\n@asc.kernel\ndef k(a, b):\n"
                    "    a[1:] = a[:-1] + 1.0\n"
                    "    b[::-1] += b * 2\n")
    a, b = np.arange(6.0), rnd(7)
    ra, rb = a.copy(), b.copy()
    ra[1:] = ra[:-1] + 1.0
    rb[::-1] += rb * 2
    m.k(a, b)
    np.testing.assert_array_equal(a, ra)
    np.testing.assert_array_equal(b, rb)


def test_same_view_read_and_written(m):
    a = rnd(6)
    ref = a.copy()
    ref[1:] = ref[1:] * 2.0
    m.same_view(a)
    np.testing.assert_array_equal(a, ref)


def test_new_array_from_expression():
    m = asc.compile("import asc\n@asc.kernel\ndef k(a, b):\n"
                    "    c = a[:] + b[:]\n    a[0] = c[0] + c[2]\n")
    a, b = rnd(3), rnd(3, seed=1)
    ref = a.copy()
    c = ref + b
    ref[0] = c[0] + c[2]
    m.k(a, b)
    np.testing.assert_array_equal(a, ref)


RED = """
import numpy as np
import asc

@asc.kernel
def full(a, b, out):
    out[0] = np.sum(a)
    out[1] = a.prod()
    out[2] = np.min(a)
    out[3] = a.max()
    out[4] = np.mean(a)
    out[5] = a.var()
    out[6] = np.std(a, ddof=1)
    out[7] = np.argmin(a)
    out[8] = a.argmax()
    out[9] = np.dot(a[0], b[0])
    out[10] = np.any(a > 1.5) + 2 * np.all(a > 0.1)
    out[11] = np.sum(a * b)
    out[12] = np.amax(a[1:, ::2]) - np.amin(b.T)

@asc.kernel
def axes(a, rows, cols, rmax, cmean, rarg):
    rows[:] = a.sum(axis=1)
    cols[:] = np.sum(a, axis=0)
    rmax[:] = a.max(axis=-1)
    cmean[:] = a.mean(0)
    rarg[:] = np.argmax(a, axis=1)

@asc.kernel
def center(a, out):
    out[:, :] = a - a.mean(axis=1, keepdims=True)

@asc.kernel
def softmax(x, out):
    for i in range(x.shape[0]):
        m = np.max(x[i])
        out[i] = np.exp(x[i] - m)
        out[i] /= np.sum(out[i])

@asc.kernel
def ints(a, out):
    out[0] = np.sum(a)
    out[1] = np.max(a)
    out[2] = a.argmin()
    out[3] = np.mean(a) * 1000

@asc.kernel
def nan_min(a, out):
    out[0] = np.min(a)
    out[1] = np.argmax(a)

@asc.kernel
def empty_max(a, out):
    out[0] = np.max(a)

@asc.kernel
def masks(a, out):
    out[:] = (a > 1.0) * a + (a <= 1.0) * 0.5
"""


@pytest.fixture(scope="module")
def red():
    return asc.compile(RED)


def test_full_reductions(red):
    a, b = rnd(3, 4), rnd(3, 4, seed=1)
    out = np.zeros(13)
    red.full(a, b, out)
    ref = [a.sum(), a.prod(), a.min(), a.max(), a.mean(), a.var(),
           a.std(ddof=1), a.argmin(), a.argmax(), np.dot(a[0], b[0]),
           np.any(a > 1.5) + 2 * np.all(a > 0.1), np.sum(a * b),
           a[1:, ::2].max() - b.T.min()]
    np.testing.assert_allclose(out, ref, rtol=1e-13, atol=0)
    assert out[7] == a.argmin() and out[8] == a.argmax()


def test_reductions_along_an_axis(red):
    a = rnd(5, 7)
    rows, cols, rmax = np.zeros(5), np.zeros(7), np.zeros(5)
    cmean, rarg = np.zeros(7), np.zeros(5, np.int64)
    red.axes(a, rows, cols, rmax, cmean, rarg)
    np.testing.assert_allclose(rows, a.sum(axis=1), rtol=1e-14)
    np.testing.assert_allclose(cols, a.sum(axis=0), rtol=1e-14)
    np.testing.assert_array_equal(rmax, a.max(axis=1))
    np.testing.assert_allclose(cmean, a.mean(axis=0), rtol=1e-14)
    np.testing.assert_array_equal(rarg, a.argmax(axis=1))


def test_keepdims_broadcasts(red):
    a = rnd(4, 6)
    out = np.zeros_like(a)
    red.center(a, out)
    np.testing.assert_allclose(out, a - a.mean(axis=1, keepdims=True),
                               rtol=0, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_style_softmax(red, dtype):
    x = np.random.default_rng(5).standard_normal((6, 33)).astype(dtype)
    out = np.zeros_like(x)
    red.softmax(x, out)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True),
                               rtol=1e-6 if dtype == np.float32 else 1e-14)


def test_integer_reductions(red):
    a = np.array([5, -3, 7, 2, -3, 9], np.int32)
    out = np.zeros(4, np.int64)
    red.ints(a, out)
    assert list(out) == [a.sum(), a.max(), a.argmin(),
                         int(np.mean(a) * 1000)]


def test_nan_propagates_like_numpy(red):
    a = np.array([3.0, np.nan, -1.0, np.nan])
    out = np.zeros(2)
    red.nan_min(a, out)
    assert np.isnan(out[0]) and np.isnan(np.min(a))
    assert out[1] == np.argmax(a) == 1


def test_empty_max_raises_like_numpy(red):
    with pytest.raises(ValueError, match="zero-size array to reduction "
                       "operation maximum which has no identity"):
        red.empty_max(np.zeros(0), np.zeros(1))


def test_comparisons_give_bool_arrays(red):
    a = np.linspace(0, 2, 9)
    out = np.zeros_like(a)
    red.masks(a, out)
    np.testing.assert_array_equal(out, (a > 1.0) * a + (a <= 1.0) * 0.5)


def test_reduction_of_the_target_reduces_first_like_numpy():
    m = asc.compile("import asc\n@asc.kernel\ndef k(a):\n"
                    "    a[:] = a.sum(axis=0)\n")
    a = rnd(3, 3)
    ref = a.copy()
    ref[:] = ref.sum(axis=0)
    m.k(a)
    np.testing.assert_allclose(a, ref, rtol=1e-15)


def test_unsupported_reduction_arguments_are_diagnosed():
    with pytest.raises(asc.CompileError, match="out=.*not supported"):
        asc.compile("import numpy as np\nimport asc\n@asc.kernel\n"
                    "def k(a, o):\n    o[0] = np.sum(a, out=o)\n").k(
                        np.zeros(3), np.zeros(3))
    with pytest.raises(asc.CompileError, match="axis 2 is out of bounds"):
        asc.compile("import numpy as np\nimport asc\n@asc.kernel\n"
                    "def k(a, o):\n    o[:] = np.sum(a, axis=2)\n").k(
                        np.zeros((3, 3)), np.zeros(3))


def test_ellipsis_and_newaxis():
    m = asc.compile(
        "import numpy as np\nimport asc\n@asc.kernel\n"
        "def k(a, b, out, out2):\n"
        "    out[...] = a[..., ::-1] * 2\n"
        "    out2[:, np.newaxis, :] = b[np.newaxis, ...] + "
        "a[..., 0, np.newaxis, np.newaxis]\n")
    a, b = rnd(3, 4), rnd(5, seed=1)
    out, out2 = np.zeros((3, 4)), np.zeros((3, 5))
    m.k(a, b, out, out2)
    np.testing.assert_array_equal(out, a[..., ::-1] * 2)
    ref = np.zeros((3, 5))
    ref[:, np.newaxis, :] = b[np.newaxis, ...] + a[..., 0, np.newaxis,
                                                    np.newaxis]
    np.testing.assert_array_equal(out2, ref)


def test_two_ellipses_are_an_error():
    with pytest.raises(asc.CompileError, match="single ellipsis"):
        asc.compile("import asc\n@asc.kernel\ndef k(a):\n"
                    "    a[..., ...] = 1.0\n").k(np.zeros((2, 2)))


def test_where_clip_and_dtype_casts():
    m = asc.compile(
        "import numpy as np\nimport asc\n@asc.kernel\n"
        "def k(a, out, out32):\n"
        "    out[:] = np.where(a > 1.0, a, -a) + np.clip(a, 0.7, 1.5)\n"
        "    out32[:] = np.float32(a) * np.float32(3)\n"
        "    out[0] = np.where(a[0] > 5.0, 1.0, 2.0)\n")
    a = rnd(20)
    a[3] = np.nan
    out, out32 = np.zeros(20), np.zeros(20, np.float32)
    m.k(a, out, out32)
    ref = np.where(a > 1.0, a, -a) + np.clip(a, 0.7, 1.5)
    ref[0] = 2.0
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(out32, a.astype(np.float32) * np.float32(3))


def test_array_fuzz_matches_numpy(tmp_path):
    """tests/tools/array_fuzz.py in its array form (slices with negative
    steps, broadcasting, four dtypes, overlap, in-place forms), bounded:
    whatever compiles must match numpy, and nothing is an internal
    error."""
    import re
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    p = subprocess.run([sys.executable, str(root / "tests/tools/array_fuzz.py"),
                        "--seed", "20261203", "--count", "40", "--mode", "array",
                        "--last", str(tmp_path / "last.py")],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    counts = dict(re.findall(r"^  (\w[\w ]*?)\s+(\d+)$", p.stdout, re.M))
    assert counts["mismatched"] == "0", p.stdout
    assert counts["internal error"] == "0", p.stdout
    assert int(counts["matched"]) >= 20, p.stdout


def test_views_passed_to_helpers():
    m = asc.compile(
        "import asc\n"
        "@asc.func\ndef norm2(v):\n    s = 0.0\n"
        "    for k in range(v.shape[0]):\n        s += v[k] * v[k]\n"
        "    return s\n"
        "@asc.func\ndef scale(v, f):\n    v[:] = v * f\n"
        "@asc.kernel\ndef k(a, out):\n"
        "    for i in range(a.shape[0]):\n"
        "        out[i] = norm2(a[i])\n"
        "        scale(a[i, ::2], 2.0)\n")
    a = rnd(4, 5)
    a0 = a.copy()
    out = np.zeros(4)
    m.k(a, out)
    np.testing.assert_allclose(out, (a0 * a0).sum(axis=1), rtol=1e-15)
    a0[:, ::2] *= 2
    np.testing.assert_array_equal(a, a0)


def test_for_over_an_array():
    m = asc.compile(
        "import numpy as np\nimport asc\n@asc.kernel\n"
        "def k(a, out, tot):\n"
        "    i = 0\n"
        "    for row in a:\n"
        "        out[i] = np.sum(row * row)\n"
        "        row[0] = -1.0\n"
        "        i += 1\n"
        "    s = 0.0\n"
        "    for x in out[::-1]:\n"
        "        s = s * 2 + x\n"
        "    tot[0] = s\n")
    a = rnd(4, 3)
    a0 = a.copy()
    out, tot = np.zeros(4), np.zeros(1)
    m.k(a, out, tot)
    ref = (a0 * a0).sum(axis=1)
    np.testing.assert_allclose(out, ref, rtol=1e-15)
    s = 0.0
    for x in ref[::-1]:
        s = s * 2 + x
    assert tot[0] == pytest.approx(s, rel=1e-15)
    assert (a[:, 0] == -1.0).all()  # rows are views: stores reach a


def test_zip_into_one_name_is_a_clear_error():
    with pytest.raises(asc.CompileError, match="unpacks 2 names"):
        asc.compile("import asc\n@asc.kernel\ndef k(a, b):\n"
                    "    for x in zip(a, b):\n        pass\n").k(
                        np.zeros(2), np.zeros(2))


def test_len_of_views():
    m = asc.compile("import asc\n@asc.kernel\ndef k(a, out):\n"
                    "    for row in a:\n"
                    "        out[0] = len(row) + len(a[1:]) * 100 + "
                    "len(row.shape) * 10000\n")
    out = np.zeros(1)
    m.k(np.zeros((4, 3)), out)
    assert out[0] == 3 + 3 * 100 + 1 * 10000


def test_operands_of_an_inplace_whole_array_are_arrays():
    m = asc.compile("import numpy as np\nimport asc\n@asc.kernel\n"
                    "def k(out, a, b):\n    out *= np.abs(a) + b\n"
                    "@asc.kernel\n"
                    "def s(out, n, step):\n"
                    "    for i in range(n):\n        out[i] = i\n"
                    "    n += step\n    out[0] = n\n")
    out, a, b = rnd(4), rnd(4, seed=1), rnd(4, seed=2)
    ref = out * (np.abs(a) + b)
    m.k(out, a, b)
    np.testing.assert_array_equal(out, ref)
    o = np.zeros(3)
    m.s(o, 3, 2)  # n and step stay scalars
    assert list(o) == [5.0, 1.0, 2.0]


def test_operands_of_an_inplace_statement_on_a_local_array_are_arrays():
    """U = np.zeros(...); U += 0.15 * ru: ru is an array operand (it was
    typed as a scalar: 'expected a scalar, got a 2-dimensional
    numpy.ndarray'); a number passed for it is still a 0-d array."""
    m = asc.compile("import numpy as np\nimport asc\n@asc.kernel\n"
                    "def k(ru, rv):\n    U = np.zeros((4, 4))\n"
                    "    U += 0.15 * ru\n    V = U * 2.0 + rv\n    return V\n")
    ru, rv = rnd(16).reshape(4, 4), rnd(16, seed=1).reshape(4, 4)
    np.testing.assert_array_equal(m.k(ru, rv), (np.zeros((4, 4)) + 0.15 * ru) * 2.0 + rv)
    np.testing.assert_array_equal(m.k(2.0, rv), (np.zeros((4, 4)) + 0.15 * 2.0) * 2.0 + rv)


def test_square_is_exact_like_numpy():
    """x ** 2 of floats is x * x: numpy's power squares (its fast path), and
    a 1-ulp pow differed in the last bit (found by the array fuzzer)."""
    mod = asc.compile(
        "import asc\n"
        "@asc.kernel\n"
        "def sq(a, out):\n"
        "    out[...] = a ** 2 - 2\n"
    )
    rng = np.random.default_rng(0)
    for dt in (np.float32, np.float64):
        a = (rng.standard_normal(20000) * 10).astype(dt)
        out = np.zeros(20000)
        mod.sq(a, out)
        ref = np.zeros_like(out)
        ref[...] = a ** 2 - 2
        assert np.array_equal(out, ref), dt
