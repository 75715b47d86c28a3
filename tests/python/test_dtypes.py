import pickle

import numpy as np
import pytest

import asc

ALL = [("bool_", "bool", 1, np.bool_), ("int8", "int8", 1, np.int8),
       ("int16", "int16", 2, np.int16), ("int32", "int32", 4, np.int32),
       ("int64", "int64", 8, np.int64), ("uint8", "uint8", 1, np.uint8),
       ("uint16", "uint16", 2, np.uint16), ("uint32", "uint32", 4, np.uint32),
       ("uint64", "uint64", 8, np.uint64), ("float16", "float16", 2, np.float16),
       ("float32", "float32", 4, np.float32), ("float64", "float64", 8, np.float64),
       ("complex64", "complex64", 8, np.complex64),
       ("complex128", "complex128", 16, np.complex128)]


@pytest.mark.parametrize("attr,name,size,nptype", ALL)
def test_dtype_objects_are_numpy_dtype_like(attr, name, size, nptype):
    d = getattr(asc, attr)
    assert d.name == name and str(d) == name
    assert d.itemsize == size
    assert np.dtype(d) == np.dtype(nptype)
    assert d.dtype == np.dtype(nptype)
    assert np.zeros(3, d).dtype == np.dtype(nptype)
    assert asc.as_dtype(nptype) is d
    assert asc.as_dtype(np.dtype(nptype)) is d
    assert asc.as_dtype(name) is d
    assert d == nptype and d == name
    assert repr(d) == "asc." + attr
    assert pickle.loads(pickle.dumps(d)) is d


def test_python_types_map_to_64_bit():
    assert asc.as_dtype(float) is asc.float64
    assert asc.as_dtype(int) is asc.int64
    assert asc.as_dtype(bool) is asc.bool_


def test_casts_outside_kernels_give_typed_numpy_scalars():
    x = asc.float32(1.5)
    assert type(x) is np.float32 and x == 1.5
    assert type(asc.int8(-3)) is np.int8
    assert type(asc.float16(0.5)) is np.float16


def test_unsupported_dtypes_are_rejected():
    for bad in (np.clongdouble, "float128", object, np.dtype(">f4"), "nope"):
        with pytest.raises(TypeError):
            asc.as_dtype(bad)


def test_bfloat16_view_of_uint16_bits():
    bits = asc.to_bfloat16_bits(np.array([1.0, -2.5, 3.140625], np.float32))
    assert bits.dtype == np.uint16
    assert list(bits) == [0x3F80, 0xC020, 0x4049]
    v = bits.view(asc.bfloat16)
    assert asc.as_dtype(v.dtype) is asc.bfloat16
    back = asc.from_bfloat16_bits(v)
    assert back.dtype == np.float32
    assert list(back) == [1.0, -2.5, 3.140625]


def test_bfloat16_rounds_to_nearest_even():
    # 1 + 2^-8 lies halfway between two bfloat16 values: ties to even (1.0)
    bits = asc.to_bfloat16_bits(np.array([1 + 2**-8, 1 + 3 * 2**-8, np.nan], np.float32))
    assert bits[0] == 0x3F80 and bits[1] == 0x3F82 and bits[2] == 0x7FC0


def test_bfloat16_with_ml_dtypes():
    ml = pytest.importorskip("ml_dtypes")
    assert np.dtype(asc.bfloat16) == np.dtype(ml.bfloat16)
    assert asc.as_dtype(ml.bfloat16) is asc.bfloat16
    assert float(asc.bfloat16(1.5)) == 1.5


def test_scalar_descriptors_weak_and_typed():
    d = asc._asc.scalar_descriptor
    assert d(True) == ("bool", 1, 1)
    assert d(3) == ("int64", 1, 3)
    assert d(-2**63) == ("int64", 1, -2**63)
    assert d(2.5) == ("float64", 1, 2.5)
    assert d(np.float32(2.5)) == ("float32", 0, 2.5)
    assert d(np.float64(2.5)) == ("float64", 0, 2.5)
    assert d(np.int8(-4)) == ("int8", 0, -4)
    assert d(np.uint64(2**64 - 1)) == ("uint64", 0, 2**64 - 1)
    assert d(np.bool_(True)) == ("bool", 0, 1)
    assert d(np.float16(0.5)) == ("float16", 0, 0.5)
    assert d(np.array(7, np.int16)) == ("int16", 0, 7)


def test_scalar_descriptor_errors():
    d = asc._asc.scalar_descriptor
    with pytest.raises(OverflowError):
        d(2**63)
    with pytest.raises(TypeError):
        d("3")
    with pytest.raises(TypeError):
        d(1j)
    with pytest.raises(TypeError, match="scalar"):
        d(np.zeros(3))
    with pytest.raises(TypeError):
        d(None)
