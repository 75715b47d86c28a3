"""numpy's operator ufuncs (np.add, np.less, np.logical_and, ... with an
optional out array), np.eye / np.identity and np.flip in kernels
(docs/arrays.md), each compared with numpy on the same inputs."""
import numpy as np
import pytest

import asc

TEXT = """
import numpy as np
import asc

@asc.kernel
def binary(a, b):
    return (np.add(a, b), np.subtract(a, b), np.multiply(a, b),
            np.divide(a, b), np.true_divide(a, b), np.floor_divide(a, b),
            np.remainder(a, b), np.mod(a, b), np.power(a, 2))

@asc.kernel
def compare(a, b):
    return (np.less(a, b), np.less_equal(a, b), np.greater(a, b),
            np.greater_equal(a, b), np.equal(a, b), np.not_equal(a, b))

@asc.kernel
def logical(a, b):
    return (np.logical_and(a, b), np.logical_or(a, b),
            np.logical_xor(a, b), np.logical_not(a),
            np.logical_and(a > 0.5, np.greater_equal(b, 0.25)))

@asc.kernel
def unary(a):
    return np.negative(a), np.positive(a)

@asc.kernel
def cparts(a):
    return (np.conj(a), np.real(a), np.imag(a), np.angle(a), np.conjugate(a[::2]),
            np.sum(a * np.conj(a)).real)

@asc.kernel
def square(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += np.square(a[i])
    return np.square(a), np.square(a[1:] - a[:-1]), s

@asc.kernel
def bits(a, b):
    return (np.bitwise_and(a, b), np.bitwise_or(a, b), np.bitwise_xor(a, b),
            np.invert(a), np.bitwise_not(b), np.left_shift(a, 2),
            np.right_shift(b, 1))

@asc.kernel
def scalars(x, y):
    return np.add(x, y), np.multiply(x, 3), np.less(x, y), np.logical_and(x, y)

@asc.kernel
def outs(z, c, w, x, flags):
    np.multiply(z, z, z)
    np.add(z, c, out=z)
    np.negative(c, w)
    np.less(x, 0.5, flags)

@asc.kernel
def eye(n, m, k):
    return np.eye(n, m, k)

@asc.kernel
def eye_kw(n, m):
    return (np.eye(n, dtype=np.float32), np.eye(n, M=m, k=-1, dtype=np.complex128),
            np.identity(n, dtype=np.int32), np.identity(n))

@asc.kernel
def flips(a):
    return np.flip(a), np.flip(a, 0), np.flip(a, axis=-1), np.flip(a, (0, 1))

@asc.kernel
def flip_overlap(y, k, alpha):
    y[:k] += alpha * np.flip(y[:k])

@asc.kernel
def flip_dot(r, y, k):
    return np.dot(np.flip(r[:k]), y[:k])

@asc.kernel
def flip_store(a, b):
    np.flip(a)[1:] = b[:-1]
"""


@pytest.fixture(scope="module")
def m():
    return asc.compile(TEXT)


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    assert np.array_equal(got, want, equal_nan=True), (got, want)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int64])
def test_binary_ops(m, dt):
    rng = np.random.default_rng(1)
    a = (rng.random(50) * 10 - 3).astype(dt)
    b = (rng.random(50) * 5 + 1).astype(dt)
    want = (np.add(a, b), np.subtract(a, b), np.multiply(a, b), np.divide(a, b),
            np.true_divide(a, b), np.floor_divide(a, b), np.remainder(a, b),
            np.mod(a, b), np.power(a, 2))
    for g, w in zip(m.binary(a, b), want):
        same(g, w)


def test_compare_and_logical(m):
    rng = np.random.default_rng(2)
    a = rng.random((4, 6))
    b = rng.random((4, 6))
    a[0, 0] = b[0, 0]
    a[1, :] = 0.0
    for g, w in zip(m.compare(a, b), (np.less(a, b), np.less_equal(a, b),
                                      np.greater(a, b), np.greater_equal(a, b),
                                      np.equal(a, b), np.not_equal(a, b))):
        same(g, w)
    a[2, 1] = np.nan
    want = (np.logical_and(a, b), np.logical_or(a, b), np.logical_xor(a, b),
            np.logical_not(a), np.logical_and(a > 0.5, np.greater_equal(b, 0.25)))
    for g, w in zip(m.logical(a, b), want):
        same(g, w)


def test_unary_and_bits(m):
    a = np.arange(-6, 6, dtype=np.int32)
    b = np.arange(12, 0, -1, dtype=np.int32)
    for g, w in zip(m.unary(a.astype(np.float64)), (-a.astype(np.float64), +a.astype(np.float64))):
        same(g, w)
    want = (np.bitwise_and(a, b), np.bitwise_or(a, b), np.bitwise_xor(a, b),
            np.invert(a), np.bitwise_not(b), np.left_shift(a, 2), np.right_shift(b, 1))
    for g, w in zip(m.bits(a, b), want):
        same(g, w)


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int8, np.int64, np.uint16])
def test_square(m, dt):
    """np.square(x) is x ** 2 (numpy's square: x * x, the bits of x ** 2),
    in x's type (int8 wraps as numpy's does)."""
    a = (np.random.default_rng(3).standard_normal(50) * 20).astype(dt)
    got = m.square(a)
    same(got[0], np.square(a))
    same(got[1], np.square(a[1:] - a[:-1]))
    assert got[2] == sum(float(np.square(v)) for v in a)


