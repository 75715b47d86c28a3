# mode: ir
# signature: k(f64[1])
# expect: 9:17: error: asc.lock_array() must be called outside parallel loops: its locks are shared by the block's threads
import asc

@asc.kernel
def k(x):
    for i in asc.prange(x.shape[0]):
        locks = asc.lock_array(4)
        asc.lock(locks, 0)
        x[i] = x[i] + 1.0
        asc.unlock(locks, 0)
