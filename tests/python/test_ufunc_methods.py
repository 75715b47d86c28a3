"""numpy's ufunc methods in kernels (docs/arrays.md "ufunc methods"):
np.add/multiply/maximum/minimum/logical_and/logical_or.reduce (numpy's
default axis 0, an axis, None, keepdims), np.add/multiply.accumulate
(np.cumsum / np.cumprod, also new), and .outer of the binary ufuncs
besides add, subtract and multiply, each compared with numpy: dtypes,
views, shapes and errors."""
import numpy as np
import pytest

import asc

TEXT = """
import numpy as np
import asc

@asc.kernel
def reduce0(a):
    return (np.add.reduce(a), np.multiply.reduce(a), np.maximum.reduce(a),
            np.minimum.reduce(a))

@asc.kernel
def reduce_axes(a):
    return (np.add.reduce(a, axis=1), np.multiply.reduce(a, -1),
            np.maximum.reduce(a, axis=None), np.minimum.reduce(a, 0, keepdims=True),
            np.add.reduce(a, axis=None))

@asc.kernel
def reduce_views(a):
    return np.add.reduce(a[::2, ::-1]), np.maximum.reduce(a.T, axis=1)

@asc.kernel
def logical(b):
    return np.logical_and.reduce(b), np.logical_or.reduce(b, axis=1)

@asc.kernel
def accumulate(a):
    return (np.add.accumulate(a), np.multiply.accumulate(a),
            np.add.accumulate(a, axis=1), np.multiply.accumulate(a, axis=-1),
            np.add.accumulate(a[:, ::-1], axis=0))

@asc.kernel
def accumulate1(v):
    return np.add.accumulate(v), np.multiply.accumulate(v), np.cumprod(v), v.cumprod()

@asc.kernel
def cumprod_axes(a):
    return np.cumprod(a), np.cumprod(a, axis=0), a.cumprod(axis=1)

@asc.kernel
def max_empty(a):
    return np.maximum.reduce(a)
"""

OUTER_FLOAT = ["maximum", "minimum", "power", "divide", "true_divide",
               "floor_divide", "remainder", "mod", "arctan2", "hypot",
               "copysign", "fmod", "less", "less_equal", "greater",
               "greater_equal", "equal", "not_equal", "logical_and",
               "logical_or", "logical_xor"]
OUTER_INT = ["maximum", "minimum", "power", "floor_divide", "remainder",
             "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
             "right_shift", "less", "equal", "divide"]


def outer_module(names):
    """One kernel per ufunc: k_NAME(a, b) returns np.NAME.outer(a, b)."""
    text = "import numpy as np\nimport asc\n"
    for n in names:
        text += "\n@asc.kernel\ndef k_%s(a, b):\n    return np.%s.outer(a, b)\n" \
            % (n, n)
    return asc.compile(text)


@pytest.fixture(scope="module")
def mod():
    return asc.compile(TEXT)


def same(got, want):
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=2e-6 if want.dtype in (
            np.float32, np.complex64) else 1e-13, equal_nan=True)


def data(dt, shape, rng):
    if np.dtype(dt).kind in "iu":
        return rng.integers(1, 4, size=shape).astype(dt)
    x = rng.uniform(0.5, 1.5, size=shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * rng.uniform(-0.5, 0.5, size=shape)
    return x.astype(dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.int64,
                                np.uint8])
def test_reduce_default_axis_is_0(mod, dt):
    a = data(dt, (5, 4), np.random.default_rng(1))
    got = mod.reduce0(a)
    for g, w in zip(got, (np.add.reduce(a), np.multiply.reduce(a),
                          np.maximum.reduce(a), np.minimum.reduce(a))):
        same(g, w)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int64,
                                np.complex128])
def test_reduce_axes(mod, dt):
    a = data(dt, (3, 6), np.random.default_rng(2))
    if np.dtype(dt).kind == "c":
        got = mod.reduce_axes(a.real.copy())
        a = a.real.copy()
    else:
        got = mod.reduce_axes(a)
    want = (np.add.reduce(a, axis=1), np.multiply.reduce(a, -1),
            np.maximum.reduce(a, axis=None),
            np.minimum.reduce(a, 0, keepdims=True), np.add.reduce(a, axis=None))
    for g, w in zip(got, want):
        same(g, np.asarray(w))


