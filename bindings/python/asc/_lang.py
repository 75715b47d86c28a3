"""Names of the kernel language that Python code can see.

The compiler reads kernels as text, so these objects only have to exist for
annotations, IDEs and type checkers.  Constructs that only mean something
inside a kernel raise KernelOnlyError when the Python interpreter calls
them; math functions fall back to Python's math module.
"""
import math as _math

from ._dtypes import DType, as_dtype
from ._errors import KernelOnlyError


class TensorType:
    """``asc.Tensor[dtype, ndim]``: an annotation for a tensor parameter."""

    __slots__ = ("dtype", "ndim")

    def __init__(self, dtype=None, ndim=None):
        self.dtype = None if dtype is None else as_dtype(dtype)
        self.ndim = ndim

    def __repr__(self):
        if self.dtype is None:
            return "asc.Tensor"
        if self.ndim is None:
            return f"asc.Tensor[{self.dtype!r}]"
        return f"asc.Tensor[{self.dtype!r}, {self.ndim}]"

    def __eq__(self, other):
        return (isinstance(other, TensorType) and other.dtype == self.dtype
                and other.ndim == self.ndim)

    def __hash__(self):
        return hash((TensorType, self.dtype, self.ndim))


class Tensor:
    """Annotation for tensor parameters: ``a: asc.Tensor[asc.float32, 2]``.

    Unannotated parameters are generic: specialised for each dtype and rank
    they are called with."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("asc.Tensor is an annotation; use asc.empty / "
                        "asc.zeros / asc.asarray to make arrays")

    def __class_getitem__(cls, item):
        if not isinstance(item, tuple):
            item = (item,)
        if len(item) > 2:
            raise TypeError("use asc.Tensor[dtype] or asc.Tensor[dtype, ndim]")
        dtype = item[0]
        ndim = item[1] if len(item) == 2 else None
        if ndim is not None and (not isinstance(ndim, int) or ndim < 0):
            raise TypeError(f"Tensor ndim must be a non-negative int, got {ndim!r}")
        return TensorType(dtype, ndim)


class ConstExprType:
    __slots__ = ("type",)

    def __init__(self, t):
        self.type = t

    def __repr__(self):
        name = getattr(self.type, "__name__", None) or repr(self.type)
        return f"asc.ConstExpr[{name}]"


class ConstExpr:
    """``n: asc.ConstExpr[int]``: a compile-time constant parameter; each
    value it is called with compiles its own specialisation."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("asc.ConstExpr is an annotation")

    def __class_getitem__(cls, item):
        if not (item in (int, float, bool) or isinstance(item, DType)):
            raise TypeError(f"ConstExpr takes int, float, bool or an asc dtype, got {item!r}")
        return ConstExprType(item)


def _kernel_only(name, doc):
    def f(*args, **kwargs):
        raise KernelOnlyError(
            f"asc.{name}() can only be used inside an @asc.kernel or @asc.func "
            f"function: the kernel compiler translates it, Python cannot run it")
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc + "\n\nOnly meaningful inside kernels."
    return f


prange = _kernel_only("prange", "prange(stop) / prange(start, stop[, step]): a "
                      "parallel loop over the block's team.")
static_range = _kernel_only("static_range", "static_range(n): a loop the "
                            "compiler unrolls completely.")
parallel_for = _kernel_only("parallel_for", "parallel_for(n, body): run "
                            "body(i) for i in range(n) over the block's team.")
get_block_idx = _kernel_only("get_block_idx", "Index of the running block.")
get_block_num = _kernel_only("get_block_num", "Number of blocks of the launch.")
barrier = _kernel_only("barrier", "Wait for every block of the launch.")
critical = _kernel_only("critical", "with asc.critical(): one team thread at a time.")
local_array = _kernel_only("local_array", "local_array(shape, dtype): scratch "
                           "private to the iteration or block.")
shared_array = _kernel_only("shared_array", "shared_array(shape, dtype): "
                            "scratch shared by the block's team.")
atomic_add = _kernel_only("atomic_add", "atomic_add(t, index, value) -> old value.")
atomic_sub = _kernel_only("atomic_sub", "atomic_sub(t, index, value) -> old value.")
atomic_min = _kernel_only("atomic_min", "atomic_min(t, index, value) -> old value.")
atomic_max = _kernel_only("atomic_max", "atomic_max(t, index, value) -> old value.")
atomic_cas = _kernel_only("atomic_cas", "atomic_cas(t, index, expected, new) -> old value.")
atomic_exchange = _kernel_only("atomic_exchange", "atomic_exchange(t, index, value) -> old value.")

# Math: the same names inside kernels; Python's math outside.
sin, cos, tan = _math.sin, _math.cos, _math.tan
asin, acos, atan, atan2 = _math.asin, _math.acos, _math.atan, _math.atan2
sinh, cosh, tanh = _math.sinh, _math.cosh, _math.tanh
exp, log, log2, log10 = _math.exp, _math.log, _math.log2, _math.log10
sqrt, pow, floor, ceil = _math.sqrt, _math.pow, _math.floor, _math.ceil
erf, fabs, isnan, isinf = _math.erf, _math.fabs, _math.isnan, _math.isinf
inf, nan, pi, e = _math.inf, _math.nan, _math.pi, _math.e
