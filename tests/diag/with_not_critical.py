# expect: 6:10: error: name 'open' is not defined
import asc

@asc.kernel
def k(x, n):
    with open(n):
        pass
