# Kernels for tests/c/test_e2e_dtypes.c: one generic kernel specialised for
# every dtype, fixed-width integer arithmetic, promotion of mixed and weak
# operands.
import asc


@asc.kernel
def affine(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i] * 2 + 1


@asc.kernel
def bools(x, z, y, n):
    for i in range(x.shape[0]):
        y[i] = (x[i] and not z[i]) or (z[i] and not x[i])
        n[i] = x[i] + z[i] * 2


@asc.kernel
def small_ops(x, out):
    for i in range(x.shape[0]):
        out[i, 0] = x[i] * x[i]
        out[i, 1] = -x[i]
        out[i, 2] = x[i] - 100
        out[i, 3] = x[i] + 100
        out[i, 4] = x[i] // 3
        out[i, 5] = x[i] % 3


@asc.kernel
def wrap_compare(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] + 1 > x[i]


@asc.kernel
def mixed(a, b, c):
    for i in range(a.shape[0]):
        c[i] = a[i] + b[i]


@asc.kernel
def scale(x, y, s):
    for i in range(x.shape[0]):
        y[i] = x[i] * s


@asc.kernel
def raw_scalars(y, a: asc.float16, b: asc.bfloat16, c: asc.int8,
                d: asc.uint16, e: asc.bool_, f: asc.float64, g: asc.uint64):
    y[0] = a
    y[1] = b
    y[2] = c
    y[3] = d
    y[4] = 1.0 if e else 0.0
    y[5] = f
    y[6] = g
