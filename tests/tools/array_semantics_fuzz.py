#!/usr/bin/env python3
"""numpy-differential fuzzer for the semantics of array code in kernels:
reductions of broadcast expressions, chained slices, dtype mixes.

Where tests/tools/array_fuzz.py writes statements into an `out` array
over float32/float64/int32/int64, this generator writes kernels that
*return* what they compute, so the dtype and shape of the result are
compared too:

    @asc.kernel
    def k_7(a, b):
        v0 = a[1:][::-2]
        return np.var(np.where(v0 > b, v0, b * 2), axis=-2, keepdims=True)

Each kernel is one of these forms:

* a reduction with `axis=` (sum, prod, mean, min, max, argmin, argmax,
  any, all, var, std with ddof; method or np. form; negative axes;
  keepdims) of an expression whose operands broadcast against each other
  on either side (`(a + b).sum(axis=1)` with `a` (3, 1) or (1, 3)), ranks
  1 to 4, sometimes combined with a further operand after the reduction;
* a full reduction (no axis) of such an expression;
* an elementwise expression alone (with keepdims reductions inside);
* np.cumsum of a view or of an expression (axis None or a constant);
* now and then an expression numpy refuses (operands that do not
  broadcast, min or argmax of nothing);

over operands that are chained views (`a[2:][::-1]`, `a[::-2, 1:][:, ::3]`,
a leading integer index, steps of +-(2**63 - 1) and -2**63 on axes of
one element) of arguments of the dtypes bool, int8 .. int64, uint8 ..
uint64, float16, float32, float64, complex64 and complex128, some passed
as strided, reversed or Fortran-order views; with `+ - * / // % ** & | ^
<< >>`, comparisons, unary `- ~`, np.abs, np.maximum, np.minimum,
np.where, np.clip, np.fmod, and Python literals (ints out of the
array's range too).

The reference is the same function run by CPython on numpy.  A case
matches when:

* numpy returns: the kernel returns the same shape and dtype, and the
  same values: bit for bit for integers and bools, and for elementwise
  results and min, max, argmin, argmax, any and all of expressions
  without division or powers (`x ** 0.5` is SLEEF's pow, within 1 ulp:
  docs/vecmath.md); otherwise within `(nterms + 8) * eps` relative and
  `(nterms + 8) * eps * S` absolute, where eps is that of the least
  precise float among the result and the arguments (of a complex
  dtype's parts), nterms is the number of elements each result element
  folds (1 for elementwise results) and S is max(1, the largest
  |result|, nterms times the largest |element folded|, its square).
  numpy sums float16 in float16 along most axes and pairwise elsewhere,
  libasc in float64 in C order (docs/arrays.md), so float sums agree
  only to that bound;
* numpy raises: the kernel raises an exception of that class (compile
  errors are counted apart, "numpy raises, asc rejects when compiling").

What libasc does differently by design is not generated: operations
whose type differs (JAX's lattice, docs/types.md: an integer with
float16/float32/complex64; the generator reads the promotion table of
that page and keeps only operations whose libasc type is numpy's), NaN
reaching np.maximum/np.minimum (max/min's NaN rule, docs/arrays.md) and
integer division by zero (ZeroDivisionError in kernels).  A float16,
float32 or complex64 sum/prod/mean/var/std that numpy's narrow
arithmetic overflows to inf or nan where libasc's float64 accumulation
stays finite is counted as a "documented difference".

Kernels are batched: --batch N cases go into one module that ascc
compiles ahead of time in one C compilation (a kernel that does not
compile is taken out by the line of its diagnostic and the rest compiled
again).  The compiled module runs in a child process, so a crash is
reported as that case's failure and the run goes on.

    python3 tests/tools/array_semantics_fuzz.py --seed 1 --count 500
    python3 tests/tools/array_semantics_fuzz.py --seed 3 --count 10000 --batch 250
    python3 tests/tools/array_semantics_fuzz.py --seed 3 --count 5 --show
    python3 tests/tools/array_semantics_fuzz.py --seed 3 --count 500 --repro  # inputs too

Exit status 1 when a case mismatched, crashed or hit an internal compiler
error, other than those of TEMPORARY_SKIPS.
"""
import argparse
import collections
import os
import pickle
import random
import re
import select
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
warnings.filterwarnings("ignore", category=RuntimeWarning)   # numpy's, on empty means
HEADER = "import numpy as np\nimport asc\n\n\n"
ASCC_MAX_SIGNATURES = 256   # tools/ascc/emit.h

# ---- known differences, kept out of the mismatch count ---------------------

# Differences another change is fixing now.  Each entry: a name, what it
# is, and a predicate over (case, numpy outcome).  A case that mismatches
# and matches one is counted under that name ("deferred"), not as a
# mismatch.  TEMPORARY: remove each entry once its fix is merged.
TEMPORARY_SKIPS = [
    ("complex_nonfinite",
     "complex arithmetic reaching inf or nan: C99's Annex G keeps an overflowed product "
     "infinite where numpy (and Python) give nan; the family of complex division by inf",
     lambda c, want: not isinstance(want, Raised) and np.asarray(want).dtype.kind == "c"
     and not np.isfinite(want).all()),
]


class Raised:
    """numpy's (or the kernel's) exception: its class and message."""

    def __init__(self, exc):
        self.name = type(exc).__name__
        self.msg = str(exc)

    def __repr__(self):
        return f"{self.name}: {self.msg[:120]}"


# ---- dtypes and libasc's promotion table ------------------------------------

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "int64", "uint32",
          "uint64", "float16", "float32", "float64", "complex64", "complex128"]
_SHORT = {"bool": "bool", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
          "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "float16": "f16",
          "float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128"}
_LONG = {v: k for k, v in _SHORT.items()}


def _asc_table():
    """libasc's promotion table (row op column), read from docs/types.md."""
    text = (ROOT / "docs" / "types.md").read_text()
    body = text.split("<!-- promotion-table-begin -->")[1].split("<!-- promotion-table-end -->")[0]
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")]
            for ln in body.strip().splitlines() if ln.startswith("|") and "---" not in ln]
    cols = rows[0][1:]
    return {(r[0], cols[j]): r[1 + j] for r in rows[1:] for j in range(len(cols))}


ASC_TABLE = _asc_table()


_FLOATS = {"bf16", "f16", "f32", "f64", "c64", "c128", "f*", "c*"}
_ARITH = ("+", "-", "*", "/", "//", "%", "**")


def strong(t):
    """A weak type's default (Python's), a strong one unchanged."""
    return {"i*": "i64", "f*": "f64", "c*": "c128"}.get(t, t)


