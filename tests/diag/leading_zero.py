# expect: 6:12: error: leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers
import asc

@asc.kernel
def k(x, n):
    x[0] = 012
