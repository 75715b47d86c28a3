import asc


# a histogram with one lock per bin: the counter is read again after the
# lock is taken, and nothing moves across lock/unlock
@asc.kernel
def hist(x, counts, locks):
    for i in asc.prange(x.shape[0]):
        b = x[i] % counts.shape[0]
        before = counts[b]
        asc.lock(locks, b)
        counts[b] = counts[b] + 1
        asc.unlock(locks, b)
        x[i] = before


# the same with the block's own lock array: created unlocked by the
# block's leader (a serial store loop), before the parallel loop
@asc.kernel
def hist_own_locks(x, counts):
    locks = asc.lock_array(8)
    for i in asc.prange(x.shape[0]):
        b = x[i] % 8
        asc.lock(locks, b)
        counts[b] = counts[b] + 1
        asc.unlock(locks, b)
