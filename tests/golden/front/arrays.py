import numpy as np
import asc


# a = b + c * d as a whole-array statement: one loop, no temporary
@asc.kernel
def fused(a, b, c, d):
    a[:] = b + c * d


# a slice stencil: one 2-D nest over the interior
@asc.kernel
def stencil(A, B):
    B[1:-1, 1:-1] = 0.25 * (A[1:-1, :-2] + A[1:-1, 2:] + A[:-2, 1:-1] +
                            A[2:, 1:-1])


# in place with a scalar, through a view
@asc.kernel
def scale_rows(a, alpha, i):
    a[i, ::2] *= alpha


# a reduction along an axis: the row loop, and inside it the sum over p
@asc.kernel
def row_sums(x, out):
    out[:] = x.sum(axis=1)


# iteration over the first axis: a range loop and a view per row
@asc.kernel
def row_norms(a, out):
    i = 0
    for row in a:
        out[i] = np.sqrt(np.sum(row * row))
        i += 1


# a new array read once, element by element: fused into its reader (no
# array is made; kept_array, below, keeps one)
@asc.kernel
def new_array(a, b, out):
    c = a + b * 2.0
    out[:] = c


# a new array read three times, each an exp: made once (allocated, filled
# by one pfor), then bound to the name
@asc.kernel
def kept_array(a, out):
    e = np.exp(a)
    out[:] = e * e + e
