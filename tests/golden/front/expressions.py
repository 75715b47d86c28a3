import asc
import math

@asc.kernel
def expressions(x, n):
    a = 1 + 2 * 3 - 4 / 5 // 6 % 7
    b = -a ** 2
    c = 2 ** -1 ** 2
    d = (1 + 2) * 3
    e = not a and b or c
    f = a < b <= c != d
    g = a if b else c if d else e
    h = a | b ^ c & d << 1 >> 2
    i = ~a + +b - -c
    j = a is None
    k = a is not None
    l = x[n - 1, -1] + x[a][b]
    m = math.sqrt(float(a)) + asc.exp(b) + min(a, b, c) + max(a, b) + abs(c)
    o = asc.float32(a) + asc.int64(b) + int(c) + bool(d)
    p = math.pi + math.inf * 0 + asc.e
    q = x.shape[0] + x.ndim + len(x.shape)
    r = math.atan2(a, b) + math.pow(a, 2) + math.fmod(a, 3) + math.hypot(a, b)
    s = asc.isnan(a) or math.isinf(b) or math.isfinite(c)
    t = math.copysign(a, b) + math.erf(a) + math.erfc(b) + math.log1p(a)
    u = (a, b, c)
    v = ()
    w = (a,)
    y = True and False or None is None
    z = 1 < 2 < 3 < 4
    return a
