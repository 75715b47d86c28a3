# expect: 7:9: error: asc.barrier() cannot be used inside a parallel loop
import asc

@asc.kernel
def k(x, n):
    for i in asc.prange(n):
        asc.barrier()
