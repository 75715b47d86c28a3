"""@asc.kernel / @asc.jit, @asc.func and asc.compile.

A decorated kernel is an asc._asc.Kernel: calling it goes straight into C.
It compiles on first use (so helpers and constants defined later in the
file are seen): the loader below assembles the text, freezes the globals,
loads the module and binds the kernel; from then on a launch never comes
back to Python.
"""
import ast
import functools
import inspect
import os
import re
import stat
import threading
import weakref

from . import _asc
from ._source import Piece, assemble, collect, function_piece

# numba's fastmath flag names, in the order of the ASC_FASTMATH_* bits
# (include/asc/asc.h); docs/fastmath.md says what each permits.
FASTMATH_FLAGS = ("contract", "reassoc", "nnan", "ninf", "nsz", "arcp", "afn")
_FASTMATH_ALL = (1 << len(FASTMATH_FLAGS)) - 1


def fastmath_mask(value):
    """The ASC_FASTMATH_* bits of a fastmath= value: True (every flag, as
    numba), False or None (none: the deterministic default), or a set (any
    iterable) of flag names."""
    if value is None or value is False:
        return 0
    if value is True:
        return _FASTMATH_ALL
    if isinstance(value, str):
        value = (value,)
    try:
        names = list(value)
    except TypeError:
        raise TypeError("fastmath must be True, False or a set of flag names "
                        f"({', '.join(FASTMATH_FLAGS)}), got {value!r}") from None
    mask = 0
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"fastmath flags are strings, got {name!r}")
        if name not in FASTMATH_FLAGS:
            raise ValueError(f"unknown fastmath flag {name!r} (valid: "
                             f"{', '.join(FASTMATH_FLAGS)})")
        mask |= 1 << FASTMATH_FLAGS.index(name)
    return mask


def _fastmath_text(mask):
    """mask as the kernel language writes it in a decorator."""
    if mask == _FASTMATH_ALL:
        return "True"
    if mask == 0:
        return "False"
    return "{" + ", ".join(repr(n) for i, n in enumerate(FASTMATH_FLAGS)
                           if mask & (1 << i)) + "}"


class Func:
    """An @asc.func helper.  Kernels that call it compile its text with
    theirs; called from Python it runs as the plain Python function.

    fastmath (None: inherit) limits the floating-point mode of every kernel
    that calls it: a kernel runs with the flags it asks for that each
    helper it calls allows too (docs/fastmath.md)."""

    def __init__(self, fn, fastmath=None):
        self.py_func = fn
        self.fastmath = None if fastmath is None else fastmath_mask(fastmath)
        deco = "@asc.func"
        if self.fastmath is not None:
            deco += f"(fastmath={_fastmath_text(self.fastmath)})"
        self.piece = function_piece(fn, deco)
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        return self.py_func(*args, **kwargs)

    def __repr__(self):
        return f"<asc.func {self.py_func.__qualname__}>"


def _is_helper(v):
    return isinstance(v, Func)


class _Loader:
    """Compiles a decorated kernel the first time it is used."""

    def __init__(self, kernel, fn, piece, options):
        self.kref = weakref.ref(kernel)
        self.fn = fn
        self.piece = piece
        self.options = options
        self.lock = threading.Lock()

    def source(self):
        """(text, filename, first_line, globals) given to the compiler."""
        pieces, frozen = collect(self.fn, self.piece, _is_helper)
        text, filename, first = assemble(pieces)
        return text, filename, first, frozen

    def __call__(self):
        with self.lock:
            k = self.kref()
            if k is None or k._bound:
                return
            text, filename, first, frozen = self.source()
            module = _asc.Module(text, filename=filename, first_line=first,
                                 globals=frozen, **self.options)
            k._bind(module, self.fn.__name__)


def _constant_array(v):
    """A tuple of numbers (nested tuples of one length allowed) as the
    read-only numpy array a kernel indexes (`mask=(1, 0, 1)`); other
    values unchanged."""
    if not isinstance(v, tuple) or not v:
        return v
    import numpy as np
    try:
        a = np.array(v)
    except ValueError:          # ragged
        return v
    if a.dtype.kind not in "biufc":
        return v
    a.flags.writeable = False   # a tuple: the kernel may not store into it
    return a


def _function_defaults(fn):
    """{parameter: default} of a Python function (used for the arguments a
    call leaves out, as a passed argument would be)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return {}
    return {n: _constant_array(p.default) for n, p in sig.parameters.items()
            if p.default is not inspect.Parameter.empty}


def _text_defaults(text, name):
    """{parameter: default} of kernel `name` in kernel text: literal
    defaults (numbers, bools, negated numbers); others are left to the
    caller."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            a = node.args
            out = {}
            pos = a.posonlyargs + a.args
            for p, d in zip(pos[len(pos) - len(a.defaults):], a.defaults):
                try:
                    out[p.arg] = _constant_array(ast.literal_eval(d))
                except ValueError:
                    pass
            for p, d in zip(a.kwonlyargs, a.kw_defaults):
                if d is not None:
                    try:
                        out[p.arg] = _constant_array(ast.literal_eval(d))
                    except ValueError:
                        pass
            return out
    return {}


