#!/usr/bin/env python3
"""numpy-differential fuzzer for the numpy functions kernels accept.

Where tests/tools/array_fuzz.py writes operator expressions and
tests/tools/array_semantics_fuzz.py reductions of them, this generator
writes kernels that call one of the numpy functions of docs/arrays.md
(its "numpy and math names" table and the sections after it) on
arguments that are views, and return what it gives:

    @asc.kernel
    def k_7(a, b):
        v0 = a[1:, ::-1]
        return np.concatenate((v0.T, b), axis=-1)

Each case picks one family (--funcs limits them; --funcs list prints
them):

* unary: np.cbrt, sign, reciprocal, square, arcsinh, arccosh, arctanh,
  deg2rad, rad2deg, radians, degrees, conj, real, imag, angle (complex
  operands where numpy and kernels take them), now and then two nested;
* binary: np.heaviside, fmax, fmin, logaddexp, hypot, arctan2 of
  operands that broadcast (NaNs among the values of fmax/fmin);
* axes: sum, mean, max, min, prod, std, var (np. and method forms) over
  a tuple of axes or one axis, negative ones too, keepdims, ddof;
* flips: np.trace (offset), np.diag (both directions, k), flipud,
  fliplr, flip (axis None, an int or a tuple), rot90 (k, axes);
* moves: np.roll (shift and axis ints or tuples), tile, repeat, triu,
  tril;
* joins: np.concatenate (axis None too), stack, hstack, vstack,
  column_stack;
* scans: np.cumsum, cumprod, add/multiply.accumulate, add/multiply/
  maximum/minimum/logical_and/logical_or.reduce (axis), and UF.outer;
* select: np.average (axis, weights), clip, where;
* products: `@` and np.matmul of N-D operands that broadcast (1-D ones
  too), np.einsum forms;
* order: np.sort, argsort (kind='stable', or distinct values), median,
  unique (return_counts), searchsorted (side), digitize (right),
  bincount (weights, minlength), histogram (bins, range), cov and
  corrcoef (rowvar, ddof, bias).

Arguments are float32, float64, int32, int64 and complex128 where both
numpy and kernels take them, read through views: chained slices with
negative bounds and steps, a leading integer index, `.T`, some bound to
a name first, and passed as strided, reversed or Fortran-order numpy
arrays.  The reference is the same text run by CPython on numpy.  A case
matches when the kernel returns the same shape and dtype (each element
of a tuple), and the same values: bit for bit for integers, bools and
what only moves or compares elements (flips, rolls, joins, sorts,
where, clip, fmax, max ...); within 4 ulps (of the least precise float
among the result and the arguments) for the element functions numpy and
C's libm compute each in its own way (cbrt, arcsinh, hypot, logaddexp,
angle ...); and for sums, products, means, variances, matrix products,
cov and the like within (n + 8) * eps relative and (n + 8) * eps * S
absolute, n the number of elements folded into one, S the largest of 1,
the result and n times the largest argument element and its square
(numpy sums pairwise and in BLAS order, kernels in order, in float64
for float32: docs/arrays.md).  numpy raising: the kernel must raise the
same class.

What differs by design (docs/types.md, docs/arrays.md) is not generated
unless --known-diffs: operand dtypes whose promotion follows JAX's
lattice (int with float32: float32, numpy float64; the joins' dtype is
that of `+`), np.reciprocal of an integer 0, np.bincount of an empty
array with weights, np.cov/np.corrcoef of one variable (numpy squeezes
to 0-d), float32 reductions numpy overflows in float32 (counted as a
"documented difference" when they occur).

Runs batch cases in modules compiled ahead of time by ascc (--batch,
--opt 0 by default) and run in a child process, with
array_semantics_fuzz.py's machinery:

    python3 tests/tools/numpy_fuzz.py --seed 1 --count 500
    python3 tests/tools/numpy_fuzz.py --seed 2 --count 20000 --batch 250 --progress
    python3 tests/tools/numpy_fuzz.py --seed 3 --count 5 --show --funcs joins

Exit status 1 when a case mismatched, crashed or hit an internal
compiler error.
"""
import argparse
import os
import random
import re
import sys
import tempfile
import textwrap
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import array_semantics_fuzz as sf  # noqa: E402

ROOT = sf.ROOT
warnings.filterwarnings("ignore", category=RuntimeWarning)
warnings.filterwarnings("ignore", category=np.exceptions.ComplexWarning
                        if hasattr(np, "exceptions") else UserWarning)

REAL = ["float32", "float64", "int32", "int64"]
FLOAT = ["float32", "float64"]
ALL = REAL + ["complex128"]
MAX_ARGS = 5


def same_promotion(x, y):
    """True when libasc's type of x + y (docs/types.md's table) is numpy's."""
    t = sf.strong(sf.ASC_TABLE[(sf._SHORT[x], sf._SHORT[y])])
    return sf._LONG[t] == np.result_type(x, y).name


class Skip(Exception):
    """The family cannot make this case (e.g. a known difference): redraw."""


