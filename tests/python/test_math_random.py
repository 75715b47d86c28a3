"""Random scalar math in loops against CPython: kernels of `s += <expr>`
over arrays, with math functions (the vector-math chunks of vmchunk, the
checks of math's errors, constants licm hoists), optionally a branch;
each kernel's value, or its exception's type, is CPython's running the
same function.  An internal compiler error fails at once (one found this
way: a check computed before the loop, test_vmchunk)."""
import math
import random

import numpy as np
import pytest

import asc

FUN1 = ["math.exp", "math.log", "math.sqrt", "math.erf", "math.sin",
        "math.cos", "math.tanh", "math.atan", "abs", "math.floor",
        "math.log1p", "math.expm1", "math.cbrt", "math.asinh", "math.gamma"]
LEAVES = ["a[i]", "b[i]", "1.5", "0.25", "float(i)", "x", "2.0"]


def expr(rng, d):
    if d == 0 or rng.random() < 0.3:
        return rng.choice(LEAVES)
    k = rng.random()
    if k < 0.45:
        return f"{rng.choice(FUN1)}({expr(rng, d - 1)})"
    if k < 0.85:
        op = rng.choice(["+", "-", "*"])
        return f"({expr(rng, d - 1)} {op} {expr(rng, d - 1)})"
    return f"{rng.choice(['min', 'max'])}({expr(rng, d - 1)}, {expr(rng, d - 1)})"


def kernel_text(rng):
    body = ("    s = 0.0\n    for i in range(a.shape[0]):\n"
            f"        s += {expr(rng, 3)}\n")
    if rng.random() < 0.5:
        body += (f"        if {expr(rng, 2)} > 3.0:\n"
                 f"            s -= {expr(rng, 2)}\n")
    return "def k(a, b, x):\n" + body + "    return s\n"


def outcome(f, *args):
    try:
        return f(*args), None
    except (ValueError, OverflowError, ZeroDivisionError) as e:
        return None, type(e)


@pytest.mark.parametrize("seed", range(24))
def test_random_math_loop_is_cpythons(seed):
    rng = random.Random(seed)
    fn = kernel_text(rng)
    env = {"math": math}
    exec(fn, env)
    a = np.linspace(0.1, 2.0, 300)
    b = np.linspace(-1.0, 1.0, 300)
    want, werr = outcome(env["k"], a, b, 0.7)
    k = asc.compile("import asc\nimport math\n\n@asc.kernel\n" + fn).k
    got, gerr = outcome(k, a, b, 0.7)
    assert gerr == werr, fn
    if werr is None:
        assert got == pytest.approx(want, rel=1e-9, abs=1e-9, nan_ok=True), fn