def asc_type(op, x, y, scalar):
    """libasc's type of x op y (docs/types.md), as a row of its table
    ('i32', 'f*' ...).  A whole-array result is concrete (weak types take
    their defaults); a scalar one may stay weak, and the arguments a
    kernel reads as numbers are 0-d arrays."""
    t = ASC_TABLE[(x, y)]
    if op == "/" and t not in _FLOATS:
        # a bool scalar divides as Python's bools do: a Python float
        t = "f*" if t in ("i*", "bool") else "f64"
    elif op in _ARITH and t == "bool":
        t = "i*"                    # True + True == 2
    return t if scalar else strong(t)


def kind(dt):
    return np.dtype(dt).kind


# ---- slices -----------------------------------------------------------------

BIG_STEPS = ["9223372036854775807", "-9223372036854775807", "-9223372036854775808",
             "2**63 - 1", "-(2**63 - 1)", "-2**63"]


def _slice_text(rng, m, want):
    """A slice text s such that len(range(m)[s]) == want, or None."""
    if want <= 1 and rng.random() < 0.15:
        step_txt = rng.choice(BIG_STEPS)
    else:
        step_txt = str(rng.choice([1, 1, 1, -1, -1, 2, -2, 3, -3]))
    step = eval(step_txt)                                 # noqa: S307 - our own text
    for _ in range(60):
        def bound():
            r = rng.random()
            if r < 0.35:
                return None
            if r < 0.5:
                return rng.randint(-m - 3, m + 3)         # out of range: clipped
            v = rng.randint(0, m)
            return v - m if rng.random() < 0.4 else v
        lo, hi = bound(), bound()
        if len(range(m)[slice(lo, hi, step)]) == want:
            txt = ("" if lo is None else str(lo)) + ":" + ("" if hi is None else str(hi))
            if step_txt != "1" or rng.random() < 0.2:
                txt += ":" + step_txt
            return txt
    return None


def dim_chain(rng, n, depth):
    """(base length, [slice text per level]) whose composition has length n."""
    texts = []
    for _ in range(depth):
        while True:
            step = rng.choice([1, 1, 2, 3])
            m = (n - 1) * step + 1 + rng.randint(0, 2) if n > 0 else rng.randint(0, 3)
            t = _slice_text(rng, m, n)
            if t is not None:
                break
        texts.append(t)
        n = m
    return n, texts[::-1]


class View:
    """How one argument is read: its base shape and the index text that
    makes a view of the wanted shape (chained, possibly a leading integer)."""

    def __init__(self, rng, shape, sliced):
        self.shape = tuple(shape)
        depth = rng.choice([1, 1, 1, 2, 3]) if sliced else 0
        base, per_axis = [], []
        for n in shape:
            L, texts = dim_chain(rng, n, depth)
            base.append(L)
            per_axis.append(texts)
        levels = []
        for lv in range(depth):
            parts = [per_axis[k][lv] for k in range(len(shape))]
            while parts and parts[-1] == ":" and rng.random() < 0.5:
                parts.pop()                        # fewer indices than axes
            levels.append(parts)
        self.lead = None
        if sliced and rng.random() < 0.15:        # a leading integer index
            L = rng.randint(1, 3)
            i = rng.randint(0, L - 1)
            base.insert(0, L)
            self.lead = str(i - L if rng.random() < 0.5 else i)
            if levels:
                levels[0].insert(0, self.lead)
            else:
                levels.append([self.lead])
        self.base = tuple(base)
        self.index = "".join("[" + ", ".join(p) + "]" if p else "[...]" for p in levels)
        got = eval("x" + self.index, {"x": np.empty(self.base)}).shape   # noqa: S307
        assert got == self.shape, (self.base, self.index, got, self.shape)


# ---- expressions -------------------------------------------------------------

class Node:
    """An expression: its text, its numpy value for the case's arguments (a
    Raised when numpy refuses it), and the TEMPORARY_SKIPS tags it needs."""

    def __init__(self, text, val, kids=(), nodiv=True, tags=(), t=None):
        self.text, self.kids = text, kids
        bad = [k.val for k in kids if isinstance(k.val, Raised)]
        self.val = bad[0] if bad else val
        # libasc's type of it: given, or numpy's dtype (what the arguments,
        # reductions, np.abs of arrays and np.cumsum give)
        self.t = t if t is not None else _SHORT[self.dtype]
        # no division or power in it: its float values are exact in both
        self.nodiv = nodiv and all(k.nodiv for k in kids)
        self.tags = set(tags).union(*(k.tags for k in kids))
        self.red = None
        ints = [k.dtype for k in kids if not isinstance(k, Weak) and kind(k.dtype) in "iu"]
        for k in kids:
            if isinstance(k, Weak) and type(k.val) is int and any(
                    not np.iinfo(d).min <= k.val <= np.iinfo(d).max for d in ints):
                self.tags.add("py_int_out_of_range")

    @property
    def dtype(self):
        if isinstance(self.val, Raised):
            return "float64"
        return np.asarray(self.val).dtype.name

    @property
    def ndim(self):
        return 0 if isinstance(self.val, Raised) else np.ndim(self.val)


class Weak(Node):
    """A Python literal (weak: its type comes from the other operand)."""

    def __init__(self, text, val, tags=()):
        super().__init__(text, val, tags=tags, t="bool" if isinstance(val, bool) else
                         "c*" if isinstance(val, complex) else
                         "f*" if isinstance(val, float) else "i*")



class Reject(Exception):
    """This subexpression is not wanted (a known difference); try another."""


def npeval(fn, kids=()):
    """fn() in numpy, or the Raised it raises (or a kid's)."""
    for k in kids:
        if isinstance(k.val, Raised):
            return k.val
    try:
        with np.errstate(all="ignore"):
            return fn()
    except Exception as e:   # noqa: BLE001 - numpy refuses: kept as the value
        return Raised(e)


def typed(op, x, y, val):
    """libasc's type of x op y with numpy value val; Reject when it is not
    numpy's dtype (a documented difference of the lattice)."""
    t = asc_type(op, x.t, y.t, np.ndim(val) == 0 if not isinstance(val, Raised) else True)
    if not isinstance(val, Raised) and _LONG[strong(t)] != np.asarray(val).dtype.name:
        raise Reject("promotion")
    return t


def _lit(v):
    t = repr(v)
    return f"({t})" if t.startswith("-") else t


