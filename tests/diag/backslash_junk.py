# expect: 6:14: error: unexpected character after line continuation character
import asc

@asc.kernel
def k(x, n):
    x[0] = 1 \ 2
