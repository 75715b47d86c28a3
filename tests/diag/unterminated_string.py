# expect: 6:15: error: unterminated string literal (detected at line 6)
import asc

@asc.kernel
def k(x, n):
    assert n, 'oops