class Gen:
    """Random expressions over the case's arguments."""

    def __init__(self, case, rng):
        self.c, self.rng = case, rng

    def leaf(self, shape=None, want=None):
        c, rng = self.c, self.rng
        names = [n for n in c.args if want is None or kind(c.dt[n]) in want]
        if shape is not None or not names or rng.random() < 0.3:
            return c.new_leaf(shape if shape is not None else c.operand_shape(), want)
        return c.use_leaf(rng.choice(names))

    def literal(self, like):
        rng = self.rng
        k = kind(like.dtype) if like is not None else "f"
        r = rng.random()
        if k in "iu" and r < 0.06:
            # a Python int outside the other operand's range
            info = np.iinfo(like.dtype)
            v = rng.choice([int(info.max) + 1, int(info.min) - 1, 300, -129, 70000, 2**40,
                            -2**63])
            if info.min <= v <= info.max:
                v = int(info.max) + 1
            return Weak(_lit(v), v, tags=["py_int_out_of_range"])
        if k == "b" and r < 0.3:
            v = rng.choice([True, False])
            return Weak(str(v), v)
        if k == "c" and r < 0.3:
            v = complex(rng.choice([0.5, -1.0, 2.0]), rng.choice([0.25, -1.5]))
            return Weak(f"({v.real!r}{v.imag:+}j)", v)
        if k in "fc" or r < 0.2:
            v = rng.choice([0.5, 1.5, -2.0, 3.0, 0.25, -0.0])
            return Weak(_lit(v), v)
        v = rng.choice([1, 2, 3, -1, -3, 5, 0])
        return Weak(_lit(v), v)

    def binop(self, op, x, y, tags=()):
        if op in _ARITH and all(kind(n.dtype) == "b" for n in (x, y)):
            tags = list(tags) + ["bool_arith"]     # numpy: bool + bool is bool
        elif op in _ARITH and \
                any(kind(n.dtype) == "b" and not isinstance(n, Weak) for n in (x, y)) and \
                any(isinstance(n, Weak) and type(n.val) is int for n in (x, y)):
            # numpy: a bool array with a Python int is int64; libasc: a
            # weak int, whose literal may then have to fit another dtype
            tags = list(tags) + ["bool_arith"]
        val = npeval(lambda: eval(f"x {op} y", {"x": x.val, "y": y.val}), (x, y))  # noqa: S307
        t = "bool" if op in ("<", "<=", ">", ">=", "==", "!=") else typed(op, x, y, val)
        return Node(f"({x.text} {op} {y.text})", val, (x, y),
                    nodiv=op not in ("/", "**", "//", "%"), tags=tags, t=t)

    def expr(self, depth, want=None):
        """An array-valued (or broadcast) expression; want: dtype kinds."""
        for _ in range(12):
            try:
                n = self._expr(depth, want)
            except Reject:
                continue
            # an expression numpy refuses is kept now and then: the kernel
            # must raise the same exception
            if isinstance(n.val, Raised) and self.rng.random() < 0.8:
                continue
            return n
        return self.leaf(want=want)

    def _expr(self, depth, want):
        rng = self.rng
        if depth <= 0 or rng.random() < 0.25:
            return self.leaf(want=want)
        form = rng.choice(["arith", "arith", "arith", "cmp", "bit", "unary", "where",
                           "clip", "fmod", "maxmin", "abs", "floordiv", "truediv",
                           "pow", "shift", "keepred"])
        sub = lambda w=None: self.expr(depth - 1, w)      # noqa: E731
        bools = lambda *ns: all(kind(n.dtype) == "b" for n in ns)   # noqa: E731
        if form == "arith":
            x = sub(want)
            y = self.literal(x) if rng.random() < 0.3 else sub(want)
            if rng.random() < 0.5:
                x, y = y, x
            if isinstance(x, Weak) and isinstance(y, Weak):
                raise Reject("two literals")
            op = rng.choice(["+", "-", "*"])
            return self.binop(op, x, y, tags=["bool_arith"] if bools(x, y) else ())
        if form == "cmp":
            x = sub()
            y = self.literal(x) if rng.random() < 0.3 else sub()
            ops = ["==", "!="] if "c" in (kind(x.dtype), kind(y.dtype)) else \
                ["<", "<=", ">", ">=", "==", "!="]
            n = self.binop(rng.choice(ops), x, y)
            if want is not None and "b" not in want:
                return self.binop(rng.choice(["+", "*"]), n, sub(want))
            return n
        if form == "bit":
            x, y = sub("biu"), sub("biu")
            if kind(x.dtype) not in "biu" or kind(y.dtype) not in "biu":
                raise Reject("bit")
            mix = "uint64" in (x.dtype, y.dtype) and "i" in (kind(x.dtype), kind(y.dtype))
            return self.binop(rng.choice(["&", "|", "^"]), x, y,
                              tags=["uint64_signed"] if mix else ())
        if form == "shift":
            x = sub("iu")
            if kind(x.dtype) not in "iu":
                raise Reject("shift")
            v = rng.randint(0, 3)
            return self.binop(rng.choice(["<<", ">>"]), x, Weak(str(v), v))
        if form == "unary":
            x = sub(want)
            if isinstance(x, Weak):
                raise Reject("literal")
            if kind(x.dtype) in "iub" and rng.random() < 0.4:
                return Node(f"(~{x.text})", npeval(lambda: ~x.val, (x,)), (x,),
                            tags=["bool_arith"] if bools(x) else (), t=x.t)
            return Node(f"(-{x.text})", npeval(lambda: -x.val, (x,)), (x,),
                        tags=["bool_arith"] if bools(x) else (), t=x.t)
        if form == "abs":
            x = sub(want)
            if isinstance(x, Weak):
                raise Reject("literal")
            # |z| of a complex z is hypot's, within an ulp of numpy's
            val = npeval(lambda: np.abs(x.val), (x,))
            t = {"c64": "f32", "c128": "f64", "c*": "f*"}.get(x.t, x.t)
            return Node(f"np.abs({x.text})", val, (x,), nodiv=kind(x.dtype) != "c",
                        tags=["bool_arith"] if bools(x) else (),
                        t=t if x.ndim == 0 else strong(t))
        if form == "where":
            cnd = sub("b")
            if kind(cnd.dtype) != "b":
                cnd = self.binop("!=", cnd, Weak("0", 0))
            x, y = sub(want), sub(want)
            if isinstance(x, Weak) and isinstance(y, Weak):
                raise Reject("two literals")
            val = npeval(lambda: np.where(cnd.val, x.val, y.val), (cnd, x, y))
            t = typed("where", x, y, val)
            return Node(f"np.where({cnd.text}, {x.text}, {y.text})", val, (cnd, x, y), t=t)
        if form == "clip":
            x = sub(want or "iuf")
            if kind(x.dtype) not in "iuf" or isinstance(x, Weak):
                raise Reject("clip")
            lo, hi = self.literal(x), self.literal(x)
            if not all(type(v.val) in (int, float) for v in (lo, hi)):
                raise Reject("clip")
            tags = ()
            if lo.val > hi.val:
                if rng.random() < 0.9:
                    lo, hi = hi, lo
                else:
                    tags = ["clip_lo_gt_hi"]
            val = npeval(lambda: np.clip(x.val, lo.val, hi.val), (x, lo, hi))
            scalar = isinstance(val, Raised) or np.ndim(val) == 0
            t = asc_type("clip", asc_type("clip", x.t, lo.t, scalar), hi.t, scalar)
            if not isinstance(val, Raised) and _LONG[strong(t)] != val.dtype.name:
                raise Reject("promotion")
            return Node(f"np.clip({x.text}, {lo.text}, {hi.text})", val, (x, lo, hi),
                        tags=tags, t=t)
        if form == "fmod":
            x = sub(want or "iuf")
            y = self.divisor(x)
            if {kind(x.dtype), kind(y.dtype)} & {"c", "b"}:
                raise Reject("fmod")
            ints = kind(x.dtype) in "iu" and kind(y.dtype) in "iu"
            val = npeval(lambda: np.fmod(x.val, y.val), (x, y))
            # numpy's fmod of integers keeps their promoted type, as
            # kernels do: the type of x % y
            t = typed("%" if ints else "/", x, y, val)
            return Node(f"np.fmod({x.text}, {y.text})", val, (x, y), nodiv=False,
                        tags=["fmod_int"] if ints else (), t=t)
        if form == "maxmin":
            x, y = sub(want), sub(want)
            if "c" in (kind(x.dtype), kind(y.dtype)):
                raise Reject("complex order")
            if isinstance(x, Weak) and isinstance(y, Weak):
                raise Reject("two literals")
            if any(not isinstance(n.val, Raised) and np.isnan(n.val).any() for n in (x, y)):
                # NaN: a documented difference (docs/arrays.md, numpy and
                # math names: np.maximum is max, which does not propagate it)
                raise Reject("nan")
            f = rng.choice(["maximum", "minimum"])
            val = npeval(lambda: getattr(np, f)(x.val, y.val), (x, y))
            t = typed("max", x, y, val)
            return Node(f"np.{f}({x.text}, {y.text})", val, (x, y),
                        tags=["bool_arith"] if bools(x, y) else (), t=t)
        if form in ("floordiv", "truediv"):
            x = sub(want)
            y = self.divisor(x)
            if form == "floordiv":
                if "c" in (kind(x.dtype), kind(y.dtype)):
                    raise Reject("complex //")
                return self.binop(rng.choice(["//", "%"]), x, y,
                                  tags=["bool_arith"] if bools(x, y) else ())
            return self.binop("/", x, y)
        if form == "pow":
            x = sub(want)
            if isinstance(x, Weak):
                raise Reject("literal")
            e = rng.choice([0, 1, 2, 3])
            if kind(x.dtype) in "fc" and rng.random() < 0.3:
                e = 0.5
                if kind(x.dtype) == "f" and not isinstance(x.val, Raised) and \
                        np.isneginf(x.val).any():
                    # not yet decided: numpy's power takes x ** 0.5 as
                    # sqrt (nan at -inf), a kernel as C's and Python's pow
                    # (inf); left out until it is
                    raise Reject("-inf ** 0.5")
            return self.binop("**", x, Weak(repr(e), e),
                              tags=["bool_arith"] if bools(x) else ())
        if form == "keepred":
            # a reduction with keepdims broadcast back against its operand
            x = sub(want or "iuf")
            if x.ndim == 0 or isinstance(x, Weak) or kind(x.dtype) not in "iuf":
                raise Reject("keepred")
            r = self.c.reduce_call(x, keep=True, kinds=["sum", "max", "min", "mean"])
            return self.binop(rng.choice(["-", "+"]), x, r)
        raise AssertionError(form)

    def divisor(self, x):
        """A divisor for x: an argument with no zero, or a non-zero literal."""
        rng = self.rng
        if rng.random() < 0.3:
            v = rng.choice([2, 3, -2, 4] if kind(x.dtype) in "iub" else [2.0, -0.5, 3.0])
            return Weak(_lit(v), v)
        c = self.c
        if len(c.args) >= MAX_ARGS:
            # no new argument: one made without zeros, else a literal
            # (integer division by zero raises in kernels, docs/arrays.md)
            names = [n for n in c.args if n in c.nonzero]
            if names and rng.random() < 0.7:
                return c.use_leaf(rng.choice(names))
            return Weak("3", 3)
        dt = x.dtype if kind(x.dtype) != "b" and rng.random() < 0.6 else c.pick_dtype()
        if kind(x.dtype) in "iu" and kind(dt) not in "iu":
            dt = rng.choice(["float64", "complex128"] if kind(dt) == "c" else ["float64"])
        return c.new_leaf(c.operand_shape(), None, dtype=dt, nonzero=True)


