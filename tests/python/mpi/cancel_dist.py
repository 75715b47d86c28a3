"""Run under mpirun by tests/python/test_distributed.py: Ctrl-C reaches a
collective that cannot complete.  Rank 0 queues an allgather that the
other ranks join only later and interrupts itself (SIGINT) while it waits
in Stream.synchronize(): KeyboardInterrupt comes back, the communicator
is unusable from then on, the stream works again and destroy() returns.
The other ranks then join the allgather (MPI finishes rank 0's abandoned
one) and check its data."""
import os
import signal
import sys
import threading
import time

import numpy as np
from mpi4py import MPI

import asc
import asc.distributed as dist


def main():
    # As in a terminal, whatever the launcher did with SIGINT.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    world = MPI.COMM_WORLD
    comm = dist.Comm(world)
    rank, size = comm.rank, comm.size
    s = asc.Stream()
    send = np.arange(8, dtype=np.int32) + 100 * rank
    recv = np.zeros(8 * size, np.int32)
    if rank == 0:
        comm.allgather(send, recv, stream=s)
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
        t0 = time.monotonic()
        try:
            s.synchronize()
            print("rank 0: the synchronisation returned without an interrupt",
                  flush=True)
            return 1
        except KeyboardInterrupt:
            print(f"rank 0: KeyboardInterrupt after {time.monotonic() - t0:.2f} s",
                  flush=True)
        try:
            comm.allgather(send, recv, stream=s)
            print("rank 0: the communicator is still usable", flush=True)
            return 1
        except asc.Error as exc:
            assert "unusable" in str(exc), exc
        s.synchronize()
        comm.destroy()
    world.Barrier()
    if rank != 0:
        comm.allgather(send, recv, stream=s)
        s.synchronize()
        want = (np.arange(8, dtype=np.int32)[None, :]
                + 100 * np.arange(size, dtype=np.int32)[:, None]).ravel()
        assert (recv == want).all(), recv
        comm.destroy()
    world.Barrier()
    print(f"cancel_dist: rank {rank} ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
