# expect: 4:22: error: fastmath must be True, False or a set of flag names (contract, reassoc, nnan, ninf, nsz, arcp, afn)
import asc

@asc.kernel(fastmath=1)
def k(x):
    pass