# ---- cases --------------------------------------------------------------------

REDUCTIONS = ["sum", "prod", "mean", "min", "max", "argmin", "argmax", "any", "all",
              "var", "std"]
POOLS = [
    # integers (and bool) with float64/complex128: libasc promotes as numpy
    ["bool", "int8", "uint8", "int16", "uint16", "int32", "int64", "uint32", "float64",
     "complex128"],
    # small floats with bool
    ["bool", "float16", "float32", "float64", "complex64"],
    ["int8", "uint16", "float16", "complex64", "bool"],
    ["float64", "float32", "int64"],
    ["uint64", "int64", "uint8", "bool", "float64"],
]
MAX_ARGS = 6
# and one case in 25 an expression numpy refuses ("raise")
FORMS = ["red_axis"] * 6 + ["red_axis_then"] * 2 + ["red_full", "elem", "elem"] + \
    ["cumsum"] * 2


class Case:
    def __init__(self, seed, index):
        rng = random.Random(seed * 1_000_003 + index)
        self.seed, self.index, self.rng = seed, index, rng
        self.name = f"k_{index}"
        self.pool = rng.choice(POOLS)
        r = rng.choice([1, 2, 2, 3, 3, 4])
        self.T = tuple(rng.choice([1, 2, 3, 4, 5]) if rng.random() > 0.04 else 0
                       for _ in range(r))
        self.args, self.dt, self.views, self.data = [], {}, {}, {}
        self.nonzero = set()
        self.stmts, self.strided = [], {}
        self.nterms, self.folded = 1, None
        self.exact = True
        self.wide_acc = False
        self.g = np.random.default_rng(seed * 7919 + index)
        gen = Gen(self, rng)
        self.form = form = rng.choice(FORMS) if rng.random() > 0.04 else "raise"
        if form == "cumsum":
            body = self.cumsum_expr(gen)
        elif form == "raise":
            body = self.raising(gen)
        elif form.startswith("red"):
            x = gen.expr(rng.randint(1, 3))
            if x.ndim == 0 or isinstance(x, Weak):
                x = gen.leaf(shape=self.T)
            if form == "red_full":
                body = self.reduce_call(x, keep=False, axis=None)
            else:
                body = self.reduce_call(x, keep=rng.random() < 0.3)
            if form == "red_axis_then" and not isinstance(body.val, Raised):
                y = gen.leaf(shape=self.operand_shape(np.shape(body.val)))
                try:
                    body = gen.binop(rng.choice(["+", "*", "-"]), body, y)
                except Reject:
                    pass
        else:
            body = gen.expr(rng.randint(1, 4))
            if isinstance(body, Weak):
                body = gen.leaf(shape=self.T)
            self.exact = body.nodiv
        self.body = body
        self.tags = body.tags
        self.prune()

    def prune(self):
        """Drops the arguments and view names the final text does not use
        (made for a subexpression that was then rejected): an unused
        parameter would be typed as a number."""
        used = lambda name, text: re.search(rf"\b{name}\b", text)   # noqa: E731
        self.stmts = [st for st in self.stmts
                      if used(st.split(" = ")[0], self.body.text)]
        text = self.body.text + "\n".join(self.stmts)
        self.args = [n for n in self.args if used(n, text)]

    # the arguments
    def pick_dtype(self, want=None):
        cands = [d for d in self.pool if want is None or kind(d) in want]
        return self.rng.choice(cands or self.pool)

    def operand_shape(self, T=None):
        """A shape that broadcasts to T (default: the case's): a suffix of
        it, some axes 1."""
        T = self.T if T is None else tuple(T)
        rng = self.rng
        k = len(T) if rng.random() < 0.6 else rng.randint(0, len(T))
        return tuple(1 if rng.random() < 0.3 else d for d in T[len(T) - k:])

    def new_leaf(self, shape, want, dtype=None, nonzero=False):
        rng = self.rng
        if len(self.args) >= MAX_ARGS:
            return self.use_leaf(rng.choice(self.args))
        n = "abcdef"[len(self.args)]
        self.args.append(n)
        if nonzero:
            self.nonzero.add(n)
        dt = dtype or self.pick_dtype(want)
        self.dt[n] = dt
        # a 0-d argument is read as its one element in kernels, never indexed
        self.views[n] = v = View(rng, shape, sliced=len(shape) > 0 and rng.random() < 0.55)
        self.data[n] = self._values(v.base, dt, nonzero)
        if len(v.base) and rng.random() < 0.15:
            self.strided[n] = rng.choice(["step", "reverse", "fortran"])
        if v.index and rng.random() < 0.3:
            name = f"v{len(self.stmts)}"
            self.stmts.append(f"{name} = {n}{v.index}")
            v.ref = name
        else:
            v.ref = n + v.index
        return self.use_leaf(n)

    def use_leaf(self, n):
        v = self.views[n]
        return Node(v.ref, eval("x" + v.index, {"x": self.data[n]}))   # noqa: S307

    def _values(self, shape, dt, nonzero):
        g = self.g
        k = kind(dt)
        if k == "b":   # a divisor's bools are all True (x // False raises)
            x = np.array(g.random(shape) < 0.5)
            return np.ones_like(x) if nonzero else x
        if k in "iu":
            info = np.iinfo(dt)
            if g.random() < 0.15:          # the whole range: wrapping
                x = g.integers(info.min, info.max, shape, dtype=np.dtype(dt), endpoint=True)
            else:
                x = g.integers(-6 if k == "i" else 0, 7, shape).astype(dt)
            if nonzero:
                x = np.where(x == 0, np.array(1, dt), x)
                if k == "i":   # numpy's MIN // -1 warns and wraps; kept out
                    x = np.where(x == -1, np.array(2, dt), x)
            return np.array(x, dt)
        x = g.integers(-16, 17, shape) / 4.0
        if nonzero:
            x = np.where(x == 0, 0.5, x)
        if k == "c":
            x = x + 1j * (g.integers(-16, 17, shape) / 4.0)
        return np.array(x, dt)

    # reductions
    def reduce_call(self, x, keep, axis="random", kinds=None):
        rng = self.rng
        nd = x.ndim
        choices = kinds or REDUCTIONS
        if kind(x.dtype) == "c":
            choices = [r for r in choices if r not in ("min", "max", "argmin", "argmax")]
        red = rng.choice(choices or ["sum"])
        if axis == "random":
            axis = rng.randint(-nd, nd - 1) if nd else None
        kw = [] if axis is None else [f"axis={axis}"]
        ddof = None
        if red in ("var", "std") and rng.random() < 0.5:
            ddof = rng.choice([0, 1, 1, 2])
            kw.append(f"ddof={ddof}")
        if keep and axis is not None and red not in ("argmin", "argmax"):
            kw.append("keepdims=True")
        if rng.random() < 0.5 or isinstance(x, Weak):
            call = f"np.{red}(@{''.join(', ' + a for a in kw)})"
        else:
            call = f"@.{red}({', '.join(kw)})"
        tags = ()
        if not isinstance(x.val, Raised):
            shape = np.shape(x.val)
            n = int(np.prod(shape)) if axis is None else shape[axis]
            if ddof is not None and ddof >= n:
                tags = ["ddof_ge_n"]
            if n > self.nterms or self.folded is None:
                self.nterms, self.folded = max(self.nterms, n), x.val
        val = npeval(lambda: eval(call.replace("@", "x"), {"np": np, "x": x.val}), (x,))  # noqa: S307
        node = Node(call.replace("@", x.text), val, (x,), tags=tags)
        node.red = red
        if red in ("sum", "prod", "mean", "var", "std") or not x.nodiv:
            self.exact = False
        if red in ("sum", "prod", "mean", "var", "std") and \
                x.dtype in ("float16", "float32", "complex64"):
            self.wide_acc = True
        return node

    def cumsum_expr(self, gen):
        """np.cumsum of a view, or of an expression (made first)."""
        rng = self.rng
        leaf = None
        if rng.random() < 0.3:
            leaf = gen.expr(2)
            if isinstance(leaf, Weak) or isinstance(leaf.val, Raised) or \
                    np.shape(leaf.val) != self.T:
                leaf = None
        leaf = leaf or self.new_leaf(self.T, None)
        if np.shape(leaf.val) != self.T:
            # no argument left to make (MAX_ARGS): one of those there are
            # (a 0-d one is read as a number, which np.cumsum does not take)
            n = next((a for a in self.args if np.ndim(self.data[a]) and
                      self.views[a].shape), None)
            if n is not None:
                leaf = self.use_leaf(n)
                self.T = np.shape(leaf.val)
        nd = len(self.T)
        axis = rng.choice([None] + list(range(-nd, nd)))
        kw = "" if axis is None else f"axis={axis}"
        call = f"np.cumsum(@{', ' + kw if kw else ''})" if rng.random() < 0.5 \
            else f"@.cumsum({kw})"
        self.nterms = int(np.prod(self.T)) if axis is None else self.T[axis]
        self.folded = leaf.val
        self.exact = kind(leaf.dtype) in "biu" and leaf.nodiv
        val = npeval(lambda: eval(call.replace("@", "x"), {"np": np, "x": leaf.val}),  # noqa: S307
                     (leaf,))
        return Node(call.replace("@", leaf.text), val, (leaf,))

    def raising(self, gen):
        """An expression numpy refuses at run time: operands that do not
        broadcast, or a min/max/argmin/argmax of nothing."""
        rng = self.rng
        T = self.T if len(self.T) and self.T[-1] > 1 else self.T[:-1] + (3,)
        self.T = T
        if rng.random() < 0.5:
            bad = T[:-1] + (T[-1] + 1,)
            x = gen.binop(rng.choice(["+", "*"]), gen.leaf(shape=T), gen.leaf(shape=bad))
            return self.reduce_call(x, keep=False, kinds=["sum", "prod", "mean", "any"])
        x = gen.leaf(shape=T[:-1] + (0,))
        return self.reduce_call(x, keep=False, axis=rng.choice([None, -1]),
                                kinds=["min", "max", "argmin", "argmax"])

    # text and inputs
    def text(self):
        lines = [f"def {self.name}({', '.join(self.args)}):"]
        lines += [f"    {s}" for s in self.stmts]
        lines.append(f"    return {self.body.text}")
        return "\n".join(lines) + "\n"

    def inputs(self):
        """The arguments as passed: some as strided views of a larger array."""
        return [layout(self.data[n], self.strided.get(n)) for n in self.args]

    def jobs(self):
        """What the child process needs to rebuild the arguments (a pickle
        of a strided view would arrive contiguous)."""
        return [(self.data[n], self.strided.get(n)) for n in self.args]