def _annotate_lines(lines, names, fname=None):
    """lines (a function's or a module's text) with each unannotated
    parameter in names of function fname (the first function when None)
    annotated `asc.Tensor` (an array of the dtype and rank passed).  Only
    the def line changes, so every other line keeps its place in
    messages."""
    tree = ast.parse("\n".join(lines))
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef)
                and (fname is None or n.name == fname))
    a = node.args
    lines = list(lines)
    edits = [(p.lineno - 1, p.end_col_offset)
             for p in a.posonlyargs + a.args + a.kwonlyargs
             if p.arg in names and p.annotation is None]
    for row, col in sorted(edits, reverse=True):
        b = lines[row].encode()         # ast columns count UTF-8 bytes
        lines[row] = (b[:col] + b": asc.Tensor" + b[col:]).decode()
    return lines


def _annotate_arrays(piece, names):
    """piece with each unannotated parameter in names annotated
    `asc.Tensor` (_annotate_lines)."""
    return Piece(piece.name, piece.filename, piece.first,
                 _annotate_lines(piece.lines, names),
                 piece.indent, piece.code)


class _Variants:
    """The kernels compiled from one decorated function: the parameter
    table says which unannotated parameters the text uses as numbers, and
    a call that passes an array for one of them runs the variant whose
    text takes it as an array (numba's rule: the argument's type wins).
    One variant per set of such parameters, compiled on first use."""

    def __init__(self, fn, piece, options):
        self.fn = fn
        self.piece = piece
        self.options = options
        self.lock = threading.Lock()
        self.made = {}      # frozenset of names (not empty) -> Kernel

    def get(self, arrays):
        with self.lock:
            k = self.made.get(arrays)
            if k is None:
                piece = _annotate_arrays(self.piece, arrays)
                k = _new_kernel(self.fn, piece, self.options, self, arrays)
                self.made[arrays] = k
            return k


def _new_kernel(fn, piece, options, variants, arrays):
    k = _asc.Kernel()
    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(k, attr, getattr(fn, attr, None))
    k.__wrapped__ = k.py_func = fn
    k._defaults = _function_defaults(fn)
    k.options = dict(options)
    loader = _Loader(k, fn, piece, options)
    k._load = loader
    k._source = loader.source

    # weak references: the base kernel holds its variants (_variants),
    # and no kernel holds itself
    kref = weakref.ref(k)
    vref = weakref.ref(variants)

    def variant(i):
        """The kernel that also takes parameter i as an array."""
        return vref().get(arrays | {kref().params[i]["name"]})

    k._variant = variant
    return k


def _make_kernel(fn, options):
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise TypeError(f"@asc.kernel decorates a Python function, got {fn!r}")
    piece = function_piece(fn, "@asc.kernel")
    variants = _Variants(fn, piece, options)
    k = _new_kernel(fn, piece, options, variants, frozenset())
    k._variants = variants
    return k


def kernel(fn=None, *, debug=False, boundscheck=False, opt_level=0,
           fastmath=False):
    """Decorate a Python function as a kernel.

    ``kern(*args)`` runs one block on the default stream and waits;
    ``kern[blocks](*args)`` / ``kern[blocks, stream](*args)`` queue
    `blocks` blocks and return at once.  Blocks are SPMD: a kernel that
    never reads asc.get_block_idx() / get_block_num() runs once, with the
    cores those blocks would have had (docs/python.md).  debug keeps asserts and builds
    with -O1 -g; boundscheck raises IndexError on out-of-bounds access.
    fastmath: True, or a set of numba's flag names ("contract", "reassoc",
    "nnan", "ninf", "nsz", "arcp", "afn"), lets the compiler change
    floating-point results in the ways docs/fastmath.md lists; the default
    (False) is deterministic.
    """
    options = {"debug": bool(debug), "boundscheck": bool(boundscheck),
               "opt_level": int(opt_level),
               "fastmath": fastmath_mask(fastmath)}
    if fn is None:
        return lambda f: _make_kernel(f, options)
    return _make_kernel(fn, options)


jit = kernel


def func(fn=None, *, fastmath=None):
    """Decorate a helper that kernels may call.  fastmath= (default: the
    calling kernel's) caps the floating-point mode of the kernels that call
    it (docs/fastmath.md)."""
    if fn is None:
        if fastmath is not None:
            fastmath_mask(fastmath)     # a bad flag fails at the decorator
        return lambda f: Func(f, fastmath)
    return Func(fn, fastmath)


_KERNEL_DEF = re.compile(
    r"^[ \t]*@[ \t]*asc[ \t]*\.[ \t]*(?:kernel|jit)\b[^\n]*\n"
    r"(?:[ \t]*@[^\n]*\n|[ \t]*\n)*[ \t]*def[ \t]+([A-Za-z_]\w*)", re.M)


