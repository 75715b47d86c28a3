import gc
import os
import weakref

import numpy as np
import pytest

import asc


def test_empty_zeros_shapes_and_dtypes():
    a = asc.empty((3, 4), asc.float32)
    assert isinstance(a, asc.Array)
    assert a.shape == (3, 4) and a.ndim == 2 and a.size == 12
    assert a.dtype is asc.float32 and a.itemsize == 4 and a.nbytes == 48
    assert a.strides == (16, 4)
    z = asc.zeros(5, asc.int64)
    assert z.shape == (5,) and (z.numpy() == 0).all()
    assert asc.zeros((), asc.float64).shape == ()
    assert asc.zeros((2, 0), asc.int8).size == 0
    assert asc.empty(7).dtype is asc.float32


def test_alignment():
    for n in (1, 3, 100, 10000):
        assert asc.empty(n, asc.uint8).ptr % 64 == 0


def test_numpy_views_share_memory():
    a = asc.zeros((4, 4), asc.float32)
    v = np.asarray(a)
    w = a.numpy()
    assert v.dtype == np.float32 and v.shape == (4, 4)
    v[1, 2] = 7.0
    assert w[1, 2] == 7.0 and a[1, 2] == 7.0
    assert np.shares_memory(v, w)
    assert v.ctypes.data == a.ptr
    a[0] = 1.0
    assert (v[0] == 1.0).all()
    m = memoryview(a)
    assert m.format == "f" and m.shape == (4, 4) and not m.readonly


def test_array_interface():
    a = asc.empty((2, 3), asc.int16)
    ai = a.__array_interface__
    assert ai["version"] == 3 and ai["shape"] == (2, 3)
    assert ai["typestr"] == "<i2" and ai["data"] == (a.ptr, False)


def test_views_keep_memory_alive():
    a = asc.zeros(1000, asc.float64)
    a[:] = 3.0
    ref = weakref.ref(a)
    v = a.numpy()
    m = memoryview(a)
    del a
    gc.collect()
    assert ref() is not None          # the views hold the array
    assert v.sum() == 3000.0
    del v
    gc.collect()
    assert ref() is not None          # the memoryview still does
    assert m[999] == 3.0
    m.release()
    del m
    gc.collect()
    assert ref() is None              # and nothing else does


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_array_freed_when_unreferenced():
    # this process's resident memory, not the machine's free memory (which
    # other processes move): each 1 MiB array is written, so a leak of the
    # 50 would add 50 MiB; freed, each reuses the one before
    def one():
        a = asc.empty(1 << 20, asc.uint8)
        a.numpy().fill(1)
    one()
    gc.collect()
    r0 = _rss()
    for _ in range(50):
        one()
    gc.collect()
    assert _rss() - r0 < (16 << 20)


def test_asarray():
    src = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = asc.asarray(src)
    assert a.dtype is asc.float32 and a.shape == (3, 4)
    assert (a.numpy() == src).all()
    assert not np.shares_memory(a.numpy(), src)
    assert asc.asarray(a) is a
    b = asc.asarray(a, asc.float64)
    assert b.dtype is asc.float64 and (b.numpy() == src).all()
    c = asc.asarray([[1, 2], [3, 4]], asc.int32)
    assert c.numpy().tolist() == [[1, 2], [3, 4]]
    d = asc.asarray([1.5, 2.5])
    assert d.dtype is asc.float64
    e = asc.asarray(np.arange(4, dtype=np.float16)[::2])
    assert e.dtype is asc.float16 and e.tolist() == [0.0, 2.0]
    with pytest.raises(TypeError):
        asc.asarray(np.zeros(2, np.clongdouble))


def test_float16_and_bool_arrays():
    h = asc.zeros(3, asc.float16)
    assert memoryview(h).format == "e"
    assert h.numpy().dtype == np.float16
    b = asc.zeros(3, asc.bool_)
    assert b.numpy().dtype == np.bool_


def test_bfloat16_arrays():
    a = asc.asarray(np.array([1.0, 2.5, -3.0], np.float32), asc.bfloat16)
    assert a.dtype is asc.bfloat16 and a.itemsize == 2
    bits = np.asarray(a).view(np.uint16)
    assert bits.tolist() == [0x3F80, 0x4020, 0xC040]
    assert asc.from_bfloat16_bits(bits).tolist() == [1.0, 2.5, -3.0]
    assert asc.as_dtype(a.numpy().dtype) is asc.bfloat16


def test_bad_shapes():
    with pytest.raises(ValueError):
        asc.empty((-1, 2))
    with pytest.raises(ValueError):
        asc.empty((1,) * 9)
    with pytest.raises(TypeError):
        asc.empty((2.5,))
    with pytest.raises(TypeError):
        asc.empty("abc")
    with pytest.raises(TypeError):
        asc.empty(3, "complex256")
    with pytest.raises((ValueError, OverflowError)):
        asc.empty((2**40, 2**40))


def test_out_of_memory_is_a_memory_error():
    with pytest.raises(MemoryError) as info:
        asc.empty(1 << 50, asc.uint8)
    assert isinstance(info.value, asc.Error)


def test_repr_and_len():
    a = asc.zeros(3, asc.int32)
    assert "asc.Array" in repr(a) and "int32" in repr(a)
    assert len(a) == 3 and list(a) == [0, 0, 0]
    with pytest.raises(TypeError):
        len(asc.zeros((), asc.int32))
