"""asc.distributed: stream-ordered collectives over MPI (libasc_mpi).

    from mpi4py import MPI
    import numpy as np, asc, asc.distributed as dist

    comm = dist.Comm(MPI.COMM_WORLD)
    s = asc.Stream()
    g = np.ones(1000, np.float32)
    comm.allreduce(g, op="sum", stream=s)    # queued; returns at once
    s.synchronize()                          # g now holds the sum

Buffers are numpy arrays or asc.Array objects, C-contiguous, used where
they are (no copy).  Each operation runs when its stream reaches it, in
order with kernels queued on that stream; its buffers are kept alive until
then.  A failure is the stream's error, raised by its next synchronize.
mpi4py initialises MPI with MPI_THREAD_MULTIPLE by default, which
libasc_mpi needs.  See docs/distributed.md.

This module is ctypes over libasc_mpi's C API: the library is found
through ASC_MPI_LIBRARY (a path), beside this package (a build copies it
there), or on the system's library path.
"""
import ctypes
import ctypes.util
import os
from contextlib import contextmanager
from pathlib import Path

from . import _asc
from ._array import Array
from ._dtypes import as_dtype
from ._errors import from_code

__all__ = ["Comm", "OPS"]

OPS = {"sum": 0, "prod": 1, "min": 2, "max": 3}

_lib = None


def _load():
    global _lib
    if _lib is not None:
        return _lib
    # libasc.so must be the one asc._asc uses (one runtime per process):
    # importing asc loaded it, and libasc_mpi's dependency on it resolves
    # to that copy by its soname.
    candidates = []
    if os.environ.get("ASC_MPI_LIBRARY"):
        candidates.append(os.environ["ASC_MPI_LIBRARY"])
    here = Path(__file__).resolve().parent
    candidates += [str(p) for p in sorted(here.glob("libasc_mpi.so*"))]
    found = ctypes.util.find_library("asc_mpi")
    if found:
        candidates.append(found)
    errors = []
    for path in candidates:
        try:
            _lib = ctypes.CDLL(path)
            break
        except OSError as e:
            errors.append(f"{path}: {e}")
    if _lib is None:
        raise ImportError("asc.distributed needs libasc_mpi (build libasc with "
                          "MPI, ASC_WITH_MPI); set ASC_MPI_LIBRARY to its path"
                          + ("; tried " + "; ".join(errors) if errors else ""))
    vp, sz, i = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
    sigs = {
        "ascCommDestroy": [vp],
        "ascCommRank": [vp, ctypes.POINTER(i)],
        "ascCommSize": [vp, ctypes.POINTER(i)],
        "ascAllReduce": [vp, vp, sz, i, i, vp, vp],
        "ascReduce": [vp, vp, sz, i, i, i, vp, vp],
        "ascBroadcast": [vp, vp, sz, i, i, vp, vp],
        "ascAllGather": [vp, vp, sz, i, vp, vp],
        "ascReduceScatter": [vp, vp, sz, i, i, vp, vp],
        "ascSend": [vp, sz, i, i, vp, vp],
        "ascRecv": [vp, sz, i, i, vp, vp],
        "ascGroupStart": [],
        "ascGroupEnd": [],
    }
    for name, args in sigs.items():
        fn = getattr(_lib, name)
        fn.argtypes = args
        fn.restype = ctypes.c_int
    _lib.ascGetErrorName.argtypes = [ctypes.c_int]
    _lib.ascGetErrorName.restype = ctypes.c_char_p
    _lib.ascGetLastErrorMessage.argtypes = []
    _lib.ascGetLastErrorMessage.restype = ctypes.c_char_p
    _lib.ascGetLastError.argtypes = []
    _lib.ascGetLastError.restype = ctypes.c_int
    return _lib


def _check(code):
    if code != 0:
        lib = _load()
        name = lib.ascGetErrorName(code).decode()
        msg = (lib.ascGetLastErrorMessage() or b"").decode(errors="replace")
        lib.ascGetLastError()   # consumed: the next call starts clean
        raise from_code(code, name, msg)


def _buffer(obj, writable):
    """(pointer, element count, dtype code, keep-alive object) of obj."""
    import numpy as np
    if isinstance(obj, Array):
        view = np.asarray(obj)
        code = obj.dtype.code
    elif isinstance(obj, np.ndarray):
        view = obj
        code = as_dtype(obj.dtype).code
    else:
        raise TypeError(f"expected a numpy array or asc.Array, got {type(obj).__name__}")
    if not view.flags.c_contiguous:
        raise ValueError("buffers must be C-contiguous (no copy is made)")
    if writable and not view.flags.writeable:
        raise ValueError("the receive buffer is read-only")
    return view.ctypes.data, view.size, code, obj


def _stream_handle(stream):
    if stream is None:
        return None
    if not isinstance(stream, _asc.Stream):
        raise TypeError(f"stream must be an asc.Stream or None, got {type(stream).__name__}")
    return stream.handle


def _op(op):
    try:
        return OPS[op]
    except (KeyError, TypeError):
        raise ValueError(f"op must be one of {sorted(OPS)}, got {op!r}") from None


