"""Names imported from numpy (`from numpy import sqrt, exp as e`) are
numpy's, as np.sqrt is: numpy's semantics, not math's (docs/arrays.md,
"numpy and math names")."""
import math

import numpy as np
import pytest
from numpy import sqrt, exp as e, pi, float32, roll, add, multiply, newaxis
from numpy import polyval

import asc


@asc.kernel
def numpy_math(a):
    return sqrt(a) + e(a) * pi


@asc.kernel
def numpy_scalar(x: float):
    # numpy's sqrt of a negative number is nan, where math.sqrt raises
    return sqrt(x)


@asc.kernel
def numpy_funcs(a):
    b = roll(a, 1).astype(float32)
    return add(b[:, newaxis], 1)


def test_imported_names_are_numpys():
    a = np.arange(5.0)
    np.testing.assert_allclose(numpy_math(a), np.sqrt(a) + np.exp(a) * np.pi,
                               rtol=1e-15)
    assert math.isnan(numpy_scalar(-1.0))
    assert numpy_scalar(4.0) == 2.0
    r = numpy_funcs(a)
    assert r.dtype == np.float32 and r.shape == (5, 1)
    np.testing.assert_array_equal(r, np.roll(a, 1).astype(np.float32)[:, None] + 1)


@asc.kernel
def ufunc_out(z, c):
    multiply(z, z, z)
    add(z, c, out=z)


def test_ufunc_statements_with_out():
    z, c = np.linspace(-1, 1, 7), np.full(7, 0.25)
    want = z * z + c
    ufunc_out(z, c)
    np.testing.assert_array_equal(z, want)


def test_a_local_shadows_an_imported_name():
    @asc.kernel
    def k(a):
        sqrt = a[0] * 2
        return sqrt
    assert k(np.array([3.0])) == 6.0


def test_a_name_kernels_do_not_accept_is_named():
    @asc.kernel
    def k(a):
        return polyval(a, 1.0)
    with pytest.raises(asc.CompileError,
                       match=r"numpy's polyval \('polyval', imported from "
                             r"numpy\) is not supported in kernels yet"):
        k(np.ones(2))


def test_compiled_text():
    m = asc.compile("import asc\nfrom numpy import sqrt as s\n"
                    "@asc.kernel\ndef k(x: float):\n    return s(x)\n")
    assert math.isnan(m.k(-4.0)) and m.k(9.0) == 3.0
