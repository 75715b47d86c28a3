import asc


# recognised: the naive i-j-p product, gemm_exact (each element in the
# loops' order), the loops behind a run-time test of c's overlap
@asc.kernel
def product(a, b, c):
    n, m = c.shape
    K = a.shape[1]
    for i in range(n):
        for j in range(m):
            s = 0.0
            for p in range(K):
                s += a[i, p] * b[p, j]
            c[i, j] = s


# recognised: under fastmath (reassoc) the runtime's BLAS first (flag 2)
@asc.kernel(fastmath=True)
def product_fast(a, b, c):
    n, m = c.shape
    K = a.shape[1]
    for i in asc.prange(n):
        for j in range(m):
            s = 0.0
            for p in range(K):
                s += a[i, p] * b[p, j]
            c[i, j] = s


# recognised: the sum in memory, loops i-p-j (flag 1: accumulate)
@asc.kernel
def accumulate(a, b, c):
    n, m = c.shape
    K = a.shape[1]
    for i in range(n):
        for p in range(K):
            for j in range(m):
                c[i, j] += a[i, p] * b[p, j]


# refused: c is also an operand (c[i, p] * b[p, j])
@asc.kernel
def aliased(c, b):
    n, m = c.shape
    for i in range(n):
        for j in range(m):
            s = 0.0
            for p in range(m):
                s += c[i, p] * b[p, j]
            c[i, j] = s


# refused: a second store in the nest
@asc.kernel
def extra_store(a, b, c, d):
    n, m = c.shape
    K = a.shape[1]
    for i in range(n):
        for j in range(m):
            s = 0.0
            for p in range(K):
                s += a[i, p] * b[p, j]
            c[i, j] = s
            d[i, j] = 1.0


# refused: the sum starts at 1.0
@asc.kernel
def nonzero_init(a, b, c):
    n, m = c.shape
    K = a.shape[1]
    for i in range(n):
        for j in range(m):
            s = 1.0
            for p in range(K):
                s += a[i, p] * b[p, j]
            c[i, j] = s


# refused: a dependence through c (each element adds its left neighbour)
@asc.kernel
def carried(a, b, c):
    n, m = c.shape
    K = a.shape[1]
    for i in range(n):
        for j in range(1, m):
            for p in range(K):
                c[i, j] = c[i, j - 1] + a[i, p] * b[p, j]
