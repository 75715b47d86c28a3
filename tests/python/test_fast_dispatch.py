"""The launch's fast path: a kernel's last specialisation is found again
by the bytes of its signature (the specialisation table's memo,
docs/latency.md "The launch path"), without the signature's text.  A
launch whose argument types differ from the last one's (dtype, rank,
layout, aliasing, a weak int for a weak float) must still get its own
specialisation, and a bad argument after many good launches the same
error as on the first launch."""
import numpy as np
import pytest

import asc

# Five kernels: kernel indices 0 and 4 share a memo slot (index % 4).
TEXT = '''
@asc.kernel
def scale(a, b):
    for i in range(a.shape[0]):
        b[i] = a[i] / 3

@asc.kernel
def twice(x):
    return x * 2

@asc.kernel
def unused2(a):
    a[0] = 2

@asc.kernel
def unused3(a):
    a[0] = 3

@asc.kernel
def add1(a, b):
    for i in range(a.shape[0]):
        b[i] = a[i] + 1
'''


@pytest.fixture(scope="module")
def mod():
    return asc.compile(TEXT, filename="fast_dispatch.py")


def call_error(fn, *args):
    with pytest.raises(Exception) as info:
        fn(*args)
    return type(info.value), str(info.value)


def test_dtype_change_respecialises(mod):
    a32 = np.arange(10, dtype=np.float32)
    a64 = np.arange(10, dtype=np.float64)
    for _ in range(3):
        b32 = np.zeros(10, np.float32)
        mod.scale(a32, b32)
        np.testing.assert_array_equal(b32, a32 / np.float32(3))
        b64 = np.zeros(10, np.float64)
        mod.scale(a64, b64)
        # float64 division: not the float32 result widened
        np.testing.assert_array_equal(b64, a64 / 3)
        assert not np.array_equal(b64, (a32 / np.float32(3)).astype(np.float64))


def test_strided_then_contiguous(mod):
    base = np.arange(20, dtype=np.float64)
    for _ in range(2):
        out = np.zeros(10)
        mod.scale(base[::2], out)               # strided input
        np.testing.assert_array_equal(out, base[::2] / 3)
        out = np.zeros(20)[::2]                 # strided output
        mod.scale(base[:10], out)
        np.testing.assert_array_equal(out, base[:10] / 3)
        out = np.zeros(10)
        mod.scale(base[:10], out)               # contiguous again
        np.testing.assert_array_equal(out, base[:10] / 3)


def test_aliased_after_distinct(mod):
    a = np.arange(8, dtype=np.float64)
    b = np.zeros(8)
    mod.scale(a, b)
    mod.scale(a, b)
    np.testing.assert_array_equal(b, a / 3)
    # the same array as input and output: the aliased specialisation
    c = np.arange(8, dtype=np.float64)
    mod.scale(c, c)
    np.testing.assert_array_equal(c, np.arange(8) / 3)
    # overlapping views, shifted by one: b[i] = a[i] / 3 in order
    d = np.arange(9, dtype=np.float64)
    mod.scale(d[1:], d[:-1])
    np.testing.assert_array_equal(d[:-1], np.arange(1, 9) / 3)
    mod.scale(a, b)
    np.testing.assert_array_equal(b, a / 3)


def test_weak_int_then_float(mod):
    for _ in range(3):
        r = mod.twice(7)
        assert r == 14 and isinstance(r, np.int64)
        r = mod.twice(7.5)
        assert r == 15.0 and isinstance(r, np.float64)


def test_shared_memo_slot(mod):
    """Kernels 0 and 4 of the module take turns in one memo slot."""
    a32 = np.arange(6, dtype=np.float32)
    a64 = np.arange(6, dtype=np.float64)
    for _ in range(3):
        b = np.zeros(6, np.float32)
        mod.scale(a32, b)
        np.testing.assert_array_equal(b, a32 / np.float32(3))
        b = np.zeros(6, np.float32)
        mod.add1(a32, b)
        np.testing.assert_array_equal(b, a32 + 1)
        b = np.zeros(6)
        mod.add1(a64, b)
        np.testing.assert_array_equal(b, a64 + 1)


def test_bad_arguments_after_hits(mod):
    """The same errors as a launch that never hit the memo."""
    fresh = asc.compile(TEXT, filename="fast_dispatch.py")
    a = np.arange(4, dtype=np.float64)
    bad = [
        (a, "not an array"),
        (a,),
        (a, np.zeros(4), np.zeros(4)),
        (np.zeros((2, 2)), np.zeros(2)),
        (np.arange(4, dtype=np.complex64), np.zeros(4)),
        ([1.0, 2.0], np.zeros(4)),
    ]
    first = [call_error(fresh.scale, *args) for args in bad]
    for _ in range(5):
        mod.scale(a, np.zeros(4))
    after = [call_error(mod.scale, *args) for args in bad]
    assert after == first
    # and the good launch still works after the errors
    b = np.zeros(4)
    mod.scale(a, b)
    np.testing.assert_array_equal(b, a / 3)
