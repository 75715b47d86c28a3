"""Hostile and malformed arguments: every one is a Python exception, never
a crash (uses the runtime's hand-written test module, see test_launch.py)."""
import numpy as np
import pytest

import asc
from test_launch import MODULE


@pytest.fixture(scope="module")
def tk():
    return asc.load_module(MODULE)


class Iface:
    def __init__(self, d):
        self.__array_interface__ = d


class BadIface:
    @property
    def __array_interface__(self):
        raise RuntimeError("boom")


class BadDLPack:
    def __init__(self, ret):
        self.ret = ret

    def __dlpack__(self, **kw):
        if isinstance(self.ret, Exception):
            raise self.ret
        return self.ret


GOOD = np.zeros(4, np.float32)

BAD_TENSORS = [
    None, 1, 2.5, "abc", b"abcd", bytearray(16), [1.0, 2.0], (1.0,), object(),
    np.zeros(4, np.clongdouble), np.zeros(4, object), np.zeros(4, "U3"),
    np.zeros(4, ">f4"), np.zeros((4,), [("a", "<f4"), ("b", "<i4")]),
    np.zeros(4, np.float64), np.zeros((2, 2), np.float32), np.float32(1),
    Iface(None), Iface({}), Iface({"shape": (4,), "typestr": "<f4"}),
    Iface({"shape": (4,), "typestr": "<f4", "data": None}),
    Iface({"shape": (4,), "typestr": "<f4", "data": ("x", False)}),
    Iface({"shape": (-4,), "typestr": "<f4", "data": (GOOD.ctypes.data, False)}),
    Iface({"shape": (4,), "typestr": "<f4", "data": (0, False)}),
    Iface({"shape": (4,), "typestr": "<f4", "data": (GOOD.ctypes.data, False), "strides": (3,)}),
    Iface({"shape": (4,), "typestr": "<f4", "data": (GOOD.ctypes.data, False), "strides": (4, 4)}),
    Iface({"shape": (4,), "typestr": "zz", "data": (GOOD.ctypes.data, False)}),
    Iface({"shape": (4,), "typestr": "<c32", "data": (GOOD.ctypes.data, False)}),
    Iface({"shape": (1,) * 9, "typestr": "<f4", "data": (GOOD.ctypes.data, False)}),
    Iface({"shape": ("a",), "typestr": "<f4", "data": (GOOD.ctypes.data, False)}),
    Iface({"shape": (2**70,), "typestr": "<f4", "data": (GOOD.ctypes.data, False)}),
    Iface([1, 2, 3]), BadIface(),
    BadDLPack(None), BadDLPack(3), BadDLPack(ValueError("no")),
    BadDLPack(np.zeros(3)),
]


@pytest.mark.parametrize("bad", BAD_TENSORS, ids=lambda b: type(b).__name__)
def test_bad_tensor_arguments_raise(tk, bad):
    with pytest.raises((TypeError, ValueError, OverflowError, RuntimeError)) as info:
        tk.vadd(bad, GOOD, GOOD)
    if isinstance(info.value, (TypeError, ValueError)) and not isinstance(bad, (BadIface, BadDLPack)):
        assert "'vadd'" in str(info.value) and "'a'" in str(info.value)


BAD_SCALARS = [None, "1", 1j, [1], np.zeros(2), object(), 2**64, -2**63 - 1, 1.5,
               np.float64(2.5), np.complex64(1)]


HUGE = [
    # shape x itemsize overflows (UBSan, then an out-of-bounds kernel)
    ({"shape": (2**63 - 1,)}, "spans more bytes"),
    ({"shape": (2**62,)}, "spans more bytes"),
    # shape x stride overflows
    ({"shape": (4,), "strides": (2**62,)}, "spans more bytes"),
    ({"shape": (4,), "strides": (2**62 - 4,)}, "spans more bytes"),
    ({"shape": (4,), "strides": (-2**63 + 4,)}, "spans more bytes"),
    # the contiguous strides of the binding itself overflow
    ({"shape": (2**32, 2**32, 2)}, "more elements in all"),
]


@pytest.mark.parametrize("extra,why", HUGE)
def test_sizes_that_overflow_raise(tk, extra, why):
    d = {"typestr": "<f4", "data": (GOOD.ctypes.data, False)}
    d.update(extra)
    with pytest.raises(ValueError) as info:
        tk.vadd(Iface(d), GOOD, GOOD)
    msg = str(info.value)
    assert why in msg and "'vadd'" in msg and "'a'" in msg, msg