def layout(x, how):
    if how == "step":
        big = np.zeros((x.shape[0] * 2,) + x.shape[1:], x.dtype)
        big[::2] = x
        return big[::2]
    if how == "reverse":
        return np.ascontiguousarray(x[::-1])[::-1]
    if how == "fortran":
        return np.asfortranarray(x)
    return x


def signature(case, ins):
    parts = []
    for x in ins:
        contiguous = x.flags.c_contiguous and x.ndim > 0
        dims = [":"] * x.ndim
        if contiguous:
            dims[-1] = "::1"
        parts.append(f"{_SHORT[x.dtype.name]}[{', '.join(dims) if dims else '0'}]")
    return f"{case.name}({', '.join(parts)})"


# ---- the reference and the comparison ----------------------------------------

def reference(case):
    ns = {"np": np}
    exec(compile(case.text(), "<ref>", "exec"), ns)   # noqa: S102 - our own text
    ins = [x.copy() for x in case.inputs()]
    try:
        with np.errstate(all="ignore"):
            return ns[case.name](*ins)
    except Exception as e:   # noqa: BLE001 - numpy refuses: the kernel must too
        return Raised(e)


def _eps(dt):
    dt = np.dtype(dt)
    if dt.kind == "c":
        dt = np.dtype(f"f{dt.itemsize // 2}")
    return float(np.finfo(dt).eps)


