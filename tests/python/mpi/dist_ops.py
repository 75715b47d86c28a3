"""Run under mpirun by tests/python/test_distributed.py: asc.distributed's
operations on numpy and asc arrays, in order with kernels on a stream,
and its errors."""
import math
import sys

import numpy as np
from mpi4py import MPI

import asc
import asc.distributed as dist


@asc.kernel
def scale(x, a):
    for i in asc.prange(x.shape[0]):
        x[i] = x[i] * a


def main():
    comm = dist.Comm(MPI.COMM_WORLD)
    rank, size = comm.rank, comm.size
    s = asc.Stream()
    tri = size * (size + 1) // 2

    # numpy, every op, several dtypes; a kernel before and after.
    for dt in (np.float32, np.float64, np.int32, np.int64, np.uint8, np.float16):
        x = np.full(33, rank + 1, dtype=dt)
        out = {}
        for op in ("sum", "prod", "min", "max"):
            out[op] = np.empty_like(x)
            comm.allreduce(x, out[op], op=op, stream=s)
        s.synchronize()
        assert np.all(out["sum"] == tri), (dt, out["sum"])
        assert np.all(out["prod"] == math.factorial(size)), (dt, out["prod"])
        assert np.all(out["min"] == 1) and np.all(out["max"] == size), dt

    # asc.Array, in place, ordered with kernels on the stream.
    a = asc.asarray(np.full(1000, rank + 1, dtype=np.float32))
    scale[1, s](a, 2.0)
    comm.allreduce(a, op="sum", stream=s)
    scale[1, s](a, 0.5)
    s.synchronize()
    assert np.all(a.numpy() == tri), a.numpy()[:4]

    # bfloat16 through asc.Array (reduced by libasc in float32)
    bb = asc.empty(7, asc.bfloat16)
    bits = bb.numpy().view(np.uint16)
    bits[...] = asc.to_bfloat16_bits(np.full(7, rank + 1.5, np.float32))
    comm.allreduce(bb, op="sum", stream=s)
    s.synchronize()
    got = asc.from_bfloat16_bits(bb.numpy().view(np.uint16))
    assert np.all(got == tri + 0.5 * size), got

    # broadcast, allgather, reduce_scatter, reduce
    v = np.arange(10, dtype=np.int64) * (rank + 1)
    comm.broadcast(v, root=size - 1, stream=s)
    g = np.empty(10 * size, np.int64)
    comm.allgather(np.full(10, rank, np.int64), g, stream=s)
    rs = np.empty(3, np.float64)
    comm.reduce_scatter(np.ones(3 * size), rs, stream=s)
    red = np.zeros(5)
    comm.reduce(np.full(5, float(rank)), red, op="max", root=0, stream=s)
    s.synchronize()
    assert np.array_equal(v, np.arange(10) * size), v
    assert np.array_equal(g, np.repeat(np.arange(size), 10)), g
    assert np.all(rs == size), rs
    if rank == 0:
        assert np.all(red == size - 1), red

    # a ring exchange in a group
    out, inn = np.full(100, rank, np.float64), np.empty(100)
    with comm.group():
        comm.send(out, (rank + 1) % size, stream=s)
        comm.recv(inn, (rank - 1) % size, stream=s)
    s.synchronize()
    assert np.all(inn == (rank - 1) % size), inn[:3]

    # errors
    try:
        comm.allreduce(np.ones(4), np.ones(5))
        raise AssertionError("size mismatch accepted")
    except ValueError:
        pass
    try:
        comm.allreduce(np.ones(4), op="mean")
        raise AssertionError("bad op accepted")
    except ValueError:
        pass
    try:
        comm.allreduce(np.ones((4, 4))[:, 0])
        raise AssertionError("strided buffer accepted")
    except ValueError:
        pass
    try:
        comm.send(np.ones(4), size, stream=s)
        raise AssertionError("bad peer accepted")
    except asc.InvalidValueError as e:
        assert "peer" in str(e), e
    if size >= 2 and rank < 2:
        # rank 1 receives fewer elements than rank 0 sends: MPI's error
        # reaches rank 1's stream.
        if rank == 0:
            comm.send(np.ones(16), 1, stream=s)
            s.synchronize()
        else:
            comm.recv(np.ones(4), 0, stream=s)
            try:
                s.synchronize()
                raise AssertionError("truncation not reported")
            except asc.Error as e:
                assert "MPI failed" in str(e), e
    comm.destroy()
    try:
        comm.allreduce(np.ones(1))
        raise AssertionError("destroyed comm accepted")
    except ValueError:
        pass
    MPI.COMM_WORLD.Barrier()
    if rank == 0:
        print(f"dist_ops: {size} ranks ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
