"""Element types.

Each dtype is an object that works three ways: as an annotation and a cast
inside kernels (``x: asc.float32``, ``asc.float16(y)`` -- read by the
compiler), as a numpy-dtype-like object outside them (``np.dtype(asc.int8)``,
``arr.view(asc.bfloat16)``), and as a cast of Python values
(``asc.float32(1.5)`` returns a numpy scalar, which kernels receive typed).
"""
from . import _asc

_KINDS = {"bool": "b", "int8": "i", "int16": "i", "int32": "i", "int64": "i",
          "uint8": "u", "uint16": "u", "uint32": "u", "uint64": "u",
          "float16": "f", "bfloat16": "f", "float32": "f", "float64": "f",
          "complex64": "c", "complex128": "c"}


def _ml_dtypes():
    try:
        import ml_dtypes
    except ImportError:
        return None
    return ml_dtypes


class DType:
    """A libasc element type (see the module docstring)."""

    __slots__ = ("name", "code", "itemsize", "kind", "_np")

    def __init__(self, code):
        name, itemsize, _, _ = _asc.dtype_info(code)
        self.name = name
        self.code = code
        self.itemsize = itemsize
        self.kind = _KINDS[name]
        self._np = None

    @property
    def dtype(self):
        """The numpy dtype: ml_dtypes' bfloat16 when installed, else for
        bfloat16 a one-field structured uint16 dtype named 'bfloat16' that
        libasc recognises."""
        if self._np is None:
            import numpy as np
            if self.name == "bfloat16":
                ml = _ml_dtypes()
                self._np = (np.dtype(ml.bfloat16) if ml is not None
                            else np.dtype([("bfloat16", "<u2")]))
            else:
                self._np = np.dtype("bool" if self.name == "bool" else self.name)
        return self._np

    @property
    def type(self):
        return self.dtype.type

    def __call__(self, value):
        """Cast a Python value (outside kernels): a numpy scalar."""
        if self.name == "bfloat16" and _ml_dtypes() is None:
            raise TypeError("asc.bfloat16(x) outside kernels needs ml_dtypes; "
                            "use asc.to_bfloat16_bits() for uint16 bits")
        return self.dtype.type(value)

    def __repr__(self):
        return "asc." + ("bool_" if self.name == "bool" else self.name)

    def __str__(self):
        return self.name

    def __eq__(self, other):
        if isinstance(other, DType):
            return other.code == self.code
        try:
            return as_dtype(other).code == self.code
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(("asc.dtype", self.code))

    def __reduce__(self):
        return (_by_code, (self.code,))


_ALL = tuple(DType(i) for i in range(len(_KINDS)))
_BY_NAME = {d.name: d for d in _ALL}


def _by_code(code):
    return _ALL[code]


def as_dtype(obj):
    """The asc dtype for a DType, name, numpy dtype / type, or Python type."""
    if isinstance(obj, DType):
        return obj
    if obj is bool:
        return _BY_NAME["bool"]
    if obj is int:
        return _BY_NAME["int64"]
    if obj is float:
        return _BY_NAME["float64"]
    if isinstance(obj, str):
        if obj in _BY_NAME:
            return _BY_NAME[obj]
        if obj == "bool_":
            return _BY_NAME["bool"]
    try:
        import numpy as np
        d = np.dtype(obj)
    except (TypeError, ImportError):
        raise TypeError(f"not a libasc dtype: {obj!r}") from None
    if d.names == ("bfloat16",) or d.name == "bfloat16":
        return _BY_NAME["bfloat16"]
    if d.byteorder == ">" or d.name not in _BY_NAME:
        raise TypeError(f"not a libasc dtype: {d}")
    return _BY_NAME[d.name]


def to_bfloat16_bits(values):
    """float32 values -> uint16 bfloat16 bit patterns (round to nearest
    even), for use without ml_dtypes: ``asc.to_bfloat16_bits(x).view(asc.bfloat16)``."""
    import numpy as np
    f = np.ascontiguousarray(values, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(f), np.uint16(0x7FC0), rounded)


def from_bfloat16_bits(bits):
    """uint16 bfloat16 bit patterns (or a bfloat16 view) -> float32."""
    import numpy as np
    u = np.ascontiguousarray(bits).view(np.uint16)
    return (u.astype(np.uint32) << 16).view(np.float32)


bool_ = _BY_NAME["bool"]
int8 = _BY_NAME["int8"]
int16 = _BY_NAME["int16"]
int32 = _BY_NAME["int32"]
int64 = _BY_NAME["int64"]
uint8 = _BY_NAME["uint8"]
uint16 = _BY_NAME["uint16"]
uint32 = _BY_NAME["uint32"]
uint64 = _BY_NAME["uint64"]
float16 = _BY_NAME["float16"]
bfloat16 = _BY_NAME["bfloat16"]
float32 = _BY_NAME["float32"]
float64 = _BY_NAME["float64"]
complex64 = _BY_NAME["complex64"]
complex128 = _BY_NAME["complex128"]
