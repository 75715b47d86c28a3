# expect: 4:35: error: unknown fastmath flag 'fast' (valid: contract, reassoc, nnan, ninf, nsz, arcp, afn)
import asc

@asc.kernel(fastmath={"contract", "fast"})
def k(x):
    pass
