# expect: 6:12: error: asc.atomic_add() missing required argument 'val'
import asc

@asc.kernel
def k(x, n):
    x[0] = asc.atomic_add(x, 0)
