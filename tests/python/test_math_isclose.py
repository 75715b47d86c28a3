"""math.isclose in kernels (front/rewrite.c, math_isclose; docs/types.md):
Python's answer for every pair of a table of floats with zeros of both
signs, neighbours, subnormal-scale values, infinities and NaN, integers,
with default and given tolerances, in a loop over arrays, and the compile
error of an operand that calls a helper."""
import math

import numpy as np
import pytest

asc = pytest.importorskip("asc")

SRC = '''
import math
import asc


@asc.kernel
def close(a, b):
    return math.isclose(a, b)


@asc.kernel
def close_tol(a, b, rt, at):
    return math.isclose(a, b, rel_tol=rt, abs_tol=at)


@asc.kernel
def count_close(x, y):
    n = 0
    for i in range(x.shape[0]):
        if math.isclose(x[i], y[i], rel_tol=1e-6):
            n += 1
    return n
'''

VALS = [0.0, -0.0, 1.0, 1.0 + 1e-10, 1.0 + 1e-8, -1.0, 1e-300, 2e-300,
        math.inf, -math.inf, math.nan, 1e308, -1e308]
TOLS = [(1e-3, 0.0), (0.0, 1e-9), (0.5, 2.0), (0.0, 0.0), (1e-9, 1e-300)]


@pytest.fixture(scope="module")
def mod():
    return asc.compile(SRC)


def test_defaults_against_python(mod):
    for a in VALS:
        for b in VALS:
            assert mod.close(a, b) == math.isclose(a, b), (a, b)


def test_tolerances_against_python(mod):
    for a in VALS:
        for b in VALS:
            for rt, at in TOLS:
                assert mod.close_tol(a, b, rt, at) == \
                    math.isclose(a, b, rel_tol=rt, abs_tol=at), (a, b, rt, at)


def test_integers(mod):
    for a, b in ((3, 3), (3, 4), (10**15, 10**15 + 1), (0, 0)):
        assert mod.close(a, b) == math.isclose(a, b), (a, b)


def test_in_a_loop(mod):
    r = np.random.default_rng(0)
    x = r.random(1000)
    y = x * (1 + r.choice([0.0, 1e-7, 1e-5], 1000))
    assert mod.count_close(x, y) == sum(
        math.isclose(p, q, rel_tol=1e-6) for p, q in zip(x, y))


def test_a_helper_call_as_operand_is_a_compile_error():
    src = ("import math\nimport asc\n\n@asc.func\ndef twice(x):\n"
           "    return x * 2.0\n\n@asc.kernel\ndef f(a):\n"
           "    return math.isclose(twice(a), 2.0)\n")
    with pytest.raises(asc.CompileError, match="reads each operand"):
        asc.compile(src).f(4.0)