class Case:
    def __init__(self, seed, index, families, known_diffs=False):
        self.seed, self.index = seed, index
        self.name = f"k_{index}"
        self.known = known_diffs
        self.args, self.dt, self.data, self.strided = [], {}, {}, {}
        self.views = {}
        self.stmts = []
        self.g = np.random.default_rng(seed * 7919 + index)
        for attempt in range(20):
            rng = random.Random((seed * 1_000_003 + index) * 31 + attempt)
            self.rng = rng
            self.args, self.dt, self.data, self.strided, self.stmts = [], {}, {}, {}, []
            self.tol, self.nterms = "exact", 1
            self.family = rng.choice(families)
            try:
                self.body = FAMILIES[self.family](self)
                if "," not in self.body.split("(")[0] and rng.random() < 0.06:
                    # the result used in an expression
                    self.body = f"{self.body} * 2"
                break
            except Skip:
                continue
        else:
            raise RuntimeError("no case after 20 draws")

    # ---- arguments ----------------------------------------------------------
    def shape(self, rmin=1, rmax=3, zero=0.03):
        r = self.rng.randint(rmin, rmax)
        return tuple(self.rng.randint(1, 5) if self.rng.random() > zero else 0
                     for _ in range(r))

    def values(self, shape, dt, how):
        g = self.g
        k = np.dtype(dt).kind
        if how == "distinct":
            n = int(np.prod(shape))
            x = (g.permutation(n) - n // 2).reshape(shape)
            x = x * 0.5 if k in "fc" else x
            return np.array(x, dt)
        if how == "count":                     # non-negative small ints
            return np.array(g.integers(0, 7, shape), dt)
        if how == "sorted":
            x = np.sort(g.integers(-8, 9, shape).ravel()).reshape(shape)
            return np.array(x / 2 if k in "fc" else x, dt)
        if k in "iu":
            if how == "small":
                x = g.integers(-3, 4, shape)
            elif how in ("ge1", "pos", "nonzero"):
                x = g.integers(1, 7, shape) * (1 if how != "nonzero" else
                                               g.choice([-1, 1], shape))
            else:
                x = g.integers(-6, 7, shape)
            return np.array(x, dt)
        if how == "unit":
            x = g.integers(-7, 8, shape) / 8.0
        elif how == "ge1":
            x = 1 + g.integers(0, 17, shape) / 4.0
        elif how == "pos":
            x = g.integers(1, 17, shape) / 4.0
        elif how == "small":
            x = g.integers(-6, 7, shape) / 4.0
        elif how == "nonzero":
            x = g.integers(1, 17, shape) / 4.0 * g.choice([-1, 1], shape)
        elif how == "wide":
            x = g.standard_normal(shape) * 10.0 ** g.integers(-3, 4, shape)
        else:
            x = g.integers(-16, 17, shape) / 4.0
        if how == "nan" and x.size:
            x = np.where(g.random(shape) < 0.2, np.nan, x)
        if k == "c":
            x = x + 1j * (g.integers(-8, 9, shape) / 4.0)
        return np.array(x, dt)

    def arg(self, shape, dt, how="any", view=True):
        """A new argument whose view in the kernel has the given shape:
        the text that reads it."""
        rng = self.rng
        if len(self.args) >= MAX_ARGS:
            raise Skip
        n = "abcdefgh"[len(self.args)]
        self.args.append(n)
        self.dt[n] = dt
        shape = tuple(shape)
        trans = view and len(shape) >= 2 and rng.random() < 0.25
        vshape = shape[::-1] if trans else shape
        v = sf.View(rng, vshape, sliced=view and len(shape) > 0 and rng.random() < 0.5)
        self.data[n] = self.values(v.base, dt, how)
        if len(v.base) and rng.random() < 0.15:
            self.strided[n] = rng.choice(["step", "reverse", "fortran"])
        ref = n + v.index
        if view and rng.random() < 0.06:
            # an expression for the argument: the function reads a
            # temporary (doubling keeps order, sign and distinctness)
            ref = rng.choice([f"({ref} * 2)", f"({ref} + {ref})"])
        if trans:
            ref = rng.choice([f"{ref}.T", f"np.transpose({ref})"]) if v.index == "" \
                else f"{ref}.T"
        if (v.index or trans) and rng.random() < 0.3:
            name = f"v{len(self.stmts)}"
            self.stmts.append(f"{name} = {ref}")
            ref = name
        return ref

    def dtype(self, pool, other=None):
        """A dtype of pool; with other, one whose promotion with it is
        numpy's (or any, with --known-diffs)."""
        cands = [d for d in pool if other is None or self.known or same_promotion(d, other)]
        return self.rng.choice(cands or [other])

    def axis_text(self, nd, allow_none=True):
        rng = self.rng
        if allow_none and rng.random() < 0.2:
            return None
        a = rng.randint(0, nd - 1)
        return str(a - nd if rng.random() < 0.4 else a)

    # ---- text ---------------------------------------------------------------
    def text(self):
        lines = [f"def {self.name}({', '.join(self.args)}):"]
        lines += [f"    {s}" for s in self.stmts]
        lines.append(f"    return {self.body}")
        return "\n".join(lines) + "\n"

    def inputs(self):
        return [sf.layout(self.data[n], self.strided.get(n)) for n in self.args]

    def jobs(self):
        return [(self.data[n], self.strided.get(n)) for n in self.args]


def kw(*pairs):
    return "".join(f", {p[0]}={p[1]}" for p in pairs if p is not None and p[1] is not None)


# ---- the families -------------------------------------------------------------

UNARY = {
    # name: (dtypes, values, tolerance)
    "cbrt": (REAL, "any", "ulp"), "arcsinh": (REAL, "any", "ulp"),
    "arccosh": (REAL, "ge1", "ulp"), "arctanh": (FLOAT, "unit", "ulp"),
    "sign": (REAL, "nan", "exact"), "reciprocal": (REAL, "nonzero", "exact"),
    "square": (ALL, "any", "exact"), "deg2rad": (REAL, "any", "ulp"),
    "rad2deg": (REAL, "any", "ulp"), "radians": (REAL, "any", "ulp"),
    "degrees": (REAL, "any", "ulp"), "conj": (ALL, "any", "exact"),
    "conjugate": (ALL, "any", "exact"), "real": (ALL, "any", "exact"),
    "imag": (ALL, "any", "exact"), "angle": (ALL, "any", "ulp"),
}


def fam_unary(c):
    rng = c.rng
    f = rng.choice(sorted(UNARY))
    pool, how, tol = UNARY[f]
    if f == "reciprocal" and c.known:
        how = "small"                      # integer zeros: a documented difference
    dt = rng.choice(pool)
    x = c.arg(c.shape(0, 3), dt, how)
    c.tol = tol
    body = f"np.{f}({x})"
    if rng.random() < 0.25:
        g = rng.choice(["sign", "square", "conj", "real", "imag", "cbrt", "deg2rad"])
        if g in ("sign", "cbrt", "deg2rad") and dt == "complex128" and f in (
                "square", "conj", "conjugate"):
            g = "real"
        body = f"np.{g}({body})"
        if g in ("cbrt", "deg2rad"):
            c.tol = "ulp"
    return body


BINARY = {"heaviside": "exact", "fmax": "exact", "fmin": "exact", "logaddexp": "ulp",
          "hypot": "ulp", "arctan2": "ulp"}


def fam_binary(c):
    rng = c.rng
    f = rng.choice(sorted(BINARY))
    T = c.shape(1, 3)
    d1 = rng.choice(REAL)
    d2 = c.dtype(REAL, d1)
    how = "nan" if f in ("fmax", "fmin", "heaviside") else "any"

    def sub():
        k = len(T) if rng.random() < 0.6 else rng.randint(0, len(T))
        return tuple(1 if rng.random() < 0.3 else d for d in T[len(T) - k:])
    x, y = c.arg(sub(), d1, how), c.arg(sub(), d2, how)
    if rng.random() < 0.15:
        y = rng.choice(["0.5", "2", "-1.5"])
        if y != "2" and not c.known and d1 == "float32":
            pass
    c.tol = BINARY[f]
    return f"np.{f}({x}, {y})"


AXIS_REDS = ["sum", "mean", "max", "min", "prod", "std", "var"]


def fam_axes(c):
    rng = c.rng
    red = rng.choice(AXIS_REDS)
    pool = REAL if red in ("max", "min") else ALL
    dt = rng.choice(pool)
    T = c.shape(2, 4)
    nd = len(T)
    x = c.arg(T, dt, "small" if red == "prod" else "any")
    # kernels take a tuple of axes of one sign and only for sum, prod,
    # mean, min and max (a compile error otherwise: drawn now and then)
    one = red in ("std", "var") and rng.random() > 0.05
    k = 1 if one else rng.randint(1, nd)
    axes = rng.sample(range(nd), k)
    neg = rng.random() < 0.4
    ax_txt = [str(a - nd) if (neg if rng.random() < 0.99 else not neg) else str(a)
              for a in axes]
    if one or (k == 1 and rng.random() < 0.4):
        axis = ax_txt[0]
    else:
        axis = "(" + ", ".join(ax_txt) + ("," if k == 1 else "") + ")"
    n = int(np.prod([T[a] for a in axes]))
    if red in ("max", "min") and n == 0:
        n = 1                                   # numpy raises: so must the kernel
    keep = "True" if rng.random() < 0.4 else None
    ddof = str(rng.choice([0, 1])) if red in ("std", "var") and rng.random() < 0.4 else None
    c.tol = "exact" if red in ("max", "min") else "sum"
    c.nterms = max(n, 1)
    args = kw(("axis", axis), ("keepdims", keep), ("ddof", ddof))
    if rng.random() < 0.5:
        return f"np.{red}({x}{args})"
    return f"({x}).{red}({args[2:]})" if x[-1] in ")" and "(" in x else f"{x}.{red}({args[2:]})"


def fam_flips(c):
    rng = c.rng
    f = rng.choice(["trace", "diag", "diag1", "flipud", "fliplr", "flip", "rot90"])
    dt = rng.choice(ALL)
    if f == "trace":
        x = c.arg(c.shape(2, 2), dt)
        c.tol, c.nterms = "sum", 5
        return f"np.trace({x}{kw(('offset', str(rng.randint(-3, 3)) if rng.random() < 0.5 else None))})"
    if f == "diag1":
        x = c.arg(c.shape(1, 1), dt)
        return f"np.diag({x}{kw(('k', str(rng.randint(-3, 3)) if rng.random() < 0.5 else None))})"
    if f == "diag":
        x = c.arg(c.shape(2, 2), dt)
        k = rng.randint(-3, 3)
        return f"np.diag({x}, {k})" if rng.random() < 0.5 else f"np.diag({x}, k={k})"
    if f == "flipud":
        return f"np.flipud({c.arg(c.shape(1, 3), dt)})"
    if f == "fliplr":
        return f"np.fliplr({c.arg(c.shape(2, 3), dt)})"
    T = c.shape(1, 3)
    nd = len(T)
    x = c.arg(T, dt)
    if f == "flip":
        r = rng.random()
        if r < 0.25:
            return f"np.flip({x})"
        if r < 0.7 or nd == 1:
            return f"np.flip({x}, {c.axis_text(nd, False)})"
        ax = rng.sample(range(nd), rng.randint(1, nd))
        return f"np.flip({x}, axis=({', '.join(str(a - nd if rng.random() < .4 else a) for a in ax)},))"
    if nd < 2:
        raise Skip
    k = rng.randint(-5, 5)
    a1, a2 = rng.sample(range(nd), 2)
    axes = f", axes=({a1 - nd if rng.random() < .3 else a1}, {a2})" if rng.random() < 0.5 else ""
    return f"np.rot90({x}, {k}{axes})" if rng.random() < 0.7 or axes else f"np.rot90({x})"


def fam_moves(c):
    rng = c.rng
    f = rng.choice(["roll", "tile", "repeat", "triu", "tril"])
    dt = rng.choice(ALL)
    if f in ("triu", "tril"):
        x = c.arg(c.shape(1, 3), dt)
        k = rng.randint(-3, 3)
        return f"np.{f}({x}{', ' + str(k) if rng.random() < .3 else kw(('k', str(k)) if rng.random() < .5 else None)})"
    T = c.shape(1, 3)
    nd = len(T)
    x = c.arg(T, dt)
    if f == "roll":
        r = rng.random()
        if r < 0.3:
            return f"np.roll({x}, {rng.randint(-7, 7)})"
        if r < 0.7:
            return f"np.roll({x}, {rng.randint(-7, 7)}, axis={c.axis_text(nd, False)})"
        k = rng.randint(1, 3)
        sh = [str(rng.randint(-7, 7)) for _ in range(k)]
        ax = [c.axis_text(nd, False) for _ in range(k)]
        return f"np.roll({x}, ({', '.join(sh)},), axis=({', '.join(ax)},))"
    if f == "tile":
        if rng.random() < 0.4:
            return f"np.tile({x}, {rng.randint(0, 3)})"
        reps = [str(rng.randint(0 if rng.random() < .1 else 1, 3)) for _ in range(rng.randint(1, 4))]
        return f"np.tile({x}, ({', '.join(reps)},))"
    reps = rng.randint(0, 3)
    ax = c.axis_text(nd)
    return f"np.repeat({x}, {reps}{kw(('axis', ax))})"


def fam_joins(c):
    rng = c.rng
    f = rng.choice(["concatenate", "concatenate", "stack", "hstack", "vstack", "column_stack"])
    d1 = rng.choice(ALL)
    n = rng.randint(1, 3)
    dts = [d1] + [c.dtype(ALL, d1) for _ in range(n - 1)]
    T = list(c.shape(1, 3))
    nd = len(T)
    if f == "concatenate":
        if rng.random() < 0.15:
            xs = [c.arg(c.shape(1, 3), d) for d in dts]
            return f"np.concatenate(({', '.join(xs)},), axis=None)"
        ax = rng.randint(0, nd - 1)
        xs = []
        for d in dts:
            T[ax] = rng.randint(0, 4)
            xs.append(c.arg(T, d))
        a = rng.choice([str(ax), str(ax - nd)])
        return f"np.concatenate(({', '.join(xs)},){', axis=' + a if a != '0' or rng.random() < .5 else ''})"
    if f == "stack":
        xs = [c.arg(T, d) for d in dts]
        ax = rng.randint(-nd - 1, nd)
        return f"np.stack(({', '.join(xs)},), axis={ax})"
    ax = {"hstack": 1 if nd > 1 else 0, "vstack": 0, "column_stack": 1}[f]
    xs = []
    for d in dts:
        if f == "vstack" and nd == 1:
            pass
        elif f == "column_stack" and nd == 1:
            pass
        elif ax < nd:
            T[ax] = rng.randint(1, 4)
        xs.append(c.arg(T, d))
    return f"np.{f}(({', '.join(xs)},))"


def fam_scans(c):
    rng = c.rng
    f = rng.choice(["cumsum", "cumprod", "accumulate", "reduce", "outer"])
    dt = rng.choice(ALL)
    T = c.shape(1, 3)
    nd = len(T)
    x = c.arg(T, dt, "small")
    if f in ("cumsum", "cumprod"):
        ax = c.axis_text(nd)
        c.tol = "sum"
        c.nterms = int(np.prod(T)) if ax is None else T[int(ax)]
        return f"np.{f}({x}{kw(('axis', ax))})" if rng.random() < 0.6 else \
            f"{x}.{f}({'' if ax is None else 'axis=' + ax})"
    if f == "accumulate":
        uf = rng.choice(["add", "multiply"])
        ax = c.axis_text(nd, False)
        c.tol, c.nterms = "sum", T[int(ax)]
        return f"np.{uf}.accumulate({x}{kw(('axis', ax if rng.random() < .7 or ax != '0' else None))})"
    if f == "reduce":
        uf = rng.choice(["add", "multiply", "maximum", "minimum", "logical_and", "logical_or"])
        if uf in ("maximum", "minimum") and dt == "complex128":
            uf = "add"
        ax = c.axis_text(nd, False)
        c.tol = "sum" if uf in ("add", "multiply") else "exact"
        c.nterms = T[int(ax)]
        if uf in ("maximum", "minimum") and T[int(ax)] == 0:
            raise Skip
        return f"np.{uf}.reduce({x}{kw(('axis', ax if rng.random() < .7 or ax != '0' else None))})"
    uf = rng.choice(["add", "subtract", "multiply", "maximum", "minimum", "hypot"])
    if uf in ("maximum", "minimum", "hypot") and dt == "complex128":
        uf = "multiply"
    if uf == "subtract" and dt == "bool":
        uf = "add"
    d2 = c.dtype(ALL, dt)
    if uf in ("maximum", "minimum", "hypot") and d2 == "complex128":
        d2 = dt
    y = c.arg(c.shape(1, 2), d2, "small")
    c.tol = "ulp" if uf == "hypot" else "exact"
    return f"np.{uf}.outer({x}, {y})"


def fam_select(c):
    rng = c.rng
    f = rng.choice(["average", "clip", "where", "where1"])
    T = c.shape(1, 3)
    nd = len(T)
    if f == "average":
        dt = rng.choice(ALL)
        x = c.arg(T, dt)
        ax = c.axis_text(nd)
        if not c.known and 0 in T and ax is not None and \
                any(d == 0 for j, d in enumerate(T) if j != int(ax) % nd):
            # numpy's scale a.size / avg.size divides by zero
            raise Skip
        c.tol = "sum"
        c.nterms = max(1, int(np.prod(T)) if ax is None else T[int(ax)])
        if rng.random() < 0.5:
            return f"np.average({x}{kw(('axis', ax))})"
        wd = c.dtype(["float32", "float64", "int64"], dt)
        if ax is not None and rng.random() < 0.5:
            w = c.arg((T[int(ax)],), wd, "pos")
        else:
            w = c.arg(T, wd, "pos")
        return f"np.average({x}{kw(('axis', ax))}, weights={w})"
    dt = rng.choice(REAL if f == "clip" else ALL)
    x = c.arg(T, dt)
    if f == "clip":
        lo, hi = sorted(rng.sample([-3, -2, -1, 0, 1, 2, 3], 2))
        if rng.random() < 0.4:
            sub = tuple(1 if rng.random() < 0.3 else d for d in T)
            return f"np.clip({x}, {c.arg(sub, dt, 'small')}, {hi})"
        if dt.startswith("float") and rng.random() < 0.5:
            lo, hi = lo / 2, hi / 2
        if rng.random() < 0.03:      # a compile error today
            return f"np.clip({x}, None, {hi})"
        return f"np.clip({x}, {lo}, {hi})" if rng.random() < 0.6 else f"{x}.clip({lo}, {hi})"
    d2 = c.dtype(ALL, dt)
    y = c.arg(tuple(1 if rng.random() < 0.3 else d for d in T), d2)
    cond = rng.choice([f"{x} > 0", f"{x} != {y}", f"({x} < 1) & ({y} >= 0)"]) \
        if dt != "complex128" and d2 != "complex128" else f"{x} != {y}"
    if f == "where1":
        if "&" in cond or "complex128" in (dt, d2):
            return f"np.where({x} != {y}, {x}, {y})"
        return f"np.where({cond}, {x}, 0)" if dt != "float32" or c.known else \
            f"np.where({cond}, {x}, {y})"
    return f"np.where({cond}, {x}, {y})"


EINSUMS = [("ij,jk->ik", [("i", "j"), ("j", "k")]), ("ij->ji", [("i", "j")]),
           ("ii->i", [("i", "i")]), ("ii", [("i", "i")]), ("ij->", [("i", "j")]),
           ("i,i->", [("i",), ("i",)]), ("ij,j->i", [("i", "j"), ("j",)]),
           ("bij,bjk->bik", [("b", "i", "j"), ("b", "j", "k")]),
           ("i,j->ij", [("i",), ("j",)]), ("ij,ij->i", [("i", "j"), ("i", "j")]),
           ("ij->i", [("i", "j")]), ("ij,kj->ik", [("i", "j"), ("k", "j")]),
           ("ijk->kji", [("i", "j", "k")])]


def fam_products(c):
    rng = c.rng
    pool = ["float32", "float64", "float64", "complex128", "int64", "int32"]
    d1 = rng.choice(pool)
    d2 = c.dtype(pool, d1)
    if rng.random() < 0.3:
        if not c.known and "int32" in (d1, d2):
            raise Skip       # einsum's sums are np.sum's: int32 sums in int64
        spec, subs = rng.choice(EINSUMS)
        ext = {s: rng.randint(1, 4) for s in "bijk"}
        xs = [c.arg(tuple(ext[s] for s in sub), d1 if j == 0 else d2)
              for j, sub in enumerate(subs)]
        ins, _, out = spec.partition("->")
        summed = set(ins.replace(",", "")) - set(out if "->" in spec else
                                                 [ch for ch in ins if ins.count(ch) == 1])
        c.tol, c.nterms = "sum", max(1, int(np.prod([ext[s] for s in summed])))
        return f"np.einsum('{spec}', {', '.join(xs)})"
    # N-D matmul: (..., n, k) @ (..., k, m), 1-D on either side
    k, n, m = rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 4)
    batch = c.shape(0, 2)
    ra = rng.choice(["1d", "2d", "nd", "nd"])
    rb = rng.choice(["1d", "2d", "nd", "nd"])

    def shp(kind, rows, cols, one):
        if kind == "1d":
            return (one,)
        lead = () if kind == "2d" else tuple(1 if rng.random() < 0.3 else d for d in batch[
            rng.randint(0, len(batch)):])
        return lead + (rows, cols)
    x = c.arg(shp(ra, n, k, k), d1)
    y = c.arg(shp(rb, k, m, k), d2)
    c.tol, c.nterms = "sum", k
    return f"{x} @ {y}" if rng.random() < 0.6 else f"np.matmul({x}, {y})"


