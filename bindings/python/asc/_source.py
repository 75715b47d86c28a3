"""The text and frozen globals the compiler gets for a decorated kernel.

The compiler reads source text, never bytecode.  For a kernel it gets the
kernel's own lines and those of every @asc.func helper it calls, each at
its real line of the real file (the gaps are blank lines), so diagnostics
and kernel exceptions point at the file the user edits.  Decorators are
replaced by the canonical ``@asc.kernel`` / ``@asc.func`` line so that
aliases (``from asc import kernel``) and options do not matter.  The
compiler learns what `asc`, `math` and numpy's alias name from import
statements, which it needs before the functions: the file's own imports of
asc and math (and ``import numpy [as np]``) are kept
at their real lines, and ``import asc`` / ``import math`` go on free lines
above the first function, or at the end of the last import line when no
line above it is free (a decorator right under the imports); with no line
above at all, the compiler's own default binds them.
"""
import ast
import inspect
import linecache
import numbers
import textwrap
import types

from ._errors import SourceError, register_dedent

_REPL_HINT = (
    "asc reads a kernel's source text with inspect.getsource(), which has no "
    "text for functions typed into the plain Python REPL or exec()'d from a "
    "string.  Put the kernel in a file, use IPython/Jupyter (cells have "
    "source), or pass the text to asc.compile(text).")


class Piece:
    """One function's text as the compiler will see it."""

    __slots__ = ("name", "filename", "first", "lines", "indent", "code")

    def __init__(self, name, filename, first, lines, indent, code):
        self.name = name
        self.filename = filename
        self.first = first      # real line number of lines[0]
        self.lines = lines      # without newlines
        self.indent = indent    # columns removed by dedenting
        self.code = code

    @property
    def last(self):
        return self.first + len(self.lines) - 1


def function_piece(fn, decorator):
    """Piece for fn with its decorators replaced by `decorator`."""
    try:
        raw, first = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    except (OSError, TypeError) as exc:
        raise SourceError(f"cannot read the source of {fn.__qualname__!r}: "
                          f"{exc}.  {_REPL_HINT}") from None
    text = "".join(raw)
    dedented = textwrap.dedent(text)
    indent = 0
    for a, b in zip(raw, dedented.splitlines(True)):
        if b.strip():
            indent = len(a) - len(b)
            break
    try:
        tree = ast.parse(dedented)
    except SyntaxError as exc:
        raise SourceError(f"cannot parse the source of {fn.__qualname__!r} "
                          f"({filename}:{first}): {exc}") from None
    node = next((n for n in tree.body
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if node is None:
        raise SourceError(f"no function definition in the source of {fn.__qualname__!r}; "
                          "decorate a def statement")
    lines = dedented.splitlines()
    def_index = node.lineno - 1      # 0-based index of the `def` line
    if def_index == 0:
        # Called as asc.kernel(fn): no decorator line to reuse.
        lines.insert(0, decorator)
        first -= 1
    else:
        for i in range(def_index):
            lines[i] = ""
        lines[def_index - 1] = decorator
    register_dedent(filename, first, first + len(lines) - 1, indent)
    return Piece(fn.__name__, filename, first, lines, indent, fn.__code__)


def _names(code):
    """Global names a code object and its nested functions/lambdas use."""
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names(c)
    return out


def _is_constant(v):
    if isinstance(v, (bool, int, float)):
        return True
    # numpy scalars: typed constants
    return isinstance(v, numbers.Number) and hasattr(v, "dtype") and getattr(v, "ndim", 1) == 0


def collect(fn, piece, is_helper):
    """(pieces, globals) for a kernel: the helpers it calls (transitively)
    and the int/float/bool values of the globals and closure variables its
    text refers to, frozen now."""
    pieces = [piece]
    frozen = {}
    seen = {id(fn)}
    todo = [fn]
    while todo:
        f = todo.pop()
        g = getattr(f, "__globals__", {})
        for name in sorted(_names(f.__code__)):
            if name not in g:
                continue
            v = g[name]
            if is_helper(v):
                target = v.py_func
                if id(target) not in seen:
                    seen.add(id(target))
                    pieces.append(v.piece)
                    todo.append(target)
            elif _is_constant(v) and name not in frozen:
                frozen[name] = v
        if f.__closure__:
            for name, cell in zip(f.__code__.co_freevars, f.__closure__):
                try:
                    v = cell.cell_contents
                except ValueError:
                    continue
                if _is_constant(v) and name not in frozen:
                    frozen[name] = v
    return pieces, frozen


_KERNEL_MODULES = ("asc", "pyasc", "math", "cmath")


def module_imports(filename):
    """{line: (text, bound)} for the top-level imports of asc / math in
    filename, reduced to those modules (``import numpy as np, math`` ->
    ``import math``); bound: the module names the import binds."""
    source = "".join(linecache.getlines(filename))
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    out = {}

    def add(line, text, bound):
        # `import asc; import numpy as np`: one line, both kept
        if line in out:
            text = out[line][0] + "; " + text
            bound = out[line][1] | bound
        out[line] = (text, bound)

    for node in tree.body:
        if isinstance(node, ast.Import):
            names = [a for a in node.names
                     if a.name in _KERNEL_MODULES or a.name == "numpy"]
            if names:
                bound = {a.name for a in names
                         if a.name in ("asc", "math") and a.asname in (None, a.name)}
                add(node.lineno, ast.unparse(ast.Import(names=names)), bound)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 \
                and (node.module in _KERNEL_MODULES or node.module == "numpy") \
                and all(a.name != "*" for a in node.names):
            # `from numpy import sqrt`: numpy's sqrt (docs/arrays.md)
            add(node.lineno, ast.unparse(node), set())
    return out


def assemble(pieces):
    """(text, filename, first_line) for the compiler: the file's asc/math
    imports and the pieces at their real lines; helpers from other files
    follow at the end (their line numbers are then approximate)."""
    main = pieces[0]
    same = sorted((p for p in pieces if p.filename == main.filename),
                  key=lambda p: p.first)
    other = [p for p in pieces if p.filename != main.filename]
    start = same[0].first
    found = {ln: v for ln, v in module_imports(main.filename).items() if ln < start}
    imports = {ln: text for ln, (text, _) in found.items()}
    bound = set().union(*(b for _, b in found.values()))
    extra = [f"import {m}" for m in ("asc", "math") if m not in bound]
    free = [ln for ln in range(start - 1, 0, -1) if ln not in imports]
    for text, ln in zip(extra, free):
        imports[ln] = text
    rest = extra[len(free):]
    if rest and imports:
        # No free line above (the decorator right under the imports): the
        # rest join the last import line, so no line moves.
        last = max(imports)
        imports[last] = "; ".join([imports[last]] + rest)
    # With no line at all above the kernel (a notebook cell that starts
    # with the decorator) they are left out: the compiler binds asc and
    # math itself when no import does (docs/frontend.md).
    out = []
    first = min(imports) if imports else start
    line = first
    for ln in sorted(imports):
        out.extend([""] * (ln - line))
        out.append(imports[ln])
        line = ln + 1
    last_end = line - 1
    for p in same:
        if p.first <= last_end:      # nested inside an earlier piece
            continue
        out.extend([""] * (p.first - line))
        out.extend(p.lines)
        line = p.first + len(p.lines)
        last_end = p.last
    for p in other:
        out.append("")
        out.extend(p.lines)
    return "\n".join(out) + "\n", main.filename, max(1, first)
