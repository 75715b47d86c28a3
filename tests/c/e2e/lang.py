# Kernels for tests/c/test_e2e_lang.c: every non-parallel construct of the
# kernel language, each checked against a reference written in C.
import asc
import math

TILE = 4
SCALE = 3
AREA = TILE * TILE


class Pt:
    x: asc.float64
    y: asc.float64 = 2.0


@asc.func
def sq(v):
    return v * v


@asc.func
def tri(n):
    s = 0
    for i in range(n + 1):
        s += i
    return s


@asc.func
def clamp(v, lo, hi):
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


@asc.func
def norm2(p):
    return p.x * p.x + p.y * p.y


@asc.func
def checked_div(a, b):
    if b == 0:
        raise ValueError("b is zero")
    return a // b


@asc.kernel
def k_assign(x, out):
    r, c = x.shape
    out[0] = r
    out[1] = c
    out[2] = x.ndim
    a = b = 7
    out[3] = a + b
    p, q = 3, 4
    out[4] = p * 10 + q
    out[5] = x.size
    out[6] = len(x)
    out[7] = x[1, 2]
    out[8] = x[-1, -1]
    out[9] = x[r - 1, 0]
    s = x.shape
    out[10] = s[0] * 100 + s[1]
    out[11] = len(x.shape)


@asc.kernel
def k_aug(out, fo, n):
    a = n
    a += 3
    out[0] = a
    a -= 10
    out[1] = a
    a *= -7
    out[2] = a
    a //= 4
    out[3] = a
    a %= -5
    out[4] = a
    a **= 3
    out[5] = a
    a <<= 2
    out[6] = a
    a >>= 1
    out[7] = a
    a &= 0xff
    out[8] = a
    a |= 0x100
    out[9] = a
    a ^= 0x5
    out[10] = a
    out[11] = 5
    out[11] += n
    out[11] *= 2
    f = 1.5
    f *= n
    f /= 4
    f -= 0.25
    fo[0] = f
    f //= 0.5
    fo[1] = f
    f %= 0.75
    fo[2] = f
    f **= 2
    fo[3] = f


@asc.kernel
def k_branch(x, out):
    for i in range(x.shape[0]):
        v = x[i]
        if v < 0:
            out[i] = -1
        elif v == 0:
            out[i] = 0
        elif v < 10:
            out[i] = 1
        else:
            out[i] = 2


@asc.kernel
def k_ranges(out, a, b, s):
    c = 0
    t = 0
    for i in range(b):
        c += 1
        t += i
    out[0] = c
    out[1] = t
    c = 0
    t = 0
    for i in range(a, b):
        c += 1
        t += i * 3
    out[2] = c
    out[3] = t
    c = 0
    t = 0
    for i in range(a, b, s):
        c += 1
        t = t * 7 + i
    out[4] = c
    out[5] = t
    c = 0
    t = 0
    for i in range(b, a, -s):
        c += 1
        t = t * 7 + i
    out[6] = c
    out[7] = t
    c = 0
    t = 0
    for i in range(b, a, -1):
        c += 1
        t = t * 5 + i
    out[8] = c
    out[9] = t
    c = 0
    t = 0
    for i in range(10, 0, -3):
        t = t * 3 + i
        c += 1
    out[10] = c
    out[11] = t
    j = -1
    for j in range(a, b):
        pass
    out[12] = j


@asc.kernel
def k_loops(out, n):
    i = 0
    t = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        if i > 20:
            break
        t += i
    out[0] = i
    out[1] = t
    k = 0
    while True:
        k += 1
        if k * k > n:
            break
    out[2] = k
    c = 0
    for a in range(n):
        for b in range(n):
            if b > a:
                break
            if (a + b) % 2 == 1:
                continue
            c += 1
    out[3] = c
    found = -1
    for a in range(n):
        if a * a == 49:
            found = a
            break
    out[4] = found


@asc.kernel
def k_early(x, out):
    out[0] = 1
    if x[0] > 0:
        return
    pass
    out[0] = 2
    for i in range(10):
        out[1] = i
        if i == x[1]:
            return
    out[2] = 99


