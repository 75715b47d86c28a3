import asc


# indices that cannot be negative: no wrap-around code (range variables,
# i + c, shape-derived, a local assigned once from `x % 8`)
@asc.kernel
def nowrap(a, b):
    n = a.shape[0]
    for i in range(n):
        b[i] = a[i]
    for i in range(1, n):
        b[i] += a[i - 1]
    for i in range(n - 1, -1, -1):
        b[i] += a[i]
    for i in range(n // 2):
        j = i % 8
        b[2 * i + 1] += a[j]


# indices that may be negative wrap like numpy: a[i - 1] at i = 0 is a[n - 1]
@asc.kernel
def wrap(a, b, off: int):
    n = a.shape[0]
    for i in range(n):
        b[i] = a[i - 1] + a[off]