def fam_order(c):
    rng = c.rng
    f = rng.choice(["sort", "argsort", "median", "unique", "searchsorted", "digitize",
                    "bincount", "histogram", "cov", "corrcoef"])
    if f in ("sort", "argsort"):
        T = c.shape(1, 3)
        nd = len(T)
        stable = f == "sort" or rng.random() < 0.5
        x = c.arg(T, rng.choice(REAL), "nan" if f == "sort" else "any" if stable else "distinct")
        ax = c.axis_text(nd)
        kind = ", kind='stable'" if f == "argsort" and stable else ""
        if ax is None:
            return f"np.{f}({x}, axis=None{kind})"
        if rng.random() < 0.3:
            return f"np.{f}({x}{kind})"
        return f"np.{f}({x}, axis={ax}{kind})" if rng.random() < 0.7 else \
            f"np.{f}({x}, {ax}{kind})"
    if f == "median":
        x = c.arg(c.shape(1, 3), rng.choice(REAL), rng.choice(["any", "nan", "any"]))
        c.tol, c.nterms = "ulp", 2
        return f"np.median({x})"
    if f == "unique":
        x = c.arg(c.shape(1, 3), rng.choice(REAL), rng.choice(["small", "nan"]))
        if rng.random() < 0.4:
            c.stmts.append(f"u, n = np.unique({x}, return_counts=True)")
            return "u, n"
        return f"np.unique({x}{', equal_nan=False' if rng.random() < 0.2 else ''})"
    if f in ("searchsorted", "digitize"):
        d1 = rng.choice(REAL)
        d2 = c.dtype(REAL, d1)
        bins = c.arg((rng.randint(0, 6),), d1, "sorted")
        if f == "digitize" and rng.random() < 0.3:
            bins += "[::-1]"
        v = c.arg(c.shape(0, 2), d2, "any") if rng.random() < 0.85 else \
            rng.choice(["0", "1.5", "-2"])
        if f == "searchsorted":
            side = rng.choice(["", ", side='left'", ", side='right'", ", 'right'"])
            return f"np.searchsorted({bins}, {v}{side})"
        right = rng.choice(["", ", right=True", ", right=False", ", True"])
        return f"np.digitize({v}, {bins}{right})"
    if f == "bincount":
        n = rng.randint(1 if not c.known else 0, 8)
        x = c.arg((n,), rng.choice(["int32", "int64"]), "count")
        parts = [x]
        if rng.random() < 0.4:
            parts.append(f"weights={c.arg((n,), rng.choice(['float64', 'float32', 'int64']))}")
            c.tol, c.nterms = "sum", n
        if rng.random() < 0.4:
            parts.append(f"minlength={rng.randint(0, 9)}")
        return f"np.bincount({', '.join(parts)})"
    if f == "histogram":
        dt = rng.choice(REAL)
        x = c.arg(c.shape(1, 2), dt, "any")
        parts = [x]
        if rng.random() < 0.7:
            parts.append(str(rng.randint(1, 6)) if rng.random() < 0.5 else
                         f"bins={rng.randint(1, 6)}")
        if rng.random() < 0.4:
            lo = rng.randint(-4, 0)
            parts.append(f"range=({lo}, {lo + rng.randint(1, 6)})")
        c.tol, c.nterms = "ulp", 2
        c.stmts.append(f"h, e = np.histogram({', '.join(parts)})")
        return "h, e"
    # cov / corrcoef
    dt = c.dtype(["float64", "float32", "int64", "int32", "complex128"], None)
    nvar, nobs = rng.randint(1 if c.known else 2, 4), rng.randint(2, 6)
    rowvar = rng.random() < 0.7
    shape = (nvar, nobs) if rowvar else (nobs, nvar)
    x = c.arg(shape, dt, "any")
    parts = [x]
    if rng.random() < 0.3:
        parts.append(f"{c.arg(shape, c.dtype(['float64', 'int64'], dt))}")
    if not rowvar:
        parts.append("rowvar=False")
    if f == "cov":
        if rng.random() < 0.3:
            parts.append(f"ddof={rng.randint(0, 2)}")
        elif rng.random() < 0.3:
            parts.append("bias=True")
    c.tol, c.nterms = "sum", nobs * 4
    return f"np.{f}({', '.join(parts)})"


