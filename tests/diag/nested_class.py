# expect: 6:5: error: class definitions are only supported at module level
import asc

@asc.kernel
def k(x, n):
    class Q:
        a: int
