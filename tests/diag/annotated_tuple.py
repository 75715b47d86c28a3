# expect: 6:5: error: only single target (not tuple) can be annotated
import asc

@asc.kernel
def k(x, n):
    a, b: int = 1, 2
