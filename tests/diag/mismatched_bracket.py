# expect: 6:18: error: closing parenthesis ']' does not match opening parenthesis '(' on line 6
import asc

@asc.kernel
def k(x, n):
    x[0] = (1 + 2]
