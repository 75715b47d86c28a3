# expect: 10:12: error: '(' was never closed
# expect: 8:13: error: expected ':' (to close 'if' at line 8)
# expect: 11:5: error: invalid syntax: unexpected keyword 'while'
import asc

@asc.kernel
def k(x, n):
    if n > 0
        x[0] = 1
    x[1] = (2 +
    while n
        pass