FAMILIES = {"unary": fam_unary, "binary": fam_binary, "axes": fam_axes, "flips": fam_flips,
            "moves": fam_moves, "joins": fam_joins, "scans": fam_scans,
            "select": fam_select, "products": fam_products, "order": fam_order}


# ---- the comparison ------------------------------------------------------------

def reference(case):
    ns = {"np": np}
    exec(compile(case.text(), "<ref>", "exec"), ns)   # noqa: S102 - our own text
    try:
        with np.errstate(all="ignore"):
            return ns[case.name](*[x.copy() for x in case.inputs()])
    except Exception as e:   # noqa: BLE001 - numpy refuses: the kernel must too
        return sf.Raised(e)


def _eps(case, w):
    eps = [sf._eps(w.dtype)] if w.dtype.kind in "fc" else []
    eps += [sf._eps(case.dt[a]) for a in case.args if sf.kind(case.dt[a]) in "fc"]
    return max(eps) if eps else 2.0 ** -52


def compare_one(case, g, w):
    g, w = np.asarray(g), np.asarray(w)
    if g.shape != w.shape:
        return f"shape {g.shape} (numpy {w.shape})"
    if g.dtype != w.dtype:
        return f"dtype {g.dtype} (numpy {w.dtype})"
    if w.dtype.kind not in "fc" or case.tol == "exact":
        same = (g == w) | ((g != g) & (w != w)) if w.dtype.kind in "fc" else g == w
        ok = np.asarray(same)
    else:
        eps = _eps(case, w)
        with np.errstate(all="ignore"):
            if case.tol == "ulp":
                rtol, atol = 4 * eps, 4 * eps
            else:
                n = case.nterms
                m = 1.0
                for a in case.args:
                    x = np.abs(np.asarray(case.data[a], np.complex128))
                    x = x[np.isfinite(x)]
                    if x.size:
                        m = max(m, n * float(x.max()), float(x.max()) ** 2)
                fw = np.abs(w[np.isfinite(w)])
                if fw.size:
                    m = max(m, float(fw.max()))
                rtol = (n + 8) * eps
                atol = rtol * m
            ok = np.isclose(g.astype(np.complex128), w.astype(np.complex128), rtol=rtol,
                            atol=atol, equal_nan=True)
            # an infinity must be the same infinity
            ok &= (np.isinf(g) == np.isinf(w))
    if np.all(ok):
        return None
    if case.tol == "sum" and np.all(np.isfinite(g[~ok])) and not np.any(np.isfinite(w[~ok])) \
            and any(case.dt[a] == "float32" for a in case.args):
        return sf.WIDE_ACC
    bad = np.argwhere(~ok)[:3]
    return "; ".join(f"at {tuple(i)}: asc {g[tuple(i)]!r}, numpy {w[tuple(i)]!r}"
                     for i in bad) or f"asc {g!r}, numpy {w!r}"