@pytest.mark.parametrize("dt", [np.complex128, np.complex64, np.float64])
def test_complex_parts_of_arrays(m, dt):
    """np.conj, np.conjugate, np.real, np.imag and np.angle of an array are
    elementwise (they were 'conj() takes a scalar, not Tensor[...]')."""
    rng = np.random.default_rng(5)
    a = (rng.standard_normal(40) + (1j * rng.standard_normal(40) if dt != np.float64 else 0)).astype(dt)
    got = m.cparts(a)
    want = (np.conj(a), np.real(a), np.imag(a), np.angle(a), np.conjugate(a[::2]),
            np.sum(a * np.conj(a)).real)
    for g, w in zip(got[:3] + got[4:5], want[:3] + want[4:5]):
        same(g, w)
    tol = 1e-5 if dt == np.complex64 else 1e-14
    np.testing.assert_allclose(got[3], want[3], rtol=tol, atol=tol)   # atan2: SLEEF's, 1 ulp
    np.testing.assert_allclose(got[5], want[5], rtol=tol)             # the sum's order


def test_scalars(m):
    got = m.scalars(2.5, 0.0)
    assert got == (np.add(2.5, 0.0), np.multiply(2.5, 3), np.less(2.5, 0.0),
                   np.logical_and(2.5, 0.0))


def test_out_argument_statements(m):
    rng = np.random.default_rng(3)
    z = rng.random(10) + 1j * rng.random(10)
    c = rng.random(10) + 0j
    w = np.zeros(10, complex)
    x = rng.random(10)
    flags = np.zeros(10, bool)
    z0 = z.copy()
    m.outs(z, c, w, x, flags)
    # numpy's own complex multiply may contract into fma; the kernel rounds
    # the product and the sum apart
    assert np.allclose(z, z0 * z0 + c, rtol=1e-15, atol=0)
    same(w, -c)
    same(flags, x < 0.5)


@pytest.mark.parametrize("n,mm,k", [(3, 3, 0), (4, 2, 1), (2, 5, -1), (0, 3, 0),
                                    (3, 0, 0), (5, 5, 7), (5, 5, -7)])
def test_eye(m, n, mm, k):
    same(m.eye(n, mm, k), np.eye(n, mm, k))


def test_eye_dtypes_and_identity(m):
    want = (np.eye(3, dtype=np.float32), np.eye(3, M=4, k=-1, dtype=np.complex128),
            np.identity(3, dtype=np.int32), np.identity(3))
    for g, w in zip(m.eye_kw(3, 4), want):
        same(g, w)
    with pytest.raises(ValueError, match="negative dimensions"):
        m.eye(-1, 2, 0)


def test_flip(m):
    a = np.arange(12.).reshape(3, 4)
    for g, w in zip(m.flips(a), (np.flip(a), np.flip(a, 0), np.flip(a, -1), np.flip(a, (0, 1)))):
        same(g, w)
    for g in m.flips(np.zeros((0, 2))):
        assert g.shape == (0, 2)
    v = np.arange(10.)
    w = v.copy()
    w[:6] += 0.5 * np.flip(w[:6])     # reads what it writes: numpy's copy
    m.flip_overlap(v, 6, 0.5)
    same(v, w)
    r = np.arange(8.)
    y = np.arange(8.)[::-1].copy()
    assert m.flip_dot(r, y, 5) == np.dot(np.flip(r[:5]), y[:5])
    a = np.zeros(5)
    b = np.arange(5.)
    m.flip_store(a, b)
    e = np.zeros(5)
    np.flip(e)[1:] = b[:-1]
    same(a, e)


@pytest.mark.parametrize("body,message", [
    ("x = np.add(a, b, out=a)", "np.add takes 2 positional arguments in kernels"),
    ("x = np.negative(a, a)", "np.negative takes 1 positional argument in kernels"),
    ("np.add(a, b, a, a)", "np.add takes 2 positional arguments"),
    ("x = np.flip(a, axis=b)", "flip's axis is None, an integer constant"),
    ("x = np.flip(a, 2)", "flip's axis is None, an integer constant"),
    ("x = np.eye(a)", "eye() takes a scalar, not Tensor"),
    ("x = np.eye(a[0])", "eye()'s size is an integer"),
    ("x = np.eye(3, 3, 1.5)", "eye()'s k is an integer"),
])
def test_diagnostics_name_the_line(body, message):
    text = ("import numpy as np\nimport asc\n\n@asc.kernel\n"
            "def k(a: asc.Tensor[asc.float64, 1], b: asc.Tensor[asc.float64, 1]):\n"
            f"    {body}\n")
    with pytest.raises(asc.CompileError) as ei:
        asc.compile(text)
    assert message in str(ei.value)
    assert ":6:" in str(ei.value)
