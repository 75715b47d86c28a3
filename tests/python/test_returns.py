"""Kernels that return values to Python (docs/arrays.md, "Returning values").

A kernel called as k(...) may return a number, an array or a tuple of
them, as a numba function does: numbers come back as numpy scalars of the
kernel's dtype, arrays the kernel made come back without a copy (a numpy
array over the block the kernel filled), other arrays (a parameter, a view)
as a copy.
"""
import gc

import numpy as np
import pytest

import asc


@asc.kernel
def total(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i]
    return s


@asc.kernel
def count_positive(a):
    n = 0
    for i in range(a.shape[0]):
        if a[i] > 0:
            n += 1
    return n


@asc.kernel
def scaled(a, alpha):
    out = np.empty_like(a)
    for i in asc.prange(a.shape[0]):
        out[i] = alpha * a[i]
    return out


@asc.kernel
def expr(a, b):
    return a * 2.0 + b


@asc.kernel
def stats(a):
    return a.min(), a.max(), a - a.mean()


@asc.kernel
def first_negative(a):
    for i in range(a.shape[0]):
        if a[i] < 0:
            return i
    return -1


@asc.kernel
def same_twice(a):
    c = a + 1.0
    return c, c


@asc.kernel
def param_back(a):
    a[0] = 7.0
    return a


@asc.kernel
def view_back(a):
    return a[::2]


@asc.kernel
def rows(a):
    out = np.zeros((a.shape[0], 3), dtype=a.dtype)
    for i in range(a.shape[0]):
        for j in range(3):
            out[i, j] = a[i] * j
    return out


@asc.kernel
def maybe_fail(a, z):
    out = np.zeros(a.shape[0])
    return out, 1 // z


def test_scalar_returns_are_numpy_scalars():
    a = np.arange(10.0)
    r = total(a)
    assert isinstance(r, np.float64) and r == 45.0
    r32 = total(np.arange(4, dtype=np.float32))
    assert r32 == 6.0
    n = count_positive(np.array([1.0, -2.0, 3.0]))
    assert isinstance(n, np.int64) and n == 2


def test_an_array_the_kernel_made_comes_back_without_a_copy():
    a = np.arange(100000, dtype=np.float32)
    r = scaled(a, 3.0)
    assert isinstance(r, np.ndarray)
    assert r.dtype == np.float32 and r.shape == a.shape
    np.testing.assert_array_equal(r, 3.0 * a)
    # the ndarray views the block the kernel filled: its owner is an
    # asc.Array (device memory), not a numpy allocation
    owner = r.base.obj if isinstance(r.base, memoryview) else r.base
    assert isinstance(owner, asc._asc.Array)
    assert r.flags.writeable and r.flags.c_contiguous


def test_whole_array_expressions_and_2d():
    a = np.linspace(0, 1, 7)
    b = np.linspace(1, 2, 7)
    np.testing.assert_allclose(expr(a, b), a * 2.0 + b)
    # numbers for those parameters travel as 0-d arrays; the 0-d result
    # comes back as a number, as numpy's arithmetic on 0-d arrays gives
    r = expr(2.0, 3.0)
    assert r == 7.0 and np.ndim(r) == 0
    x = np.arange(5.0)
    np.testing.assert_array_equal(rows(x), x[:, None] * np.arange(3.0))
    assert rows(x).shape == (5, 3)


def test_tuples():
    a = np.array([3.0, -1.0, 4.0, 1.0])
    lo, hi, centred = stats(a)
    assert lo == -1.0 and hi == 4.0
    np.testing.assert_allclose(centred, a - a.mean())
    c1, c2 = same_twice(a)
    np.testing.assert_array_equal(c1, a + 1.0)
    np.testing.assert_array_equal(c2, a + 1.0)
    assert not np.shares_memory(c1, c2)  # one array returned twice: a copy


