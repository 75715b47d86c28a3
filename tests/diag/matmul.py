# mode: types
# signature: k(f32[:,:], f32[:,:], f32[:,:], i64)
# expect: 11:15: error: the matrix multiplication operator '@' is not supported in kernels yet (write the loop nest: s += a[i, k] * b[k, j])
# expect: 12:5: error: the matrix multiplication operator '@' is not supported in kernels yet
# expect: 13:15: error: cannot store an array (Tensor[float32, 2]) into one element of Tensor[float32, 2, strided]
import asc


@asc.kernel
def k(a, b, c, n):
    c[0, 0] = a @ b
    n @= n
    c[1, 1] = a + b
