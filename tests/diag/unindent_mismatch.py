# expect: 8:7: error: unindent does not match any outer indentation level
import asc

@asc.kernel
def k(x, n):
    if n:
        x[0] = 1
      x[1] = 2
