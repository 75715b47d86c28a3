# signature: helpers(f32[1], i64[1], f32[2:s])
import asc


@asc.func
def square(x):
    return x * x


@asc.func
def clamp(x, lo, hi) -> asc.float32:
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@asc.func
def twice(x):
    y = square(x)
    return y + y


@asc.func
def at(t: asc.Tensor[asc.float32, 2], i: asc.int64, j: asc.int64) -> asc.float32:
    return t[i, j]


@asc.kernel
def helpers(a, ids, m):
    a[0] = square(a[1]) + clamp(a[2], 0.0, 1.0)
    ids[0] = square(ids[1])
    ids[1] = square(3)
    a[3] = twice(a[4])
    a[5] = at(m, 0, 1) * 0.5
