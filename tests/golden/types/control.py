# signature: control(f32[1], i64, bool)
import asc


@asc.kernel
def control(a, n, flag):
    """Control flow of every kind."""
    total = 0.0
    i = 0
    while i < n and not flag:
        i += 1
        if i % 2 == 0:
            continue
        elif i > 100:
            break
        else:
            total += a[i]
    for j in range(1, n, 2):
        pass
    for j in range(n - 1, -1, -1):
        total -= a[j]
    sign = 1 if total > 0 else -1
    pick = a[0] if flag or n > 3 else 0.0
    if not (0 <= n < a.shape[0]):
        raise ValueError("n out of range")
    assert n >= 0, "n must not be negative"
    try:
        a[n] = total * sign
    except IndexError:
        a[0] = pick
    finally:
        i = 0
    with asc.critical():
        a[0] += 1
    if a[0] != a[0]:
        raise ZeroDivisionError