@asc.kernel
def k_exc(out, mode):
    try:
        if mode == 0:
            raise ValueError("v")
        elif mode == 1:
            raise IndexError("i")
        elif mode == 2:
            raise ZeroDivisionError("z")
        elif mode == 3:
            raise RuntimeError("r")
        elif mode == 4:
            out[11] = 10 // (mode - 4)
        out[0] = 10
    except ValueError:
        out[0] = 1
    except (IndexError, ZeroDivisionError):
        out[0] = 2
    except:
        out[0] = 3
    k = 1
    try:
        try:
            out[k] = 100
            k += 1
            if mode == 0:
                raise ValueError("x")
            if mode == 1:
                raise IndexError("y")
            out[k] = 101
            k += 1
        except ValueError:
            out[k] = 102
            k += 1
        finally:
            out[k] = 103
            k += 1
        out[k] = 104
        k += 1
    except IndexError:
        out[k] = 105
        k += 1
    out[k] = 106
    try:
        if mode == 5:
            raise ValueError("e")
    except ValueError:
        out[10] = 1
    else:
        out[10] = 2


@asc.kernel
def k_fin(out, mode):
    for i in range(4):
        try:
            if i == 1:
                continue
            if i == 3 and mode == 1:
                break
            out[i] = i * 10
        finally:
            out[4 + i] = 1
    try:
        out[8] = 1
        if mode == 1:
            return
        out[9] = 1
    finally:
        out[10] = 1
    out[11] = 1


@asc.kernel
def k_helper_exc(out, b):
    try:
        out[0] = checked_div(7, b)
    except ValueError:
        out[0] = -100
    try:
        out[1] = 7 // b
    except ArithmeticError:
        out[1] = -200
    try:
        out[2] = 7 % b
    except ZeroDivisionError:
        out[2] = -300


@asc.kernel
def k_zdiv(out, b):
    out[0] = 1
    out[1] = 7 // b
    out[2] = 3


@asc.kernel
def k_raise(out, n):
    out[0] = n
    if n > 2:
        raise ValueError("n is too big")
    out[1] = n


@asc.kernel
def k_assert(out, n):
    assert n >= 0
    assert n < 100, "n too large"
    out[0] = n


@asc.kernel
def k_helpers(x, out):
    for i in range(x.shape[0]):
        out[i] = sq(x[i]) + tri(i) + clamp(x[i], -2, 3) * 1000


@asc.kernel
def k_struct(out):
    p = Pt(1.5)
    q = Pt(3.0, -4.0)
    p.x += 1.0
    out[0] = p.x
    out[1] = p.y
    out[2] = norm2(q)
    out[3] = p.x * q.y


@asc.kernel
def k_logic(out, a, b):
    out[0] = 1 if b != 0 and a // b > 2 else 0
    out[1] = 1 if b == 0 or a // b > 2 else 0
    out[2] = 0 if b == 0 else a // b
    out[3] = 1 if not (a < b) else 0
    out[4] = 1 if 0 <= a < b <= 10 else 0
    out[5] = 1 if a < b > 0 else 0
    out[6] = a and b
    out[7] = a or b
    out[8] = 1 if (a > 0) != (b > 0) else 0
    out[9] = True + True
    out[10] = (a == b) + (a != b) * 2
    out[11] = 1 if not a else 0


@asc.kernel
def k_minmax(out, fo, a, b, x, y):
    out[0] = min(a, b)
    out[1] = max(a, b)
    out[2] = min(a, b, -3)
    out[3] = max(a, 2, b)
    out[4] = abs(a)
    fo[0] = min(x, y)
    fo[1] = max(x, y)
    fo[2] = abs(x)
    fo[3] = min(x, a)
    fo[4] = max(y, b)


