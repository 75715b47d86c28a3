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
def test_complex_scalar_argument_names_the_0d_array_form(z):
    put = asc.compile(SCALAR_SRC).put
    with pytest.raises(TypeError, match=r"complex scalar.*0-d array"):
        put(np.zeros(2), z)


def test_complex_in_kernels_is_a_diagnostic_at_its_line():
    # The kernel language has no complex arithmetic yet: a complex array
    # parameter and an imaginary literal are compile errors at their lines
    # (docs/arrays.md, "Complex numbers").
    mod = asc.compile(
        "import asc\n"
        "@asc.kernel\n"
        "def scale(z, out):\n"
        "    out[0] = z[0] * 2\n"
        "@asc.kernel\n"
        "def lit(x):\n"
        "    x[0] = 2.5j\n")
    with pytest.raises(asc.CompileError, match=r":3:11: error: parameter 'z' is complex128"):
        mod.scale(np.ones(2, np.complex128), np.zeros(2, np.complex128))
    with pytest.raises(asc.CompileError, match=r":7:12: error: complex numbers are not supported"):
        mod.lit(np.zeros(2))
