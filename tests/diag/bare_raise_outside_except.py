# expect: 6:5: error: bare 'raise' is only allowed inside an 'except' block
import asc

@asc.kernel
def k(x, n):
    raise
