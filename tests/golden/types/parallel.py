# signature: parallel(f32[1], i32[1], f32[2])
import asc


@asc.kernel
def parallel(x, hist, m):
    n = x.shape[0]
    bid = asc.get_block_idx()
    nb = asc.get_block_num()
    for i in asc.prange(bid, n, nb):
        old = asc.atomic_add(hist, i % hist.shape[0], 1)
        asc.atomic_max(hist, 0, old)
        prev = asc.atomic_cas(hist, (1,), 0, old)
    tile = asc.local_array((4, 8), asc.float32)
    buf = asc.shared_array(16, asc.float64)
    for k in asc.static_range(4):
        tile[k, 0] = x[k]
        buf[k] = tile[k, 0]
    asc.barrier()
    locks = asc.lock_array(8)

    def body(i):
        asc.lock(locks, i % 8)
        m[i, 0] = m[i, 1] * 2.0 + asc.float32(buf[0])
        asc.unlock(locks, i % 8)

    asc.parallel_for(m.shape[0], body)
    asc.parallel_for(n, lambda j: x[j] * 2.0)
