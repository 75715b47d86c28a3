import asc


# The naive transpose: the store walks b's rows with a stride, the load
# walks a's rows with unit stride; the tile pass runs it in T x T tiles.
@asc.kernel
def transpose(a, b):
    n, m = a.shape
    for i in range(n):
        for j in range(m):
            b[j, i] = a[i, j]


@asc.kernel
def transpose_p(a, b):
    n, m = a.shape
    for i in asc.prange(n):
        for j in range(m):
            b[j, i] = a[i, j]


# Refused: b[j, i] reads b[j + 1, i - 1], written by iteration (i - 1, j + 1),
# which a tile would run after (i, j).
@asc.kernel
def transpose_dep(a, b):
    n, m = a.shape
    for i in asc.prange(1, n):
        for j in range(m - 1):
            b[j, i] = a[i, j] + b[j + 1, i - 1]


# Refused: a[i, j] = a[i - 1, j + 1] + 1 (no crossing access, and a
# dependence of distance (1, -1)).
@asc.kernel
def skew(a):
    n, m = a.shape
    for i in range(1, n):
        for j in range(m - 1):
            a[i, j] = a[i - 1, j + 1] + 1


# Refused: the integer division may raise ZeroDivisionError, which must
# come from the first (i, j) in Python's order.
@asc.kernel
def transpose_div(a, b, d):
    n, m = a.shape
    for i in asc.prange(n):
        for j in range(m):
            b[j, i] = a[i, j] // d