class Comm:
    """A libasc communicator over a duplicate of an mpi4py communicator
    (collective: every rank of it constructs one)."""

    def __init__(self, mpi_comm):
        from mpi4py import MPI
        lib = _load()
        # The C handle: a pointer in Open MPI, an int in MPICH.
        ctype = ctypes.c_void_p if MPI._sizeof(MPI.Comm) == ctypes.sizeof(ctypes.c_void_p) \
            else ctypes.c_int
        lib.ascCommInitFromMPI.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctype]
        lib.ascCommInitFromMPI.restype = ctypes.c_int
        self._h = ctypes.c_void_p()
        _check(lib.ascCommInitFromMPI(ctypes.byref(self._h), ctype(MPI._handleof(mpi_comm))))
        self._pending = []   # (event, buffers) of queued operations
        self._group = None
        r, n = ctypes.c_int(), ctypes.c_int()
        _check(lib.ascCommRank(self._h, ctypes.byref(r)))
        _check(lib.ascCommSize(self._h, ctypes.byref(n)))
        self.rank, self.size = r.value, n.value

    # -- lifetime
    def destroy(self):
        """Waits for the operations queued on the communicator, then frees
        it (collective)."""
        if self._h is not None:
            _check(_load().ascCommDestroy(self._h))
            self._h = None
            self._pending.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()

    def _handle(self):
        if self._h is None:
            raise ValueError("the communicator was destroyed")
        return self._h

    def _queued(self, stream, *bufs):
        """Keeps bufs alive until stream has passed the operation."""
        ev = _asc.Event()
        ev.record(stream)
        self._pending = [(e, b) for e, b in self._pending if not _done(e)]
        self._pending.append((ev, bufs))

    # -- collectives
    def allreduce(self, sendbuf, recvbuf=None, op="sum", stream=None):
        """recvbuf = op over ranks of sendbuf (in place without recvbuf).
        Returns recvbuf."""
        recvbuf = sendbuf if recvbuf is None else recvbuf
        sp, n, code, _ = _buffer(sendbuf, False)
        rp, rn, rcode, _ = _buffer(recvbuf, True)
        _same(n, code, rn, rcode)
        _check(_load().ascAllReduce(sp, rp, n, code, _op(op), self._handle(),
                                    _stream_handle(stream)))
        self._queued(stream, sendbuf, recvbuf)
        return recvbuf

    def reduce(self, sendbuf, recvbuf=None, op="sum", root=0, stream=None):
        """As allreduce, with the result on root only."""
        sp, n, code, _ = _buffer(sendbuf, False)
        rp = None
        if self.rank == root:
            recvbuf = sendbuf if recvbuf is None else recvbuf
            rp, rn, rcode, _ = _buffer(recvbuf, True)
            _same(n, code, rn, rcode)
        _check(_load().ascReduce(sp, rp, n, code, _op(op), root, self._handle(),
                                 _stream_handle(stream)))
        self._queued(stream, sendbuf, recvbuf)
        return recvbuf

    def broadcast(self, buf, root=0, stream=None):
        """buf = root's buf on every rank.  Returns buf."""
        p, n, code, _ = _buffer(buf, True)
        _check(_load().ascBroadcast(p, p, n, code, root, self._handle(),
                                    _stream_handle(stream)))
        self._queued(stream, buf)
        return buf

    def allgather(self, sendbuf, recvbuf, stream=None):
        """recvbuf (size times sendbuf's elements) = every rank's sendbuf,
        in rank order."""
        sp, n, code, _ = _buffer(sendbuf, False)
        rp, rn, rcode, _ = _buffer(recvbuf, True)
        _same(n * self.size, code, rn, rcode)
        _check(_load().ascAllGather(sp, rp, n, code, self._handle(),
                                    _stream_handle(stream)))
        self._queued(stream, sendbuf, recvbuf)
        return recvbuf

    def reduce_scatter(self, sendbuf, recvbuf, op="sum", stream=None):
        """recvbuf = op over ranks of block `rank` of sendbuf (size blocks
        of recvbuf's length)."""
        sp, n, code, _ = _buffer(sendbuf, False)
        rp, rn, rcode, _ = _buffer(recvbuf, True)
        _same(n, code, rn * self.size, rcode)
        _check(_load().ascReduceScatter(sp, rp, rn, code, _op(op), self._handle(),
                                        _stream_handle(stream)))
        self._queued(stream, sendbuf, recvbuf)
        return recvbuf

    # -- point to point
    def send(self, buf, peer, stream=None):
        p, n, code, _ = _buffer(buf, False)
        _check(_load().ascSend(p, n, code, peer, self._handle(), _stream_handle(stream)))
        self._queued_or_grouped(stream, buf)

    def recv(self, buf, peer, stream=None):
        p, n, code, _ = _buffer(buf, True)
        _check(_load().ascRecv(p, n, code, peer, self._handle(), _stream_handle(stream)))
        self._queued_or_grouped(stream, buf)
        return buf

    def _queued_or_grouped(self, stream, buf):
        if self._group is not None:
            self._group.append((stream, buf))
        else:
            self._queued(stream, buf)

    @contextmanager
    def group(self):
        """Sends and receives inside are posted together, as one operation
        (a halo exchange); they must use one stream."""
        _check(_load().ascGroupStart())
        self._group = []
        try:
            yield self
        finally:
            members, self._group = self._group, None
            _check(_load().ascGroupEnd())
            if members:
                self._queued(members[0][0], *[b for _, b in members])


def _done(event):
    try:
        return event.query()
    except Exception:   # an error is reported by the stream's synchronize
        return True


def _same(n, code, rn, rcode):
    if code != rcode:
        raise TypeError("send and receive buffers must have the same dtype")
    if n != rn:
        raise ValueError(f"buffer sizes do not match: {n} and {rn} elements")