def compare(case, got, want):
    if isinstance(want, tuple):
        if not isinstance(got, tuple) or len(got) != len(want):
            return f"asc returned {type(got).__name__}, numpy a tuple of {len(want)}"
        for j, (g, w) in enumerate(zip(got, want)):
            d = compare_one(case, g, w)
            if d is not None:
                return f"[{j}] {d}"
        return None
    if isinstance(got, tuple):
        return "asc returned a tuple"
    # a number numpy gives as a numpy scalar: compared as a 0-d array
    return compare_one(case, got, want)


def judge(case, want, res, stats):
    """Counts one case (array_semantics_fuzz.judge with this comparison)."""
    saved = sf.compare
    sf.compare = compare
    try:
        sf.judge(case, want, res, stats)
    finally:
        sf.compare = saved
    return stats


# ---- running ---------------------------------------------------------------------

def run(args):
    if not os.path.exists(args.ascc):
        sys.exit(f"numpy_fuzz: needs ascc: {args.ascc} does not exist (--ascc PATH)")
    stats = sf.Stats()
    per = {}                       # family -> Counter
    runner = sf.Runner(args.timeout)
    workdir = tempfile.mkdtemp(prefix="asc-npfuzz-")
    t0 = time.monotonic()
    indexes = args.cases or list(range(args.count))
    done = 0
    try:
        while done < len(indexes):
            n = min(args.batch, len(indexes) - done)
            cases, wants = [], {}
            for i in indexes[done:done + n]:
                try:
                    c = Case(args.seed, i, args.funcs, args.known_diffs)
                except Exception:   # noqa: BLE001 - a generator bug: say so
                    stats["generator errors"] += 1
                    stats.reasons["generator: " + traceback.format_exc().splitlines()[-1]] += 1
                    continue
                c.rejected = None
                c.form = c.family
                c.exact = c.tol == "exact"
                wants[c.name] = reference(c)
                cases.append(c)
                stats["cases"] += 1
                if args.show:
                    print(f"# case {c.index} ({c.family}): numpy {wants[c.name]!r:.300}\n{c.text()}")
            done += n
            if not cases:
                continue
            modules = sf.compile_batch(cases, workdir, args, stats)
            before = {}
            for c in cases:
                if c.rejected is not None and args.show_rejected:
                    print(f"# rejected case {c.index}: {sf.short(c.rejected)}\n{c.text()}")
                if c.rejected is not None:
                    _count(per, c, stats, lambda: judge(c, wants[c.name], ("rejected", c.rejected), stats))
            for path, live in modules:
                stats["modules"] += 1
                results = runner.run(path, [(c.name, c.jobs()) for c in live])
                for c, res in zip(live, results):
                    stats["compiled"] += 1
                    _count(per, c, stats, lambda: judge(c, wants[c.name], res, stats),
                           compiled=True)
            del before
            for f in Path(workdir).glob("m_*"):
                f.unlink()
            if args.progress and done % (args.batch * 4) == 0:
                print(f"... {done} cases, {stats['mismatched']} mismatched, "
                      f"{time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    finally:
        runner.close()
    secs = time.monotonic() - t0
    print(f"numpy_fuzz seed={args.seed} count={len(indexes)} batch={args.batch} "
          f"opt={args.opt} funcs={','.join(args.funcs)}")
    for k in ("cases", "compiled", "matched", "both raised", "documented difference",
              "mismatched", "crashed", "internal error", "rejected",
              "numpy raises, asc rejects when compiling", "generator errors"):
        print(f"  {k:42s} {stats[k]}")
    print(f"  modules {stats['modules']}; {stats.compile_secs:.1f} s in ascc; "
          f"{secs:.1f} s ({stats['cases'] / secs if secs else 0:.1f} cases/s)")
    print("by family (cases / compiled / matched / mismatched+crashed+ICE / rejected):")
    for fam in sorted(per):
        p = per[fam]
        print(f"  {fam:10s} {p['cases']:7d} {p['compiled']:7d} {p['matched']:7d} "
              f"{p['bad']:5d} {p['rejected']:7d}")
    print("by message:")
    for msg, k in stats.reasons.most_common(args.max_reasons):
        print(f"  {k:6d}  {msg}")
    for case, detail, want in stats.failures[:args.max_failures]:
        print(f"\n--- seed {case.seed} case {case.index} ({case.family}): {detail}")
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


def _count(per, c, stats, judge_fn, compiled=False):
    """Runs judge_fn and books its outcome under the case's family."""
    keys = ("matched", "mismatched", "crashed", "internal error", "rejected",
            "numpy raises, asc rejects when compiling", "documented difference")
    before = {k: stats[k] for k in keys}
    judge_fn()
    p = per.setdefault(c.family, sf.collections.Counter())
    p["cases"] += 1
    p["compiled"] += compiled
    d = {k: stats[k] - before[k] for k in keys}
    p["matched"] += d["matched"]
    p["bad"] += d["mismatched"] + d["crashed"] + d["internal error"]
    p["rejected"] += d["rejected"] + d["numpy raises, asc rejects when compiling"]


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        sf.worker()
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--batch", type=int, default=100, help="cases per compiled module")
    ap.add_argument("--opt", type=int, choices=[0, 1, 2, 3], default=0)
    ap.add_argument("--funcs", default=",".join(FAMILIES),
                    help="families to draw from, comma separated ('list' prints them)")
    ap.add_argument("--known-diffs", action="store_true",
                    help="generate the documented differences too")
    ap.add_argument("--ascc", default=os.environ.get("ASCC") or str(
        Path(os.environ.get("ASC_BUILD_DIR", ROOT / "build")) / "ascc"))
    ap.add_argument("--cases", type=lambda t: [int(x) for x in t.split(",")],
                    help="run only these case numbers of the seed (a failure's repro)")
    ap.add_argument("--show", action="store_true", help="print every kernel")
    ap.add_argument("--repro", action="store_true", help="print the failures' inputs")
    ap.add_argument("--show-rejected", action="store_true",
                    help="print each kernel the compiler rejects, with its message")
    ap.add_argument("--progress", action="store_true")
    ap.add_argument("--max-failures", type=int, default=10)
    ap.add_argument("--max-reasons", type=int, default=40)
    ap.add_argument("--timeout", type=float, default=120)
    args = ap.parse_args()
    if args.funcs == "list":
        print("\n".join(FAMILIES))
        return 0
    args.funcs = args.funcs.split(",")
    bad = [f for f in args.funcs if f not in FAMILIES]
    if bad:
        ap.error(f"unknown --funcs {','.join(bad)} (known: {','.join(FAMILIES)})")
    if not 1 <= args.batch <= sf.ASCC_MAX_SIGNATURES:
        ap.error(f"--batch takes 1 to {sf.ASCC_MAX_SIGNATURES}")
    os.environ.setdefault("ASC_CACHE_DIR", tempfile.mkdtemp(prefix="asc-npfuzz-cache-"))
    os.environ.setdefault("ASC_CC_TIMEOUT_MS", "900000")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