@asc.kernel
def k_math(x, y):
    for i in range(x.shape[0]):
        v = x[i]
        y[i, 0] = math.sin(v)
        y[i, 1] = math.cos(v)
        y[i, 2] = math.tan(v)
        y[i, 3] = math.exp(v)
        y[i, 4] = math.log(abs(v) + 1.0)
        y[i, 5] = math.sqrt(abs(v))
        y[i, 6] = math.tanh(v)
        y[i, 7] = math.pow(abs(v), 1.5)
        y[i, 8] = math.floor(v)
        y[i, 9] = math.ceil(v)
        y[i, 10] = math.erf(v)
        y[i, 11] = math.atan2(v, 0.5)
        y[i, 12] = math.hypot(v, 3.0)
        y[i, 13] = math.log2(abs(v) + 1.0)
        y[i, 14] = math.log10(abs(v) + 1.0)
        y[i, 15] = math.expm1(v)
        y[i, 16] = math.log1p(abs(v))
        y[i, 17] = math.sinh(v)
        y[i, 18] = math.cosh(v)
        y[i, 19] = math.erfc(v)
        y[i, 20] = math.atan(v)
        y[i, 21] = math.asin(v / 4.0)
        y[i, 22] = math.acos(v / 4.0)
        y[i, 23] = math.fmod(v, 0.75)
        y[i, 24] = math.copysign(1.5, v)
        y[i, 25] = math.fabs(v)
        y[i, 26] = asc.exp2(v)
        y[i, 27] = asc.floor(v)
        y[i, 28] = math.trunc(v)
        y[i, 29] = asc.ceil(v)


@asc.kernel
def k_math32(x, y):
    for i in range(x.shape[0]):
        v = x[i]
        y[i, 0] = asc.sin(v)
        y[i, 1] = asc.cos(v)
        y[i, 2] = asc.exp(v)
        y[i, 3] = asc.log(abs(v) + 1)
        y[i, 4] = asc.sqrt(abs(v))
        y[i, 5] = asc.tanh(v)
        y[i, 6] = asc.erf(v)
        y[i, 7] = abs(v) ** 1.5
        y[i, 8] = asc.floor(v)
        y[i, 9] = asc.ceil(v)


@asc.kernel
def k_domain(out, fn, x, y):
    r = 0.0
    try:
        if fn == 0:
            r = math.sqrt(x)
        elif fn == 1:
            r = math.log(x)
        elif fn == 2:
            r = math.exp(x)
        elif fn == 3:
            r = math.sin(x)
        elif fn == 4:
            r = math.pow(x, y)
        elif fn == 5:
            r = math.fmod(x, y)
        elif fn == 6:
            r = math.hypot(x, y)
        elif fn == 7:
            r = asc.sqrt(x)
        elif fn == 8:
            r = math.acos(x)
        elif fn == 9:
            r = math.log1p(x)
        elif fn == 10:
            r = math.cosh(x)
        out[0] = r
        out[1] = 0.0
    except ValueError:
        out[1] = 1.0
    except OverflowError:
        out[1] = 2.0


@asc.kernel
def k_casts(x, oi, oh, o64):
    for i in range(x.shape[0]):
        oi[i] = asc.int32(x[i])
        oh[i] = asc.float16(x[i])
        o64[i, 0] = int(x[i])
        o64[i, 1] = asc.uint8(asc.int64(x[i]) + 300)
        o64[i, 2] = asc.int8(asc.int64(x[i]) + 200)
        o64[i, 3] = 1 if bool(x[i]) else 0
        o64[i, 4] = asc.int16(asc.int64(x[i]) * 10000)
        o64[i, 5] = asc.int64(float(i) * 2.5)


@asc.kernel
def k_castexc(out, v):
    try:
        out[0] = asc.int32(v)
    except ValueError:
        out[0] = -1
    except OverflowError:
        out[0] = -2


@asc.kernel
def k_divmod(a, b, q, r):
    for i in range(a.shape[0]):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


@asc.kernel
def k_pow(a, b, p):
    for i in range(a.shape[0]):
        p[i] = a[i] ** b[i]


