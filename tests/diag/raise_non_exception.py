# expect: 6:11: error: 'raise' takes an exception class, e.g. raise ValueError("message")
import asc

@asc.kernel
def k(x, n):
    raise n