# docs/arrays.md, Reductions: kernels sum float16/float32/complex64 in
# float64 and round once, where numpy's sum, mean, var or std in the
# narrow type can overflow to inf (or nan) first
WIDE_ACC = "a small-float reduction finite in libasc's float64 sum, not in numpy's"
ZERO_D_BOOL = ("a 0-d bool argument reads as a Python bool (docs/arrays.md): -b and "
               "b - b compute, where numpy's bool arrays raise TypeError")


def zero_d_bool(case, want):
    """numpy refused bool arithmetic that involves a 0-d bool argument."""
    return (isinstance(want, Raised) and "boolean" in want.msg and
            any(case.dt[a] == "bool" and np.ndim(case.data[a]) == 0 for a in case.args))


def compare(case, got, want):
    """None when got matches want, else a description of the difference."""
    g, w = np.asarray(got), np.asarray(want)
    if g.shape != w.shape:
        return f"shape {g.shape} (numpy {w.shape})"
    if g.dtype != w.dtype:
        return f"dtype {g.dtype} (numpy {w.dtype})"
    if w.dtype.kind in "biu" or (case.exact and w.dtype.kind in "fc"):
        same = (g == w) | ((g != g) & (w != w)) if w.dtype.kind in "fc" else g == w
        if np.all(same):
            return None
        bad = np.argwhere(~np.asarray(same))[:3]
        return "; ".join(f"at {tuple(i)}: asc {g[tuple(i)]!r}, numpy {w[tuple(i)]!r}"
                         for i in bad) or f"asc {g!r}, numpy {w!r}"
    # the least precise float among the result and the arguments
    eps = max([_eps(w.dtype)] + [_eps(case.dt[a]) for a in case.args
                                 if kind(case.dt[a]) in "fc"])
    n = case.nterms
    m = 1.0
    with np.errstate(all="ignore"):
        if w.size:
            fw = np.abs(w[np.isfinite(w)])
            m = max(m, float(fw.max()) if fw.size else 1.0)
        if case.folded is not None and np.size(case.folded):
            f = np.abs(np.asarray(case.folded, np.complex128))
            f = f[np.isfinite(f)]
            if f.size:
                m = max(m, n * float(f.max()), float(f.max()) ** 2)
        tol = (n + 8) * eps
        ok = np.isclose(g.astype(np.complex128), w.astype(np.complex128), rtol=tol,
                        atol=tol * m, equal_nan=True)
    if np.all(ok):
        return None
    if case.wide_acc and np.all(np.isfinite(g[~ok])) and not np.any(np.isfinite(w[~ok])):
        return WIDE_ACC
    bad = np.argwhere(~np.asarray(ok))[:3]
    return "; ".join(f"at {tuple(i)}: asc {g[tuple(i)]!r}, numpy {w[tuple(i)]!r}"
                     for i in bad) or f"asc {g!r}, numpy {w!r}"


