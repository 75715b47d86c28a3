# expect: 8:5: error: expected 'except' or 'finally' block (to complete 'try' at line 6)
import asc

@asc.kernel
def k(x, n):
    try:
        pass
    x[0] = 1