class _TextVariants:
    """The variants of the kernels of asc.compile text: a call that passes
    an array for a parameter the text reads as a number runs the kernel
    recompiled from the text with that parameter annotated `asc.Tensor`,
    as decorated kernels do (_Variants; docs/arrays.md, "Parameters typed
    by what is passed").  One per (kernel, set of such parameters),
    compiled on first use."""

    def __init__(self, text, filename, options):
        self.text = text
        self.filename = filename
        self.options = options
        self.lock = threading.Lock()
        self.made = {}      # (name, frozenset of names) -> Kernel

    def attach(self, k, name, arrays):
        # weak: the base kernel holds this object, which holds the variants
        vref = weakref.ref(self)
        kref = weakref.ref(k)

        def variant(i):
            return vref().get(name, arrays | {kref().params[i]["name"]})

        k._variant = variant

    def get(self, name, arrays):
        with self.lock:
            k = self.made.get((name, arrays))
            if k is None:
                lines = _annotate_lines(self.text.split("\n"), arrays, name)
                module = _asc.Module("\n".join(lines), filename=self.filename,
                                     **self.options)
                k = module.get_kernel(name)
                k.__name__ = k.__qualname__ = name
                k._defaults = functools.partial(_text_defaults, self.text, name)
                self.attach(k, name, arrays)
                self.made[(name, arrays)] = k
            return k


class CompiledModule:
    """Kernels compiled from text or a file by asc.compile(); each kernel is
    an attribute."""

    def __init__(self, module, text, filename, options=None):
        self._module = module
        self._names = tuple(dict.fromkeys(_KERNEL_DEF.findall(text)))
        self._text = text
        self.filename = filename
        self._kernels = {}
        self._variants = (_TextVariants(text, filename, options)
                          if options is not None else None)

    def __getitem__(self, name):
        """The kernel `name` (any name, including ones starting with _)."""
        k = self._kernels.get(name)
        if k is None:
            try:
                k = self._module.get_kernel(name)
            except AttributeError:
                raise KeyError(name) from None
            k.__name__ = k.__qualname__ = name
            # parsed when a call leaves a parameter out (_asc_args.c)
            k._defaults = functools.partial(_text_defaults, self._text, name)
            self._kernels[name] = k
            if self._variants is not None:
                k._text_variants = self._variants   # kept while k lives
                self._variants.attach(k, name, frozenset())
        return k

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"no kernel {name!r} in {self.filename}") from None

    @property
    def kernel_names(self):
        """Names of the @asc.kernel / @asc.jit functions in the text."""
        return self._names

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._names))

    def __repr__(self):
        return f"<asc.CompiledModule {self.filename!r} kernels={list(self._names)}>"


def load_module(path):
    """Load a module compiled ahead of time (``ascc --emit=so``, or any
    shared object that follows the kernel ABI).  Kernels are attributes."""
    path = os.fspath(path)
    module = _asc.Module(path, compiled=True)
    return CompiledModule(module, "", path)


# As ascModuleLoadPythonFile reads (docs/files.md): a regular file of at
# most 256 MiB; a FIFO would block, a device be read forever.
_KERNEL_FILE_MAX = 256 << 20


def _read_kernel_file(path):
    try:
        # O_NONBLOCK: opening a FIFO would wait for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise FileNotFoundError(f"asc.compile: no such kernel file: {path!r}") from None
    st = os.fstat(fd)
    why = ("it is a directory" if stat.S_ISDIR(st.st_mode)
           else "not a regular file" if not stat.S_ISREG(st.st_mode)
           else "larger than 256 MiB" if st.st_size > _KERNEL_FILE_MAX
           else None)
    if why is not None:
        os.close(fd)
        raise ValueError(f"asc.compile: cannot read {path!r}: {why}")
    with open(fd, encoding="utf-8") as f:
        text = f.read(_KERNEL_FILE_MAX + 1)   # it may have grown
    if len(text) > _KERNEL_FILE_MAX:
        raise ValueError(f"asc.compile: cannot read {path!r}: larger than 256 MiB")
    return text


def compile(source, *, filename=None, globals=None, debug=False,
            boundscheck=False, opt_level=0, fastmath=False):
    """Compile kernels from Python text, or from a file that is never
    imported (so it may use the kernel language's extensions, such as
    assignments in lambdas).

    source: the text, or a path (str ending in .py without newlines, or an
    os.PathLike).  globals: name -> int/float/bool values frozen into the
    kernels (part of the cache key).  fastmath: as @asc.kernel's, for the
    kernels whose decorator in the text does not say fastmath=.  Returns a
    CompiledModule.
    """
    options = {"globals": dict(globals) if globals else None,
               "debug": bool(debug), "boundscheck": bool(boundscheck),
               "opt_level": int(opt_level),
               "fastmath": fastmath_mask(fastmath)}
    if isinstance(source, os.PathLike) or (
            isinstance(source, str) and "\n" not in source
            and (source.endswith(".py") or os.path.isfile(source))):
        path = os.fspath(source)
        text = _read_kernel_file(path)
        module = _asc.Module(path, filename=filename, is_path=True, **options)
        return CompiledModule(module, text, filename or path, options)
    if not isinstance(source, str):
        raise TypeError(f"asc.compile() takes kernel text or a path, got {type(source).__name__}")
    name = filename or "<string>"
    module = _asc.Module(source, filename=name, **options)
    return CompiledModule(module, source, name, options)
