"""complex64 / complex128: dtypes, arrays and launches (docs/arrays.md,
"Complex numbers")."""
import numpy as np
import pytest

import asc


@pytest.mark.parametrize("d,nt,size,fmt", [(asc.complex64, np.complex64, 8, "Zf"),
                                           (asc.complex128, np.complex128, 16, "Zd")])
def test_complex_dtypes_and_buffers(d, nt, size, fmt):
    assert d.itemsize == size and d.kind == "c"
    assert asc.as_dtype(nt) is d and asc.as_dtype(d.name) is d
    x = np.array([1 + 2j, -3.5 - 0.25j, 1e-3j], dtype=nt)
    a = asc.asarray(x)
    assert a.dtype is d
    assert memoryview(a).format == fmt
    back = np.asarray(a)
    assert back.dtype == nt
    np.testing.assert_array_equal(back, x)
    # np.asarray of an asc.Array shares its memory
    back[0] = 7 - 7j
    assert np.asarray(a)[0] == 7 - 7j
    assert np.asarray(asc.zeros(4, d)).dtype == nt


SCALAR_SRC = """
import asc
@asc.kernel
def put(x, s):
    x[0] = s
"""


@pytest.mark.parametrize("z", [1j, np.complex64(1j), np.complex128(2 - 1j)])
def test_complex_scalar_argument_into_a_float_array_is_an_error(z):
    """A complex number passed for a parameter the text reads as a number
    runs the variant taking it as a 0-d complex array; storing it into a
    float array is then numpy's refusal, at the line."""
    put = asc.compile(SCALAR_SRC).put
    with pytest.raises(asc.CompileError, match=r"(?s)<string>:\d+:.*cannot "
                       r"store a complex value"):
        put(np.zeros(2), z)
    x = np.zeros(2, np.complex128)
    put(x, z)
    assert x[0] == z


KERNELS = asc.compile("""
import asc
import numpy as np

@asc.kernel
def arith(z, w, out):
    for i in range(z.shape[0]):
        a = z[i]
        b = w[i]
        out[i] = (a * b + 1j - a / b + 2.5 * a - b) ** 2 + a.conj() * complex(1.0, 2.0)

@asc.kernel
def funcs(z, e, l, s, si, co, ta):
    for i in range(z.shape[0]):
        e[i] = np.exp(z[i])
        l[i] = np.log(z[i])
        s[i] = np.sqrt(z[i])
        si[i] = np.sin(z[i])
        co[i] = np.cos(z[i])
        ta[i] = np.tanh(z[i])

@asc.kernel
def parts(z, re, im, ab, an):
    for i in range(z.shape[0]):
        re[i] = z[i].real
        im[i] = z[i].imag
        ab[i] = abs(z[i])
        an[i] = np.angle(z[i])

@asc.kernel
def power(z, w, out):
    for i in range(z.shape[0]):
        out[i] = z[i] ** w[i] + z[i] ** 3

@asc.kernel
def compare(z, out):
    for i in range(z.shape[0]):
        out[i] = z[i] == z[0] or z[i] != 1j

@asc.kernel
def whole(z, w, out):
    out[:] = z * w + 2j

@asc.kernel
def total(z, out):
    out[0] = np.sum(z)
    out[1] = np.prod(z)
    out[2] = np.mean(z)

@asc.kernel
def parallel(z, out):
    for i in asc.prange(z.shape[0]):
        out[i] = z[i] * z[i] - 1

@asc.kernel
def add(a, b, out):
    out[:] = a + b

@asc.kernel
def names(z, w, out, b, r):
    out[0] = np.dot(z, w)
    b[0] = np.any(z)
    b[1] = np.all(z)
    r[0] = np.abs(z[0])
    r[1] = np.absolute(z[1])
    r[2] = np.real(z[2])
    r[3] = np.imag(z[0])
    out[1] = z[0].conjugate() + np.conjugate(z[1])

@asc.kernel
def scale(z, out):
    for i in range(z.shape[0]):
        out[i] = z[i] * 2 + 0.5
""")

CDT = [(np.complex64, np.float32, 2e-6), (np.complex128, np.float64, 1e-14)]


def cdata(dt, n=17, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-2, 2, n) + 1j * rng.uniform(-2, 2, n)).astype(dt)


def close(got, want, rtol):
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    scale = np.maximum(np.abs(want), 1)
    assert np.all(np.abs(got - want) <= rtol * scale), np.max(np.abs(got - want) / scale)


@pytest.mark.parametrize("dt,rdt,rtol", CDT)
def test_arithmetic_matches_numpy(dt, rdt, rtol):
    z, w = cdata(dt, seed=1), cdata(dt, seed=2)
    out = np.zeros_like(z)
    KERNELS.arith(z, w, out)
    a, b = z, w
    want = (a * b + 1j - a / b + 2.5 * a - b) ** 2 + a.conj() * complex(1.0, 2.0)
    close(out, want.astype(dt), 8 * rtol)


@pytest.mark.parametrize("dt,rdt,rtol", CDT)
def test_math_functions_within_a_few_ulps(dt, rdt, rtol):
    z = cdata(dt, seed=3)
    outs = [np.zeros_like(z) for _ in range(6)]
    KERNELS.funcs(z, *outs)
    for got, f in zip(outs, (np.exp, np.log, np.sqrt, np.sin, np.cos, np.tanh)):
        close(got, f(z), 4 * rtol)


