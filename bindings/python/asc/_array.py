"""Pooled device arrays (ascMalloc memory) and their numpy views."""
import operator

from . import _asc
from ._dtypes import DType, as_dtype, float32, _ml_dtypes


def _np():
    import numpy
    return numpy


class Array(_asc.Array):
    """A C-contiguous array in libasc device memory (host memory on the CPU
    device).  numpy views it without a copy: ``np.asarray(a)`` or
    ``a.numpy()``; a view keeps the memory alive.  Kernels take it like any
    array, without looking at Python."""

    def __new__(cls, shape, dtype=float32, *, zero=False):
        return super().__new__(cls, shape, as_dtype(dtype).code, zero=zero)

    @property
    def dtype(self):
        return _code_dtype(self._dtype_code)

    def numpy(self):
        """A numpy view of the memory (bfloat16: an ml_dtypes view when
        installed, else the structured stand-in, see docs/python.md)."""
        np = _np()
        view = np.asarray(self)
        if self._dtype_code == _asc.DT_bfloat16 and _ml_dtypes() is not None:
            view = view.view(_ml_dtypes().bfloat16)
        return view

    def __array__(self, dtype=None, copy=None):
        view = self.numpy()
        if dtype is not None:
            return view.astype(dtype, copy=bool(copy))
        return view.copy() if copy else view

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __getitem__(self, index):
        return self.numpy()[index]

    def __setitem__(self, index, value):
        self.numpy()[index] = value

    def __iter__(self):
        return iter(self.numpy())

    def __repr__(self):
        return f"asc.Array({self.numpy()!r}, dtype={self.dtype!r})"

    def fill(self, value):
        self.numpy().fill(value)
        return self

    def copy(self):
        out = Array(self.shape, self.dtype)
        out.numpy()[...] = self.numpy()
        return out

    def tolist(self):
        return self.numpy().tolist()


def _code_dtype(code):
    from ._dtypes import _by_code
    return _by_code(code)


def _shape(shape):
    if isinstance(shape, int) or hasattr(shape, "__index__"):
        return (operator.index(shape),)
    return tuple(operator.index(d) for d in shape)


def empty(shape, dtype=float32):
    """Uninitialised pooled array."""
    return Array(_shape(shape), dtype)


def zeros(shape, dtype=float32):
    """Zero-filled pooled array."""
    return Array(_shape(shape), dtype, zero=True)


def empty_like(a, dtype=None):
    return Array(_shape(a.shape), dtype if dtype is not None else _dtype_of(a))


def zeros_like(a, dtype=None):
    return Array(_shape(a.shape), dtype if dtype is not None else _dtype_of(a), zero=True)


def _dtype_of(a):
    if isinstance(a, Array):
        return a.dtype
    return as_dtype(a.dtype)


def asarray(obj, dtype=None):
    """A pooled array with obj's contents (obj itself when it already is
    one of that dtype)."""
    if isinstance(obj, Array) and (dtype is None or as_dtype(dtype) == obj.dtype):
        return obj
    np = _np()
    if dtype is not None:
        dt = as_dtype(dtype)
    else:
        src = np.asarray(obj)
        try:
            dt = as_dtype(src.dtype)
        except TypeError:
            raise TypeError(f"asc.asarray: no libasc dtype for {src.dtype}") from None
    out = Array(_shape(np.shape(obj)), dt)
    view = out.numpy()
    if dt.name == "bfloat16" and view.dtype.names:
        src = np.asarray(obj)
        if src.dtype.names == ("bfloat16",) or src.dtype.name == "bfloat16":
            view[...] = src.view(view.dtype)
        else:
            from ._dtypes import to_bfloat16_bits
            view.view(np.uint16)[...] = to_bfloat16_bits(src)
    else:
        view[...] = np.asarray(obj)
    return out
