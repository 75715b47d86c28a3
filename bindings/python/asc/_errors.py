"""Exceptions raised by asc, and the factory the C extension asks for them.

libasc reports an error code and a message; the factory turns them into
the Python exception a user expects: compile diagnostics into CompileError
(a SyntaxError, so tracebacks show the line and caret), a kernel's uncaught
exception into the builtin class it raised, allocation failure into a
MemoryError, and so on.  Every class below also derives from asc.Error.
"""
import builtins
import linecache
import re

from . import _asc

Error = _asc.Error


class CompileError(Error, SyntaxError):
    """A kernel failed to compile.

    ``filename``, ``lineno`` and ``offset`` locate the first diagnostic in
    the real source file; ``text`` is that source line; the message holds
    every diagnostic with its caret line.  ``diagnostics`` lists
    (filename, lineno, offset, message) for each one.
    """

    def __str__(self):
        # The diagnostics already say file:line:col; SyntaxError would add
        # "(file, line N)" after the caret line.
        return str(self.msg)


class OutOfMemoryError(Error, MemoryError):
    """libasc could not allocate memory."""


class InvalidValueError(Error, ValueError):
    """An argument libasc rejected."""


class InvalidHandleError(Error):
    """A stream, event, module or kernel that was destroyed or never valid."""


class InvalidKernelError(Error, AttributeError):
    """No kernel of that name in the module."""


class FileNotFoundError_(Error, FileNotFoundError):
    """A kernel file that does not exist."""


class KernelOnlyError(Error, RuntimeError):
    """A kernel-language construct was called by the Python interpreter."""


class CancelledError(Error):
    """The stream's work was cancelled (Stream.cancel, ascStreamCancel)."""


class LaunchTimeoutError(Error, TimeoutError):
    """A kernel ran past its stream's timeout (ASC_KERNEL_TIMEOUT_MS)."""


class SourceError(Error, OSError):
    """The source text of a kernel could not be found."""


for _cls in (CompileError, OutOfMemoryError, InvalidValueError,
             InvalidHandleError, InvalidKernelError, FileNotFoundError_,
             KernelOnlyError, SourceError):
    _cls.__module__ = "asc"
FileNotFoundError_.__name__ = FileNotFoundError_.__qualname__ = "FileNotFoundError"

_BY_NAME = {
    "ascErrorOutOfMemory": OutOfMemoryError,
    "ascErrorInvalidValue": InvalidValueError,
    "ascErrorInvalidHandle": InvalidHandleError,
    "ascErrorInvalidKernel": InvalidKernelError,
    "ascErrorFileNotFound": FileNotFoundError_,
    "ascErrorCancelled": CancelledError,
    "ascErrorLaunchTimeout": LaunchTimeoutError,
}

KERNEL_EXCEPTIONS = ("ValueError", "IndexError", "ZeroDivisionError",
                     "AssertionError", "RuntimeError", "OverflowError",
                     "ArithmeticError", "TypeError", "MemoryError",
                     "Exception")

_DIAG = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.*)$")
_KEXC = re.compile(r"^(?P<file>.*?):(?P<line>\d+): kernel '(?P<kernel>[^']*)' "
                   r"raised (?P<cls>\w+): ?(?P<msg>.*)$", re.S)

# filename -> [(first_line, last_line, columns removed)] for kernels whose
# text was dedented before compilation (methods, nested functions): their
# diagnostics' columns are shifted back to the real file.
_dedented = {}


def register_dedent(filename, first, last, indent):
    if indent:
        _dedented.setdefault(filename, []).append((first, last, indent))


def _real_offset(filename, lineno, offset):
    for first, last, indent in _dedented.get(filename, ()):
        if first <= lineno <= last:
            return offset + indent
    return offset


def _compile_error(message):
    message = message.rstrip("\n")
    diags = []
    lines = message.split("\n")
    for i, line in enumerate(lines):
        m = _DIAG.match(line)
        if m:
            diags.append((m["file"], int(m["line"]), int(m["col"]), m["msg"]))
    if not diags:
        err = CompileError(message)
        err.diagnostics = []
        err.code = _asc.ascErrorCompile
        return err
    filename, lineno, col, _ = diags[0]
    offset = _real_offset(filename, lineno, col)
    text = linecache.getline(filename, lineno) or None
    if text is None and len(lines) > 1 and not _DIAG.match(lines[1]):
        text = lines[1].strip() or None
        offset = col
    err = CompileError(message, (filename, lineno, offset, text))
    err.diagnostics = [(f, ln, _real_offset(f, ln, c), msg) for f, ln, c, msg in diags]
    err.code = _asc.ascErrorCompile
    return err


def _kernel_exception(message):
    first = message.strip()
    m = _KEXC.match(first)
    if not m:
        err = Error(message)
        err.code = _asc.ascErrorKernelException
        return err
    cls = getattr(builtins, m["cls"], None) if m["cls"] in KERNEL_EXCEPTIONS else None
    if m["cls"] == "LinAlgError":
        # np.linalg's error, a ValueError (numpy is there: the kernel ran
        # numpy code)
        import numpy
        cls = numpy.linalg.LinAlgError
    if cls is None:
        cls = Error
    err = cls(first)
    err.kernel = m["kernel"]
    err.filename = m["file"]
    err.lineno = int(m["line"])
    err.kernel_message = m["msg"]
    return err


def from_code(code, name, message):
    """Called by asc._asc for every failing libasc call."""
    if code == _asc.ascErrorCompile:
        return _compile_error(message)
    if code == _asc.ascErrorKernelException:
        return _kernel_exception(message)
    cls = _BY_NAME.get(name, Error)
    err = cls(message)
    err.code = code
    err.name = name
    return err
