# expect: 6:15: error: unterminated triple-quoted string literal (detected at line 8)
import asc

@asc.kernel
def k(x, n):
    assert n, '''never closed