@pytest.mark.parametrize("bad", BAD_SCALARS, ids=lambda b: type(b).__name__)
def test_bad_scalar_arguments_raise(tk, bad):
    x = np.zeros(4, np.int64)
    with pytest.raises((TypeError, OverflowError)) as info:
        tk.affine(x, bad, 0)
    assert "'mul'" in str(info.value)


def test_weird_calls(tk):
    with pytest.raises(TypeError):
        tk.vadd(*([GOOD] * 100))
    with pytest.raises(TypeError):
        tk.vadd(GOOD, GOOD, c=GOOD, d=GOOD)
    with pytest.raises(TypeError):
        tk.vadd(GOOD, GOOD, GOOD, a=GOOD)
    with pytest.raises(TypeError):
        tk.vadd(**{"a": GOOD, "b": GOOD, "c": GOOD, "\udcff": 1})
    with pytest.raises(TypeError):
        tk.empty(1)
    tk.empty()


def test_empty_and_zero_sized_arrays(tk):
    z = np.zeros(0, np.float32)
    tk.vadd(z, z, z)
    tk.vadd(asc.zeros(0, asc.float32), z, z)


def test_bad_module_arguments():
    for bad in (None, 3, b"x"):
        with pytest.raises(TypeError):
            asc._asc.Module(bad)
    with pytest.raises(ValueError):
        asc._asc.Module("x\0y")
    with pytest.raises(TypeError):
        asc._asc.Module("x", globals={1: 2})
    with pytest.raises(TypeError):
        asc._asc.Module("x", globals={"A": "str"})
    with pytest.raises(OverflowError):
        asc._asc.Module("x", globals={"A": 2**64})
    with pytest.raises(ValueError):
        asc._asc.Module("x", opt_level=7)
    with pytest.raises(TypeError):
        asc._asc.Module("x", globals=[1])
    with pytest.raises(asc.Error):
        asc._asc.Module("/nonexistent.so", compiled=True)


def test_an_array_for_a_number_parameter_names_the_line():
    """An unannotated parameter that the kernel only reads as a number is
    a scalar; an array passed for it gets an error naming the line that
    uses it (docs/arrays.md, "Parameters that are arrays, or numbers")."""
    mod = asc.compile(
        "import asc\n"
        "@asc.kernel\n"
        "def k(out, s):\n"
        "    for i in range(out.shape[0]):\n"
        "        out[i] = s + 1.0\n"
    )
    out = np.zeros(3)
    mod.k(out, 2.0)
    assert out[0] == 3.0
    # the argument's type wins (docs/arrays.md, "Parameters typed by what
    # is passed"): the kernel compiled for the array fails at line 5
    with pytest.raises(asc.CompileError, match=r"(?s)<string>:5:.*compiled "
                       r"for the array passed for 's'.*annotate it"):
        mod.k(out, np.ones(3))
    annotated = asc.compile(
        "import asc\n"
        "@asc.kernel\n"
        "def k(out, s: float):\n"
        "    for i in range(out.shape[0]):\n"
        "        out[i] = s + 1.0\n"
    )
    with pytest.raises(TypeError, match=r"parameter 's'.*expected a scalar"):
        annotated.k(out, np.ones(3))


def test_a_variable_only_annotated_is_an_error_where_it_is_read():
    """`s: asc.float32` declares s and binds nothing: reading it is an
    error at the read, where Python raises UnboundLocalError (it was an
    internal compiler error).  Assigned later, it is an ordinary local."""
    mod = asc.compile(
        "import asc\n"
        "@asc.kernel\n"
        "def k(a, b):\n"
        "    s: asc.float32\n"
        "    b[0] = s * 2.0 + a[0]\n"
        "@asc.kernel\n"
        "def ok(a, b):\n"
        "    s: asc.float32\n"
        "    s = a[0]\n"
        "    b[0] = s * 2.0\n"
    )
    with pytest.raises(asc.CompileError,
                       match=r":5:12: error: 's' is read but never assigned"):
        mod.k(np.ones(1, np.float32), np.zeros(1, np.float32))
    b = np.zeros(1, np.float32)
    mod.ok(np.full(1, 3.0, np.float32), b)
    assert b[0] == 6.0