@pytest.mark.parametrize("dt,rdt,rtol", CDT)
def test_parts_abs_angle_are_real(dt, rdt, rtol):
    z = cdata(dt, seed=4)
    re, im, ab, an = (np.zeros(z.shape, rdt) for _ in range(4))
    KERNELS.parts(z, re, im, ab, an)
    np.testing.assert_array_equal(re, z.real)
    np.testing.assert_array_equal(im, z.imag)
    close(ab, np.abs(z), rtol)
    close(an, np.angle(z).astype(rdt), rtol)


@pytest.mark.parametrize("dt,rdt,rtol", CDT)
def test_complex_power(dt, rdt, rtol):
    z, w = cdata(dt, seed=5), cdata(dt, seed=6)
    out = np.zeros_like(z)
    KERNELS.power(z, w, out)
    close(out, z ** w + z ** 3, 64 * rtol)


def test_equality_and_elementwise_and_reductions():
    z = np.array([1 + 2j, 1j, -3 + 0.5j, 1 + 2j])
    out = np.zeros(4, bool)
    KERNELS.compare(z, out)
    np.testing.assert_array_equal(out, (z == z[0]) | (z != 1j))
    w = z[::-1].copy()
    o = np.zeros_like(z)
    KERNELS.whole(z, w, o)
    np.testing.assert_allclose(o, z * w + 2j, rtol=1e-15)
    t = np.zeros(3, complex)
    KERNELS.total(z, t)
    np.testing.assert_allclose(t, [z.sum(), z.prod(), z.mean()], rtol=1e-14)
    p = np.zeros_like(z)
    KERNELS.parallel(z, p)
    np.testing.assert_allclose(p, z * z - 1, rtol=1e-15)


def test_numpy_names_of_complex_operations():
    z = np.array([1 + 2j, 3 - 1j, 0.5 + 0j])
    w = np.array([2 - 1j, 1j, 5 + 0j])
    out = np.zeros(2, complex)
    b = np.zeros(2, bool)
    r = np.zeros(4)
    KERNELS.names(z, w, out, b, r)
    np.testing.assert_allclose(out, [np.dot(z, w), z[0].conj() + z[1].conj()], rtol=1e-15)
    np.testing.assert_array_equal(b, [np.any(z), np.all(z)])
    np.testing.assert_allclose(r, [abs(z[0]), abs(z[1]), 0.5, 2.0], rtol=1e-15)


def test_promotion_follows_numpy():
    c64 = cdata(np.complex64, 5)
    # complex64 + float64 is complex128 (the complex64 output would round)
    out = np.zeros(5, np.complex128)
    f = np.linspace(0.1, 0.5, 5)
    KERNELS.add(c64, f, out)
    np.testing.assert_array_equal(out, c64 + f)
    # complex64 + float32 is complex64: exactly numpy's rounding
    out = np.zeros(5, np.complex64)
    KERNELS.add(c64, f.astype(np.float32), out)
    np.testing.assert_array_equal(out, c64 + f.astype(np.float32))
    # Python scalars are weak (NEP 50): complex64 * 2 + 0.5 stays complex64
    out = np.zeros(5, np.complex64)
    KERNELS.scale(c64, out)
    np.testing.assert_array_equal(out, c64 * 2 + 0.5)


def test_complex_scalar_results():
    """A returned complex number comes back as a numpy complex scalar of
    the kernel's dtype (handed over as a 0-d array, docs/arrays.md)."""
    mod = asc.compile("""
import numpy as np
import asc

@asc.kernel
def total(z):
    return z.sum()

@asc.kernel
def several(z, k):
    return z[k] * 2j, k, z.mean(), z[k].real

@asc.kernel
def literal():
    return 1 + 2j

@asc.kernel
def branches(z, k):
    if k > 0:
        return z[0]
    return z[1] * z[1]
""")
    z = np.array([1 + 2j, 3 - 1j, 0.5j])
    r = mod.total(z)
    assert type(r) is np.complex128 and r == z.sum()
    r = mod.total(z.astype(np.complex64))
    assert type(r) is np.complex64 and r == z.astype(np.complex64).sum()
    r = mod.several(z, 1)
    assert r == (z[1] * 2j, 1, z.mean(), z[1].real)
    assert [type(x) for x in r] == [np.complex128, np.int64, np.complex128, np.float64]
    assert mod.literal() == 1 + 2j
    assert mod.branches(z, 1) == z[0] and mod.branches(z, 0) == z[1] * z[1]


@pytest.mark.parametrize("src,msg", [
    ("def k(z, out):\n    out[0] = z[0] < z[1]\n",
     r":4:14: error: complex numbers have no order: '<'"),
    ("def k(z, out):\n    out[0] = z[0]\n",
     r":4:14: error: cannot store a complex value \(complex128\) into an element of Tensor\[float64, 1\].*z\.real"),
    ("def k(z, out):\n    out[0] = z[0] % 2\n",
     r":4:14: error: unsupported operand types for %"),
])
def test_diagnostics(src, msg):
    mod = asc.compile("import asc\n@asc.kernel\n" + src)
    with pytest.raises(asc.CompileError, match=msg):
        mod.k(np.array([1 + 1j, 2j]), np.zeros(2))
