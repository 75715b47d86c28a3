import asc

@asc.kernel
def parallel(x, y, counts, n):
    bid = asc.get_block_idx()
    nb = asc.get_block_num()
    tmp = asc.local_array((4, 4), asc.float32)
    sh = asc.shared_array(shape=(16,), dtype=asc.float32)
    locks = asc.lock_array(16)
    s = 0.0
    for i in asc.prange(n):
        s += x[i]
        asc.atomic_add(counts, 0, 1)
        asc.atomic_sub(counts, 1, 1)
        asc.atomic_min(counts, 2, i)
        asc.atomic_max(counts, 3, i)
        old = asc.atomic_cas(counts, 4, 0, 1)
        prev = asc.atomic_exchange(counts, 5, i)
        asc.lock(locks, i % 16)
        asc.unlock(locks, i % 16)
    for j in asc.static_range(4):
        tmp[j, j] = 0.0
    asc.barrier()

    def body(i):
        t = x[i] * 2
        y[i] = t + s

    asc.parallel_for(n, body)
    asc.parallel_for(n, lambda i: y[i] += 1)
    asc.parallel_for(n, lambda i: asc.atomic_add(counts, 0, i))
