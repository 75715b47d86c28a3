"""asc: compute kernels written in Python, compiled to native code by libasc
and run on every core.

    import asc, numpy as np

    @asc.kernel
    def add(a, b, c):
        for i in asc.prange(a.shape[0]):
            c[i] = a[i] + b[i]

    a = np.ones(1000, np.float32); b = 2 * a; c = np.empty_like(a)
    add(a, b, c)                 # one block, default stream, waits
    s = asc.Stream()
    add[4, s](a, b, c)           # on s, returns at once; add never reads
                                 # asc.get_block_idx(), so it runs once,
                                 # with the cores of four blocks
    s.synchronize()

See docs/python.md.
"""
import atexit as _atexit
from collections import namedtuple as _namedtuple

from . import _asc
from ._array import Array, asarray, empty, empty_like, zeros, zeros_like
from ._dtypes import (DType, as_dtype, bfloat16, bool_, float16, float32,
                      float64, complex64, complex128, from_bfloat16_bits, int8, int16, int32, int64,
                      to_bfloat16_bits, uint8, uint16, uint32, uint64)
from ._errors import (CancelledError, CompileError, Error,
                      InvalidHandleError, InvalidKernelError,
                      InvalidValueError, KernelOnlyError, LaunchTimeoutError,
                      OutOfMemoryError, SourceError)
from ._kernel import CompiledModule, Func, compile, func, jit, kernel, load_module
from ._lang import *  # noqa: F401,F403  (kernel-language names)
from ._lang import ConstExpr, Tensor, parallel_for, prange, static_range
from ._profile import Profile, profile

_asc._set_error_factory(__import__("asc._errors", fromlist=["from_code"]).from_code)

Stream = _asc.Stream
Event = _asc.Event
Kernel = _asc.Kernel
default_stream = _asc.default_stream
# kern[blocks, asc.this_thread](...): run now, the calling thread taking
# part (ascLaunchKernelSync); asc.this_thread.hand_off leaves it to the
# workers.  For framework operators: docs/plugins.md.
this_thread = _asc.this_thread

_v = _asc.version()
__version__ = f"{_v // 10000}.{_v // 100 % 100}.{_v % 100}"
version_info = (_v // 10000, _v // 100 % 100, _v % 100)
del _v

DeviceProperties = _namedtuple("DeviceProperties", [
    "device", "name", "cores", "numa_nodes", "sockets", "l1_cache_size",
    "l2_cache_size", "l3_cache_size", "simd_width", "total_memory",
    "first_core"])


def device_properties(device=None):
    """Properties of a device (default: the current one)."""
    d = _asc.device_properties() if device is None else _asc.device_properties(device)
    return DeviceProperties(**d)


def include_dir():
    """The directory of libasc's C headers (asc/asc.h, asc/dlpack.h), for
    plugins built against this package (docs/plugins.md)."""
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "include")


def library_path():
    """The libasc shared library this package runs on: plugins link to it
    (by its soname, so a process has one libasc and one worker pool)."""
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, f"libasc.so.{version_info[0]}")


def device_count():
    return _asc.device_count()


def get_device():
    return _asc.get_device()


def set_device(device):
    _asc.set_device(device)


def mem_get_info():
    """(free, total) bytes of device memory."""
    return _asc.mem_get_info()


def stream_priority_range():
    """(least, greatest) stream priorities; lower numbers are served first."""
    return _asc.stream_priority_range()


def synchronize():
    """Wait for all work on the current device (GIL released); raises the
    first error a kernel reported."""
    _asc.synchronize()


def _drain_at_exit():
    # Queued kernels may still use arrays that interpreter teardown frees.
    try:
        _asc.synchronize()
    except Exception:
        pass


_atexit.register(_drain_at_exit)
