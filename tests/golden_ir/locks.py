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
