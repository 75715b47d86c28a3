# Kernels of examples/mpi/jacobi2d.c, compiled by libasc from this text.
import asc


@asc.kernel
def sweep(u, unew, rowmax, lo, hi):
    # One Jacobi sweep over local rows lo..hi-1; rowmax[i] = the largest
    # change in row i.  The same expression, in the same order, for every
    # element: the result does not depend on how rows are split.
    ny = u.shape[1]
    for k in asc.prange(hi - lo):
        i = lo + k
        m = 0.0
        for j in range(1, ny - 1):
            v = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
            d = v - u[i, j]
            if d < 0.0:
                d = -d
            if d > m:
                m = d
            unew[i, j] = v
        rowmax[i] = m


@asc.kernel
def maxof(rowmax, out):
    # out[0] = the largest rowmax of the owned rows (1 .. n-2).
    m = 0.0
    for i in range(1, rowmax.shape[0] - 1):
        if rowmax[i] > m:
            m = rowmax[i]
    out[0] = m
