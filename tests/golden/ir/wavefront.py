# Kernels for the wavefront pass's IR goldens (tests/golden/ir/wavefront_*).
import asc


@asc.kernel
def jacobi2d(A, B, T: int):
    n = A.shape[0]
    for t in range(T):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                B[i, j] = 0.2 * (A[i, j] + A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = 0.2 * (B[i, j] + B[i, j - 1] + B[i, j + 1] + B[i + 1, j] + B[i - 1, j])


@asc.kernel
def heat3d(A, B, T: int):
    n = A.shape[0]
    for t in range(T):
        for i in asc.prange(1, n - 1):
            for j in range(1, n - 1):
                for k in range(1, n - 1):
                    B[i, j, k] = 0.125 * (A[i + 1, j, k] - 2.0 * A[i, j, k] + A[i - 1, j, k]) + A[i, j, k + 1]
        for i in asc.prange(1, n - 1):
            for j in range(1, n - 1):
                for k in range(1, n - 1):
                    A[i, j, k] = 0.125 * (B[i + 1, j, k] - 2.0 * B[i, j, k] + B[i - 1, j, k]) + B[i, j - 1, k]


# A sweep and a copy back, radius 2, a row sum carried along j (per row).
@asc.kernel
def smooth_copy(A, B, T: int):
    n = A.shape[0]
    m = A.shape[1]
    for t in range(T):
        for i in range(2, n - 2):
            s = 0.0
            for j in range(m):
                s += A[i - 2, j] + A[i + 2, j]
                B[i, j] = 0.25 * s
        for i in range(2, n - 2):
            for j in range(m):
                A[i, j] = B[i, j]


# Refused: Gauss-Seidel, the sweep reads what it writes.
@asc.kernel
def seidel(A, T: int):
    n = A.shape[0]
    for t in range(T):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = A[i, j] * 0.5


# Refused: the time step is used.
@asc.kernel
def uses_t(A, B, T: int):
    n = A.shape[0]
    for t in range(T):
        for i in range(1, n - 1):
            for j in range(n):
                B[i, j] = A[i - 1, j] + t
        for i in range(1, n - 1):
            for j in range(n):
                A[i, j] = B[i + 1, j]


# Refused: a store into another row than the loop's.
@asc.kernel
def shifted_store(A, B, T: int):
    n = A.shape[0]
    for t in range(T):
        for i in range(1, n - 1):
            for j in range(n):
                B[i + 1, j] = A[i, j]
        for i in range(1, n - 1):
            for j in range(n):
                A[i, j] = B[i, j]


# Refused: the loops have different bounds.
@asc.kernel
def bounds_differ(A, B, T: int):
    n = A.shape[0]
    for t in range(T):
        for i in range(1, n - 1):
            for j in range(n):
                B[i, j] = A[i - 1, j] + A[i + 1, j]
        for i in range(2, n - 2):
            for j in range(n):
                A[i, j] = B[i, j]


# Refused: a column read at a run-time row (not i plus a constant).
@asc.kernel
def gathered_row(A, B, idx, T: int):
    n = A.shape[0]
    for t in range(T):
        for i in range(n):
            for j in range(n):
                B[i, j] = A[idx[i], j]
        for i in range(n):
            for j in range(n):
                A[i, j] = B[i, j]
