import asc

@asc.kernel
def statements(x, y, n):
    a = b = 0
    c, d = 1, 2
    (e, f) = x.shape
    x[0, 1] = 3
    x[-1] = x[n - 1]
    a += 1
    a -= 1
    a *= 2
    a /= 2
    a //= 2
    a %= 3
    a **= 2
    a <<= 1
    a >>= 1
    a &= 7
    a |= 8
    a ^= 1
    g: asc.float32 = 0
    h: int
    if a < 0:
        pass
    elif a == 0:
        a = 1
    elif a > 10:
        a = 2
    else:
        a = 3
    for i in range(n):
        if i == 3:
            continue
        if i == 4:
            break
    for i in range(1, n, 2):
        pass
    while a > 0:
        a -= 1
    while True:
        break
    x[0] = a; x[1] = b;
    if a: return
    return
