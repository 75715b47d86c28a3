# expect: 8:12: error: 'except' takes exception classes
import asc

@asc.kernel
def k(x, n):
    try:
        pass
    except n:
        pass
