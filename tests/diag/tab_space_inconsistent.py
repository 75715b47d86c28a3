# expect: 7:2: error: inconsistent use of tabs and spaces in indentation
import asc

@asc.kernel
def k(x, n):
    if n:
	x[0] = 1