def test_reduce_views_and_bools(mod):
    a = data(np.float64, (6, 5), np.random.default_rng(3))
    g1, g2 = mod.reduce_views(a)
    same(g1, np.add.reduce(a[::2, ::-1]))
    same(g2, np.maximum.reduce(a.T, axis=1))
    b = np.random.default_rng(4).random((4, 3)) > 0.3
    g1, g2 = mod.logical(b)
    same(g1, np.logical_and.reduce(b))
    same(g2, np.logical_or.reduce(b, axis=1))


def test_reduce_of_nothing_is_numpys_error(mod):
    with pytest.raises(ValueError) as e:
        mod.max_empty(np.empty((0, 3)))
    assert "zero-size array to reduction operation maximum" in str(e.value)
    with pytest.raises(ValueError):
        np.maximum.reduce(np.empty((0, 3)))


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.int64,
                                np.complex128, np.bool_])
def test_accumulate(mod, dt):
    rng = np.random.default_rng(5)
    a = data(dt, (4, 5), rng) if dt != np.bool_ else rng.random((4, 5)) > 0.4
    want = (np.add.accumulate(a), np.multiply.accumulate(a),
            np.add.accumulate(a, axis=1), np.multiply.accumulate(a, axis=-1),
            np.add.accumulate(a[:, ::-1], axis=0))
    for g, w in zip(mod.accumulate(a), want):
        same(g, w)
    v = a[1].copy()
    want = (np.add.accumulate(v), np.multiply.accumulate(v), np.cumprod(v),
            v.cumprod())
    for g, w in zip(mod.accumulate1(v), want):
        same(g, w)
    want = (np.cumprod(a), np.cumprod(a, axis=0), a.cumprod(axis=1))
    for g, w in zip(mod.cumprod_axes(a), want):
        same(g, w)


def test_cumprod_keeps_infinite_parts():
    # the first product is the element itself: (1+0j) * (inf+1j) would
    # give a nan part
    m = asc.compile(TEXT)
    z = np.array([complex(np.inf, 1.0), 2.0 + 0j])
    same(m.accumulate1(z)[2], np.cumprod(z))


def test_outer_float():
    m = outer_module(OUTER_FLOAT)
    rng = np.random.default_rng(6)
    for a, b in [(data(np.float64, (3, 4), rng), data(np.float64, (5,), rng)),
                 (data(np.float32, (4,), rng), data(np.float32, (2, 3), rng)),
                 (data(np.float64, (6, 4), rng)[::2, ::-1],
                  data(np.float32, (5,), rng))]:
        for name in OUTER_FLOAT:
            g = getattr(m, "k_" + name)(a, b)
            with np.errstate(all="ignore"):
                w = getattr(np, name).outer(a, b)
            assert g.shape == w.shape, name
            same(g, w)


def test_outer_int():
    m = outer_module(OUTER_INT)
    rng = np.random.default_rng(7)
    a = rng.integers(1, 6, size=(3, 2)).astype(np.int64)
    b = rng.integers(1, 4, size=(4,)).astype(np.int32)
    for name in OUTER_INT:
        same(getattr(m, "k_" + name)(a, b), getattr(np, name).outer(a, b))


def test_unsupported_methods_are_compile_errors():
    with pytest.raises(asc.CompileError) as e:
        asc.compile("""
import numpy as np
import asc

@asc.kernel
def k(a):
    return np.subtract.reduce(a)
""")
    assert "np.subtract.reduce is not supported in kernels" in str(e.value)
    with pytest.raises(asc.CompileError) as e:
        asc.compile("""
import numpy as np
import asc

@asc.kernel
def j(a):
    return np.add.reduce(a, dtype=np.float32)
""")
    assert "'dtype' is not supported" in str(e.value)