def test_return_inside_a_loop():
    assert first_negative(np.array([1.0, 2.0, -3.0, -4.0])) == 2
    assert first_negative(np.array([1.0, 2.0])) == -1


def test_parameters_and_views_come_back_as_copies():
    a = np.arange(6.0)
    r = param_back(a)
    assert a[0] == 7.0 and r[0] == 7.0
    np.testing.assert_array_equal(r, a)
    assert not np.shares_memory(r, a)
    v = view_back(np.arange(7.0))
    np.testing.assert_array_equal(v, np.arange(7.0)[::2])


def test_a_kernel_that_returns_runs_one_block_and_waits():
    a = np.arange(4.0)
    with pytest.raises(TypeError, match="returns a value"):
        scaled[2](a, 1.0)
    with pytest.raises(TypeError, match="returns a value"):
        scaled[1, asc.Stream()](a, 1.0)


def test_a_raising_kernel_returns_nothing_and_memory_comes_back():
    a = np.ones(1000)
    with pytest.raises(ZeroDivisionError):
        maybe_fail(a, 0)
    out, q = maybe_fail(a, 2)
    assert q == 0 and out.shape == (1000,)
    # many results dropped and freed: the process does not grow
    for _ in range(200):
        r = scaled(np.ones(1 << 16), 2.0)
        del r
        gc.collect()
    for _ in range(50):
        with pytest.raises(ZeroDivisionError):
            maybe_fail(a, 0)


def test_compile_text_returns():
    mod = asc.compile(
        "import asc\n"
        "import numpy as np\n"
        "@asc.kernel\n"
        "def norm(x):\n"
        "    return np.sqrt((x * x).sum())\n"
    )
    assert mod.norm(np.array([3.0, 4.0])) == pytest.approx(5.0)


def test_mixed_numbers_of_values_is_a_compile_error():
    with pytest.raises(asc.CompileError, match="returns"):
        mod = asc.compile(
            "import asc\n"
            "@asc.kernel\n"
            "def k(a):\n"
            "    if a[0] > 0:\n"
            "        return a[0], a[1]\n"
            "    return a[0]\n"
        )
        mod.k(np.ones(2))


@asc.kernel
def replaced(a):
    t = a + 1.0
    u = a * 3.0
    try:
        return t
    finally:
        return u


def _rss_kb():
    with open("/proc/self/status") as f:
        return int(f.read().split("VmRSS:")[1].split()[0])


def test_a_return_replaced_by_a_later_one_frees_the_first():
    """`try: return t` / `finally: return u`: t was handed over, then u
    replaced it; the runtime frees t when the launch completes."""
    a = np.ones(1 << 17)  # 1 MiB arrays
    assert (replaced(a) == 3.0).all()
    for _ in range(20):
        replaced(a)
    before = _rss_kb()
    for _ in range(300):
        r = replaced(a)
    assert (r == 3.0).all()
    assert _rss_kb() - before < 64 * 1024  # a leak would be 300 MiB


@asc.kernel
def first_and_copy(a):
    b = a.copy()
    return a[0], b


@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.int16, np.int32, np.int64,
                                np.uint8, np.uint16, np.uint32, np.uint64, np.float16,
                                np.float32, np.float64, np.complex64, np.complex128])
def test_every_dtype_comes_back_as_numpys(dt):
    # made by numpy's C API where the extension has it, by numpy's
    # functions otherwise: the same types and values either way
    a = (np.arange(0, 7) % 3).astype(dt)
    s, b = first_and_copy(a)
    assert type(s) is type(a[0]) and s == a[0]
    assert type(b) is np.ndarray and b.dtype == a.dtype and b.shape == a.shape
    np.testing.assert_array_equal(b, a)
    b[0] = a[1]
    assert b[0] == a[1] and a[0] != a[1]
    owner = b.base.obj if isinstance(b.base, memoryview) else b.base
    assert isinstance(owner, asc._asc.Array)
    del owner, b
    gc.collect()
