# expect: 7:5: error: expected an indented block after 'if' statement on line 6
import asc

@asc.kernel
def k(x, n):
    if n:
    x[0] = 1
