# mode: types
# signature: k(f32[:,:], f32[:,:], f32[:,:], i64)
# expect: 11:15: error: cannot store an array (Tensor[float32, 2]) into one element of Tensor[float32, 2, strided]
# expect: 12:5: error: matrix products in kernels take arrays of 1 or more axes, not int64 and int64
# expect: 13:15: error: cannot store an array (Tensor[float32, 2]) into one element of Tensor[float32, 2, strided]
import asc


@asc.kernel
def k(a, b, c, n):
    c[0, 0] = a @ b
    n @= n
    c[1, 1] = a + b
