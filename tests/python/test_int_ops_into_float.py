"""Integer //, % and ** of Python ints stored into float arrays (or meeting
a float) stay integer operations, as in Python and numpy: `1 // z` with
z == 0 raises ZeroDivisionError before the store converts (docs/types.md,
"Integer arithmetic where a float is wanted")."""
import numpy as np
import pytest

import asc

K = asc.compile("""
import asc

@asc.kernel
def ops(out, n: int):
    z = n
    out[0] = 1 // z
    out[1] = -7 % z
    out[2] = 2 ** abs(z)
    out[3] = (2 ** 60 + z) % 7
    out[4] = (2 ** 60 + z) // 3
    out[5] = 1 / z
    out[6] = -(z ** 3) // 2
    out[7] = out[7] * (9 // z)

@asc.kernel
def floordiv(out, n: int):
    z = n
    out[0] = 1 // z

@asc.kernel
def mod(out, n: int):
    z = n
    out[0] = 5 % z

@asc.kernel
def inner(out, n: int):
    z = n
    out[0] = out[0] + (3 // z) * 2.5

@asc.kernel
def power(out, n: int):
    z = n
    out[0] = 3 ** z

@asc.kernel
def fpower(out, n: int):
    z = n
    out[0] = 3.0 ** z

@asc.kernel
def local_zero(out):
    z = 0
    out[0] = 7 // z
""")


def _python(n, first):
    z = n
    return [1 // z, -7 % z, 2 ** abs(z), (2 ** 60 + z) % 7, (2 ** 60 + z) // 3,
            1 / z, -(z ** 3) // 2, first * (9 // z)]


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("n", [3, -4, 7, 1])
def test_int_operations_stored_into_floats(dt, n):
    out = np.full(8, 1.5, dt)
    K.ops(out, n)
    want = np.array(_python(n, dt(1.5)), dt)  # numpy converts on the store
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("kernel,msg", [
    ("floordiv", "integer division or modulo by zero"),
    ("mod", "integer division or modulo by zero"),
    ("inner", "integer division or modulo by zero"),
])
@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_zero_divisor_raises(kernel, msg, dt):
    with pytest.raises(ZeroDivisionError):
        exec("z = 0\n1 // z")  # Python: before any store
    out = np.zeros(1, dt)
    with pytest.raises(ZeroDivisionError, match=msg):
        getattr(K, kernel)(out, 0)
    assert out[0] == 0  # nothing stored


def test_zero_divisor_of_a_local():
    with pytest.raises(ZeroDivisionError):
        K.local_zero(np.zeros(1))


def test_power_of_ints_is_an_int_power():
    """int ** int stays int where a float is stored, as it does elsewhere in
    a kernel (docs/types.md): exact below 2**63; a negative exponent raises
    ValueError (numpy's rule; Python gives a float: write 3.0 ** z)."""
    out = np.zeros(1)
    K.power(out, 33)
    assert out[0] == float(3 ** 33)
    with pytest.raises(ValueError, match="negative exponent"):
        K.power(out, -2)
    K.fpower(out, -2)
    assert out[0] == 3.0 ** -2
