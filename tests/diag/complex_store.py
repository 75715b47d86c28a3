# mode: types
# signature: k(c128[1], f64[1])
# expect: 11:12: error: cannot store a complex value (complex128) into an element of Tensor[float64, 1]: numpy would drop the imaginary part with a ComplexWarning; store z.real (or abs(z)) explicitly
# expect: 12:12: error: cannot store complex values (Tensor[complex128, 1]) into Tensor[float64, 1, strided]: numpy would drop the imaginary part with a ComplexWarning; store .real explicitly
# expect: 13:12: error: cannot convert a complex number (complex128) to float64: numpy would drop the imaginary part with a ComplexWarning; use z.real (or abs(z))
# expect: 14:12: error: unsupported operand types for //: complex128 and a Python int literal (complex numbers have no floor division or remainder, as in Python)
import asc

@asc.kernel
def k(z, x):
    x[0] = z[0] + 1j
    x[:] = z * 2
    x[0] = asc.float64(z[0])
    x[0] = z[0] // 2
