# signature: builtins(f32[1], i32[1])
# signature: builtins(f64[1], i64[1])
import math

import asc


@asc.kernel
def builtins(x, k):
    v = x[0]
    i = k[0]
    s = asc.sin(v) + math.cos(v) + asc.exp(v) + math.sqrt(v) + asc.tanh(v)
    si = math.sin(i)
    sw = math.sqrt(2)
    lo = min(v, 1.0, x[1])
    hi = max(i, 0)
    a = abs(i)
    ab = abs(True)
    fl = math.floor(v)
    afl = asc.floor(v)
    ce = math.ceil(v)
    tr = asc.trunc(v)
    p1 = math.pow(v, 2)
    p2 = pow(i, 2)
    p3 = v ** 0.5
    at = math.atan2(v, 1.0)
    hy = math.hypot(i, i)
    nan = math.isnan(v)
    pi = math.pi * 2
    c1 = asc.float16(v)
    c2 = asc.int8(i)
    c3 = asc.bfloat16(i)
    c4 = asc.uint32(v)
    c5 = asc.bool_(i)
    f = float(i)
    n = int(v)
    b = bool(v)
    fmix = v * float(i)
    imix = i + int(v)
    x[0] = s + lo + afl + tr + p3 + at + pi + fmix
    k[0] = hi + a + p2 + imix
    k[1] = asc.int32(fl + ce)