@asc.kernel
def k_pow_lit(out, fo, n):
    out[0] = 3 ** 4
    out[1] = (-2) ** 3
    out[2] = n ** 2
    out[3] = 2 ** n
    out[4] = n ** 0
    fo[0] = 2.0 ** 0.5
    fo[1] = 2 ** -1.0
    fo[2] = n ** 0.5
    fo[3] = 4.0 ** -n
    try:
        out[5] = 2 ** (n - 10)
    except ValueError:
        out[5] = -1


@asc.kernel
def k_cmp(a, b, o):
    for i in range(a.shape[0]):
        o[i, 0] = a[i] == b[i]
        o[i, 1] = a[i] != b[i]
        o[i, 2] = a[i] < b[i]
        o[i, 3] = a[i] <= b[i]
        o[i, 4] = a[i] > b[i]
        o[i, 5] = a[i] >= b[i]
        o[i, 6] = not (a[i] < b[i])


@asc.kernel
def k_const(out):
    out[0] = TILE
    out[1] = TILE * SCALE
    out[2] = AREA
    buf = asc.local_array(TILE, asc.int64)
    for i in range(TILE):
        buf[i] = i + 1
    s = 0
    for i in range(TILE):
        s += buf[i]
    out[3] = s


@asc.kernel
def k_constexpr(out, n: asc.ConstExpr[int]):
    buf = asc.local_array(n, asc.int64)
    for i in range(n):
        buf[i] = i * i
    s = 0
    for i in range(n):
        s += buf[n - 1 - i] * (i + 1)
    out[0] = s
    out[1] = n


@asc.kernel
def k_scalars(x, y, alpha: asc.float32, beta):
    for i in range(x.shape[0]):
        y[i] = x[i] * beta + alpha


@asc.kernel
def k_local2d(x, out):
    buf = asc.local_array((2, 3), asc.int32)
    for i in range(2):
        for j in range(3):
            buf[i, j] = asc.int32(x[i * 3 + j] * (i + 1))
    for i in range(2):
        s = 0
        for j in range(3):
            s += buf[i, j]
        out[i] = s


@asc.kernel
def k_static(x, out):
    s = 0.0
    for k in asc.static_range(4):
        s += x[k] * (k + 1)
    out[0] = s
    for k in asc.static_range(TILE):
        out[1 + k] = x[k] * TILE - k


@asc.func
def scaled(v, k=2, bias=0.5):
    return v * k + bias


@asc.func
def make_pt(a):
    return Pt(a, a * 2.0)


@asc.kernel
def k_helper_forms(out):
    out[0] = scaled(1.5)
    out[1] = scaled(1.5, 3)
    out[2] = scaled(1.5, bias=-1.0)
    out[3] = scaled(bias=0.0, v=2.0, k=4)
    out[4] = sq(2.5) + sq(3)


@asc.kernel
def k_struct_result(out):
    p = make_pt(1.25)
    out[0] = p.x + p.y * 10.0


@asc.kernel
def k_step(out, s):
    c = 0
    for i in range(0, 10, s):
        c += 1
    out[0] = c


@asc.kernel
def k_divloop(x, y):
    for i in range(x.shape[0]):
        y[i] = 100 // x[i]


@asc.kernel
def k_msg(out, n):
    x = 1  # */ #include <stdio.h> "comment" \
    out[0] = x
    if n > 0:
        raise ValueError("q\"uote */ back\\slash\ttab \u00e9 ??= %s %n")


@asc.func
def find_first(x, v):
    for i in range(x.shape[0]):
        if x[i] == v:
            return i
    return -1


@asc.kernel
def k_helper_loop_return(x, out):
    out[0] = find_first(x, 7)
    out[1] = find_first(x, 100)


@asc.func
def divmod_pair(a, b):
    return a // b, a % b


@asc.kernel
def k_tuple_result(out, a, b):
    q, r = divmod_pair(a, b)
    out[0] = q
    out[1] = r
    t = divmod_pair(b, a)
    out[2] = t[0] * 10 + t[1]
