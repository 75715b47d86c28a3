# expect: 6:5: error: 'break' outside loop
import asc

@asc.kernel
def k(x, n):
    break
