# expect: 6:18: error: expected 'else' after 'if' expression (to complete the conditional expression at line 6)
import asc

@asc.kernel
def k(x, n):
    x[0] = 1 if n
