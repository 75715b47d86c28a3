# expect: 9:16: error: '.real' of an array (Tensor[complex128, 1]) is not supported in kernels yet; np.real(a) gives it as a new array
# mode: types
# signature: k(c128[1], f64[1])
import asc

@asc.kernel
def k(z, out):
    w = z * 2
    out[:] = w.real
