"""A parameter the kernel stores to needs writable memory (issue 13 item 4):
a read-only buffer there is a ValueError naming the parameter, before any
store; read-only inputs stay allowed."""
import textwrap

import numpy as np
import pytest

import asc

M = asc.compile(textwrap.dedent("""
    import asc

    @asc.func
    def put(dst, i, v):
        dst[i] = v

    @asc.kernel
    def copy(src, dst):
        for i in range(src.shape[0]):
            dst[i] = src[i]

    @asc.kernel
    def via_helper(src, dst):
        for i in range(src.shape[0]):
            put(dst, i, src[i])

    @asc.kernel
    def via_alias(src, dst):
        d = dst
        for i in range(dst.shape[0]):
            d[i] = src[i]

    @asc.kernel
    def via_atomic(src, dst):
        for i in range(src.shape[0]):
            asc.atomic_add(dst, 0, src[i])
"""))


def test_kernel_info_says_which_parameters_are_written():
    for name in ("copy", "via_helper", "via_alias", "via_atomic"):
        with pytest.raises(ValueError, match=f"kernel '{name}': parameter 'dst' is written"):
            M[name](np.ones(3, np.uint8), bytes(3))


def test_bytes_output_is_rejected_and_left_unchanged():
    out = b"\x00"  # CPython's shared one-byte bytes object
    with pytest.raises(ValueError, match="parameter 'dst' is written by the kernel.*read-only bytes"):
        M.copy(np.array([7], np.uint8), out)
    assert out == b"\x00" and bytes(1) == b"\x00"


def test_writeable_false_array_is_rejected():
    dst = np.zeros(4)
    dst.flags.writeable = False
    with pytest.raises(ValueError, match="parameter 'dst'"):
        M.copy(np.ones(4), dst)
    assert (dst == 0).all()


def test_broadcast_to_view_is_rejected():
    base = np.zeros(1)
    dst = np.broadcast_to(base, (4,))
    with pytest.raises(ValueError, match="parameter 'dst'"):
        M.copy(np.arange(4.0), dst)
    assert base[0] == 0


def test_read_only_array_interface_is_rejected():
    base = np.zeros(4)

    class Iface:
        __array_interface__ = dict(base.__array_interface__,
                                   data=(base.ctypes.data, True))

    with pytest.raises(ValueError, match="parameter 'dst'.*__array_interface__"):
        M.copy(np.ones(4), Iface())
    assert (base == 0).all()


def test_read_only_inputs_are_allowed():
    src = np.arange(4.0)
    src.flags.writeable = False
    dst = np.zeros(4)
    M.copy(src, dst)
    assert (dst == src).all()
    dst = np.zeros(4, np.uint8)
    M.copy(b"\x01\x02\x03\x04", dst)
    assert list(dst) == [1, 2, 3, 4]
    dst = np.zeros(4)
    M.via_helper(np.broadcast_to(np.array([5.0]), (4,)), dst)
    assert (dst == 5.0).all()


class OnlyDLPack:
    """An array seen only through DLPack (numpy's capsule: versioned when
    asked, with the read-only flag set for read-only arrays)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_read_only_dlpack_capsule():
    src = np.arange(4.0)
    dst = np.zeros(4)
    ro = np.zeros(4)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match=r"parameter 'dst' is written.*"
                       r"read-only.*DLPack"):
        M.copy(OnlyDLPack(src), OnlyDLPack(ro))
    assert not ro.any()
    src.flags.writeable = False          # read-only inputs are fine
    M.copy(OnlyDLPack(src), OnlyDLPack(dst))
    assert (dst == src).all()


def test_unversioned_dlpack_producer():
    class Old(OnlyDLPack):
        def __dlpack__(self, stream=None):   # no max_version keyword
            return self.a.__dlpack__()

    src, dst = np.arange(4.0), np.zeros(4)
    M.copy(Old(src), Old(dst))
    assert (dst == src).all()
