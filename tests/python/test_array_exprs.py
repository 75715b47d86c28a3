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


def test_overlapping_views_are_a_compile_error():
    with pytest.raises(asc.CompileError,
                       match="reads the array it writes through another view"):
        asc.compile("import asc\n@asc.kernel\ndef k(a):\n"
                    "    a[1:] = a[:-1] + 1.0\n").k(np.zeros(4))


def test_same_view_read_and_written(m):
    a = rnd(6)
    ref = a.copy()
    ref[1:] = ref[1:] * 2.0
    m.same_view(a)
    np.testing.assert_array_equal(a, ref)


def test_new_array_from_expression_is_a_clear_error():
    with pytest.raises(asc.CompileError, match="write it into an existing "
                       "array") as e:
        asc.compile("import asc\n@asc.kernel\ndef k(a, b):\n"
                    "    c = a[:] + b[:]\n    a[0] = c[0]\n").k(np.zeros(3),
                                                               np.zeros(3))
    assert ":4:" in str(e.value)