# ---- running: compile in batches with ascc, run in a child process -------------

def worker():
    """Child: reads (path, [(name, args)]) pickles on stdin, answers per
    case on stdout: ('start', j), then ('ok', j, value) or ('raised', j,
    class name, message, mro names)."""
    sys.path.insert(0, str(ROOT / "bindings" / "python"))
    import asc
    inp, out = sys.stdin.buffer, sys.stdout.buffer

    def send(obj):
        b = pickle.dumps(obj)
        out.write(struct.pack("<I", len(b)) + b)
        out.flush()
    while True:
        h = inp.read(4)
        if len(h) < 4:
            return
        path, jobs = pickle.loads(inp.read(struct.unpack("<I", h)[0]))
        m = asc.load_module(path)
        for j, (name, args) in enumerate(jobs):
            send(("start", j))
            try:
                r = getattr(m, name)(*[layout(x, how) for x, how in args])
                send(("ok", j, r))
            except Exception as e:   # noqa: BLE001 - reported to the parent
                send(("raised", j, type(e).__name__, str(e)[:2000],
                      [c.__name__ for c in type(e).__mro__]))
        send(("done",))


class Runner:
    def __init__(self, timeout):
        self.p = None
        self.timeout = timeout

    def start(self):
        self.p = subprocess.Popen([sys.executable, __file__, "--worker"], bufsize=0,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def _read(self, n):
        """n bytes from the unbuffered pipe (select sees what is unread)."""
        b = b""
        while len(b) < n:
            got = self.p.stdout.read(n - len(b))
            if not got:
                return b
            b += got
        return b

    def _recv(self, timeout):
        if not select.select([self.p.stdout], [], [], timeout)[0]:
            self.p.kill()
            return "timeout"
        h = self._read(4)
        if len(h) < 4:
            return None
        return pickle.loads(self._read(struct.unpack("<I", h)[0]))

    def run(self, path, jobs):
        """Results per job: ('ok', value) / ('raised', ...) / ('crash', rc)."""
        results = [None] * len(jobs)
        todo = list(range(len(jobs)))
        while todo:
            if self.p is None or self.p.poll() is not None:
                self.start()
            sub = [jobs[j] for j in todo]
            b = pickle.dumps((path, sub))
            try:
                self.p.stdin.write(struct.pack("<I", len(b)) + b)
                self.p.stdin.flush()
            except BrokenPipeError:
                pass
            cur = None
            while True:
                msg = self._recv(self.timeout)
                if msg is None or msg == "timeout":
                    rc = self.p.wait() if msg is None else "hang"
                    self.p = None
                    if cur is None:
                        raise RuntimeError(f"worker died before a case (rc {rc})")
                    results[todo[cur]] = ("crash", rc)
                    todo = todo[cur + 1:]
                    break
                if msg[0] == "start":
                    cur = msg[1]
                elif msg[0] == "done":
                    todo = []
                    break
                else:
                    results[todo[msg[1]]] = msg[:1] + msg[2:]
        return results

    def close(self):
        if self.p is not None:
            self.p.stdin.close()
            self.p.wait()


class Stats(collections.Counter):
    def __init__(self):
        super().__init__()
        self.reasons = collections.Counter()
        self.failures = []
        self.deferred = collections.Counter()
        self.compile_secs = 0.0


def skip_name(case, want):
    for name, _what, pred in TEMPORARY_SKIPS:
        try:
            if pred(case, want):
                return name
        except Exception:   # noqa: BLE001
            pass
    return None


def short(msg):
    msg = str(msg).strip().splitlines()[0] if str(msg).strip() else ""
    msg = re.sub(r"^.*?:\d+:\d+: error: ", "", msg)
    msg = re.sub(r"'[^']*'", "'…'", msg)
    msg = re.sub(r"\d+", "N", msg)
    return msg[:120]


def judge(case, want, res, stats):
    """Counts one case: res is the kernel's outcome."""
    kind_ = res[0]
    skip = skip_name(case, want)

    def fail(what, detail):
        if skip:
            stats["deferred"] += 1
            stats.deferred[skip] += 1
            return
        stats[what] += 1
        stats.failures.append((case, f"{what}: {detail}", want))

    if kind_ == "rejected":
        msg = res[1]
        if "internal compiler error" in msg:
            fail("internal error", msg[:400])
            return
        if isinstance(want, Raised):
            stats["numpy raises, asc rejects when compiling"] += 1
            stats.reasons["both refuse: " + short(msg)] += 1
            return
        if skip:
            stats["deferred"] += 1
            stats.deferred[skip] += 1
            return
        stats["rejected"] += 1
        stats.reasons["rejected: " + short(msg)] += 1
        return
    if kind_ == "crash":
        fail("crashed", f"the kernel's process died (status {res[1]})")
        return
    if kind_ == "raised":
        name, msg, mro = res[1], res[2], res[3]
        if isinstance(want, Raised):
            if want.name in mro:
                stats["matched"] += 1
                stats["both raised"] += 1
            else:
                fail("mismatched", f"asc raised {name}: {msg[:200]}; numpy raised {want!r}")
            return
        fail("mismatched", f"asc raised {name}: {msg[:300]}")
        return
    got = res[1]
    if isinstance(want, Raised):
        if zero_d_bool(case, want):
            stats["documented difference"] += 1
            stats.reasons["documented: " + ZERO_D_BOOL] += 1
            return
        fail("mismatched", f"asc returned {np.asarray(got)!r:.200}; numpy raised {want!r}")
        return
    d = compare(case, got, want)
    if d is None:
        stats["matched"] += 1
    elif d == WIDE_ACC and not skip:
        stats["documented difference"] += 1
        stats.reasons["documented: " + d] += 1
    else:
        fail("mismatched", d)


def compile_batch(cases, workdir, args, stats):
    """Compiles the cases into modules: a list of (path, cases in it).  A
    case the compiler rejects gets case.rejected = its message and is left
    out; a failure that names no line splits the batch in two."""
    live = list(cases)
    tag = f"{cases[0].seed}_{cases[0].index}_{len(cases)}"
    for attempt in range(len(cases) + 1):
        if not live:
            return []
        src = Path(workdir) / f"m_{tag}_{attempt}.py"
        so = src.with_suffix(".so")
        text, starts = HEADER, []
        for c in live:
            text += "@asc.kernel\n"
            starts.append(text.count("\n") + 1)
            text += c.text() + "\n\n"
        src.write_text(text)
        cmd = [args.ascc, "--emit=so", f"-O{args.opt}", "-o", str(so)]
        for c in live:
            cmd += ["--signature", signature(c, c.inputs())]
        t = time.monotonic()
        p = subprocess.run(cmd + [str(src)], capture_output=True, text=True)
        stats.compile_secs += time.monotonic() - t
        if p.returncode == 0:
            return [(str(so), live)]
        err = (p.stderr + p.stdout).strip()
        if p.returncode < 0:
            err = f"internal compiler error: ascc died with signal {-p.returncode}\n" + err
        m = re.search(re.escape(src.name) + r":(\d+):\d+: ", err)
        names = [c.name for c in live]
        k = re.search(r"\b(k_\d+)\b", err)      # an internal error names its kernel
        if m is not None:
            line = int(m.group(1))
            j = max(i for i, s in enumerate(starts) if s <= line)
        elif k is not None and k.group(1) in names:
            j = names.index(k.group(1))
        elif len(live) == 1:
            # user errors name their line; anything else (the C compiler
            # failing on the generated code, a crash) is the compiler's
            j = 0
            if "internal compiler error" not in err:
                err = "internal compiler error: no line named: " + err
        else:
            half = len(live) // 2
            return (compile_batch(live[:half], workdir, args, stats)
                    + compile_batch(live[half:], workdir, args, stats))
        live[j].rejected = err
        del live[j]
    return []


def run(args):
    ascc = args.ascc
    if not os.path.exists(ascc):
        sys.exit(f"array_semantics_fuzz: needs ascc: {ascc} does not exist (--ascc PATH)")
    stats = Stats()
    runner = Runner(args.timeout)
    workdir = tempfile.mkdtemp(prefix="asc-semfuzz-")
    t0 = time.monotonic()
    done = 0
    indexes = args.cases or list(range(args.count))
    try:
        while done < len(indexes):
            n = min(args.batch, len(indexes) - done)
            cases, wants = [], {}
            for i in indexes[done:done + n]:
                try:
                    c = Case(args.seed, i)
                except Exception:   # noqa: BLE001 - a generator bug: say so
                    stats["generator errors"] += 1
                    stats.reasons["generator: " + traceback.format_exc().splitlines()[-1]] += 1
                    continue
                c.rejected = None
                wants[c.name] = reference(c)
                cases.append(c)
                stats["cases"] += 1
                if args.show:
                    print(f"# case {c.index}: numpy {wants[c.name]!r:.200}\n{c.text()}")
            done += n
            if not cases:
                continue
            modules = compile_batch(cases, workdir, args, stats)
            for c in cases:
                if c.rejected is not None:
                    judge(c, wants[c.name], ("rejected", c.rejected), stats)
            for path, live in modules:
                stats["modules"] += 1
                results = runner.run(path, [(c.name, c.jobs()) for c in live])
                for c, res in zip(live, results):
                    stats["compiled"] += 1
                    judge(c, wants[c.name], res, stats)
            for f in Path(workdir).glob("m_*"):
                f.unlink()
            if args.progress and done % (args.batch * 10) == 0:
                print(f"... {done} cases, {stats['mismatched']} mismatched, "
                      f"{time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    finally:
        runner.close()
    secs = time.monotonic() - t0
    print(f"array_semantics_fuzz seed={args.seed} count={args.count} batch={args.batch}")
    for k in ("cases", "compiled", "matched", "both raised", "documented difference",
              "mismatched", "crashed", "internal error", "rejected",
              "numpy raises, asc rejects when compiling", "deferred", "generator errors"):
        print(f"  {k:42s} {stats[k]}")
    print(f"  modules {stats['modules']}; {stats.compile_secs:.1f} s in ascc; "
          f"{secs:.1f} s ({stats['cases'] / secs if secs else 0:.1f} cases/s)")
    if stats.deferred:
        print("deferred (TEMPORARY_SKIPS, fixed elsewhere):")
        for k, v in stats.deferred.most_common():
            print(f"  {v:6d}  {k}")
    print("by message:")
    for msg, c in stats.reasons.most_common(40):
        print(f"  {c:6d}  {msg}")
    for case, detail, want in stats.failures[:args.max_failures]:
        print(f"\n--- seed {case.seed} case {case.index} ({case.form}): {detail}")
        ins = case.inputs()
        print("    args: " + ", ".join(f"{n}={x.dtype}{list(x.shape)}"
                                        + (f" ({case.strided[n]})" if n in case.strided else "")
                                        for n, x in zip(case.args, ins)))
        print(textwrap.indent(case.text(), "    "))
        if args.repro:
            print("    values: " + "; ".join(f"{n}={np.array2string(x, threshold=40)}"
                                            for n, x in zip(case.args, ins)))
            print(f"    numpy: {want!r:.400}")
    return 1 if any(stats[k] for k in ("mismatched", "crashed", "internal error")) else 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker()
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--batch", type=int, default=100, help="cases per compiled module")
    ap.add_argument("--opt", type=int, choices=[0, 1, 2, 3], default=0,
                    help="the C compiler's optimisation level (default 0: fastest to "
                         "compile; libasc's own passes run the same)")
    ap.add_argument("--ascc", default=os.environ.get("ASCC") or str(
        Path(os.environ.get("ASC_BUILD_DIR", ROOT / "build")) / "ascc"))
    ap.add_argument("--cases", type=lambda t: [int(x) for x in t.split(",")],
                    help="run only these case numbers of the seed (a failure's repro)")
    ap.add_argument("--show", action="store_true", help="print every kernel")
    ap.add_argument("--repro", action="store_true", help="print the failures' inputs")
    ap.add_argument("--progress", action="store_true")
    ap.add_argument("--max-failures", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=120,
                    help="seconds one case may run before it counts as a hang")
    args = ap.parse_args()
    if not 1 <= args.batch <= ASCC_MAX_SIGNATURES:
        ap.error(f"--batch takes 1 to {ASCC_MAX_SIGNATURES} (one ascc run, one "
                 "--signature per kernel)")
    os.environ.setdefault("ASC_CACHE_DIR", tempfile.mkdtemp(prefix="asc-semfuzz-cache-"))
    # a module of 250 kernels may take gcc more than the default minute on
    # a loaded machine (a timeout would split the batch)
    os.environ.setdefault("ASC_CC_TIMEOUT_MS", "900000")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
