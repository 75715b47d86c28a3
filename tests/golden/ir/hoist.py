import asc


# w[i] is invariant in j and nothing stores to w: it leaves the j loop,
# behind a guard (a j loop that runs zero times reads nothing).
@asc.kernel
def rows(a, w, n: int):
    s = 0.0
    for i in range(n):
        for j in range(a.shape[1]):
            s += a[i, j] * w[i]
    return s


# sc[0] is invariant in both loops; the store goes to another tensor.
@asc.kernel
def scale(a, c, sc):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            c[i, j] = a[i, j] * sc[0]


# Refused: the store at j = 0 writes a[0].
@asc.kernel
def self_first(a, n: int):
    for j in range(n):
        a[j] = a[0] + 1


# Row i + 1 is written, row i read: the load leaves the j loop.
@asc.kernel
def next_row(a):
    for i in range(a.shape[0] - 1):
        for j in range(a.shape[1]):
            a[i + 1, j] = a[i, 0] * 0.5 + a[i + 1, j]


# Refused: the bounds check's raise comes first.
@asc.kernel(boundscheck=True)
def checked(a, out, k: int):
    for j in range(out.shape[0]):
        out[j] = a[k] * 2.0
