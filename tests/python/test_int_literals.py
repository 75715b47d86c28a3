"""Expressions of integer literals are computed exactly, as Python computes
them, before they get a type (docs/types.md, "Integer literals"): the
value is one weak int that must fit the type it gets; a value outside
int64 is a compile error."""
import ast
import operator
import random

import numpy as np
import pytest

import asc

I64 = (-2 ** 63, 2 ** 63 - 1)
U64 = 2 ** 64 - 1
W = (-2 ** 127, 2 ** 127 - 1)


def _expr(rng, depth):
    if depth == 0 or rng.random() < 0.25:
        v = rng.choice([0, 1, 2, 3, 7, 10, 255, 1000, 100000, 2 ** 31, 2 ** 40])
        return str(v)
    if rng.random() < 0.15:
        return f"{rng.choice(['-', '~', '+', '- -'])}({_expr(rng, depth - 1)})"
    op = rng.choice(["+", "-", "*", "//", "%", "**", "<<", ">>", "&", "|", "^"])
    a = _expr(rng, depth - 1)
    if op == "**":
        b = str(rng.randint(0, 5))
    elif op in ("<<", ">>"):
        b = str(rng.randint(0, 70))
    elif op in ("//", "%"):
        b = rng.choice(["3", "-7", "1000", "(2 ** 20)"])
    else:
        b = _expr(rng, depth - 1)
    return f"({a} {op} {b})"


_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
        ast.Pow: operator.pow, ast.LShift: operator.lshift,
        ast.RShift: operator.rshift, ast.BitAnd: operator.and_,
        ast.BitOr: operator.or_, ast.BitXor: operator.xor}
_UN = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}


def _exact(src):
    """Python's value, and whether every intermediate value fits 127 bits
    (the compiler folds in 128-bit integers and reports any overflow)."""
    fits = True

    def ev(n):
        nonlocal fits
        if isinstance(n, ast.Constant):
            v = n.value
        elif isinstance(n, ast.UnaryOp):
            v = _UN[type(n.op)](ev(n.operand))
        else:
            v = _BIN[type(n.op)](ev(n.left), ev(n.right))
        if not W[0] <= v <= W[1]:
            fits = False
        return v

    v = ev(ast.parse(src, mode="eval").body)
    return v, fits and I64[0] <= v <= U64


def _cases(n, seed):
    rng = random.Random(seed)
    good, bad = [], []
    while len(good) < n or len(bad) < 8:
        e = _expr(rng, 3)
        v, fits = _exact(e)
        if not fits:
            bad.append((e, v))
        elif v <= I64[1]:
            good.append((e, v))
    return good[:n], bad[:8]


def test_literal_expressions_are_python_exact():
    good, _ = _cases(120, 1)
    body = "".join(f"    o[{k}] = {e}\n" for k, (e, _) in enumerate(good))
    k = asc.compile("import asc\n@asc.kernel\ndef k(o):\n" + body).k
    out = np.zeros(len(good), np.int64)
    k(out)
    assert list(out) == [v for _, v in good]
    assert any(abs(v) > 2 ** 40 for _, v in good)
    # intermediate values past int64 are exact too, as in Python
    assert any(not _fits_throughout(e, *I64) for e, _ in good)


def test_int64_and_uint64_limits():
    k = asc.compile("""
import asc
@asc.kernel
def k(o, u):
    o[0] = 2 ** 63 - 1
    o[1] = -(2 ** 63)
    o[2] = (2 ** 100) // (2 ** 70)
    u[0] = 2 ** 64 - 1
""").k
    o = np.zeros(3, np.int64)
    u = np.zeros(1, np.uint64)
    k(o, u)
    assert list(o) == [2 ** 63 - 1, -2 ** 63, 2 ** 30]
    assert int(u[0]) == 2 ** 64 - 1


def test_int32_context_gets_the_exact_value():
    """The value fits int32 although parts of the expression do not: an
    int32 store used to compute the whole expression in int32 (wrapping)."""
    good, _ = _cases(300, 11)
    small = [(e, v) for e, v in good if -2 ** 31 <= v < 2 ** 31]
    wide = [(e, v) for e, v in small if not _fits_throughout(e, -2 ** 31, 2 ** 31 - 1)]
    assert len(wide) >= 10
    body = "".join(f"    o[{k}] = {e}\n" for k, (e, _) in enumerate(wide))
    k = asc.compile("import asc\n@asc.kernel\ndef k(o):\n" + body).k
    out = np.zeros(len(wide), np.int32)
    k(out)
    assert list(out) == [v for _, v in wide]


def _fits_throughout(src, lo, hi):
    ok = True

    def ev(n):
        nonlocal ok
        if isinstance(n, ast.Constant):
            v = n.value
        elif isinstance(n, ast.UnaryOp):
            v = _UN[type(n.op)](ev(n.operand))
        else:
            v = _BIN[type(n.op)](ev(n.left), ev(n.right))
        ok = ok and lo <= v <= hi
        return v

    ev(ast.parse(src, mode="eval").body)
    return ok


def test_values_past_what_a_literal_can_be_are_an_error():
    _, bad = _cases(0, 7)
    for e in [e for e, _ in bad] + ["(100000 ** 2) ** 2", "2 ** 64",
                                    "-(2 ** 63) - 1", "2 ** 200 // 2 ** 190"]:
        with pytest.raises(asc.CompileError, match="integer literal too large"):
            asc.compile(f"import asc\n@asc.kernel\ndef k(o):\n    o[0] = {e}\n"
                        ).k(np.zeros(1, np.int64))


SRC = """
import asc

@asc.kernel
def local(o):
    x = 100000 * 100000
    o[0] = x

@asc.kernel
def store(o):
    o[0] = 100000 * 100000

@asc.kernel
def mixed(o, p):
    o[0] = p[0] + 1000 * 1000
    o[1] = p[0] * -(2 ** 10)
"""


def test_the_value_takes_the_context_type():
    m = asc.compile(SRC)
    o = np.zeros(1, np.int64)
    m.local(o)
    assert o[0] == 10 ** 10
    m.store(o)
    assert o[0] == 10 ** 10
    # int32: 1000 * 1000 fits and is computed exactly; 10**10 does not fit,
    # where numpy raises OverflowError (Python integer out of bounds)
    o32 = np.zeros(2, np.int32)
    m.mixed(o32, np.array([5], np.int32))
    assert list(o32) == [1000005, -5120]
    with pytest.raises(asc.CompileError,
                       match="integer literal 10000000000 does not fit in int32"):
        m.store(np.zeros(1, np.int32))
    with pytest.raises(OverflowError):
        np.zeros(1, np.int32)[0] = 100000 * 100000
    with pytest.raises(asc.CompileError,
                       match="integer literal 1099511627776 does not fit in int32"):
        asc.compile("import asc\n@asc.kernel\ndef k(o, p):\n"
                    "    o[0] = p[0] * (2 ** 20 * 2 ** 20)\n").k(
            np.zeros(1, np.int32), np.ones(1, np.int32))
