"""Fusion across statements (docs/optimizer.md, "Fusion across
statements"): a local array defined by an elementwise expression and read
once, element by element, by the next statement is computed in that
statement's loops instead of being made.  The results are bit for bit
those of the unfused code (ASC_FUSE=0) and numpy's; numpy's aliasing rules
hold; each decision is an IR note; a random program generator checks all
of it over many shapes of code."""
import os
import random

import numpy as np
import pytest

from envvars import ascc_ir, env

asc = pytest.importorskip("asc")


def run_both(src, name, make_args):
    """The kernel run fused and unfused on fresh copies of the arguments:
    (result, arguments after) of each."""
    outs = []
    for fuse in ("1", "0"):
        with env(ASC_FUSE=fuse):   # read when the kernel compiles
            m = asc.compile(src)
            args = make_args()
            r = getattr(m, name)(*args)
            outs.append((r, args))
    return outs


def same_bits(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape,
                                                       a.dtype, b.dtype)
    assert np.ascontiguousarray(a).tobytes() == \
        np.ascontiguousarray(b).tobytes(), (a, b)


def ir_of(src, sig, tmp_path):
    f = tmp_path / "k.py"
    f.write_text(src)
    return ascc_ir(f, sig)


ROSEN = '''
import numpy as np
import asc

@asc.kernel
def rosen(x):
    d = x[1:] - x[:-1] ** 2
    e = 1 - x[:-1]
    return np.sum(100.0 * d ** 2 + e ** 2)
'''


def test_rosenbrock_fused_reads_x_once(tmp_path):
    ir = ir_of(ROSEN, "rosen(f64[:])", tmp_path)
    assert "fuse: 'd' (line 7) is computed in this statement's loops" in ir
    assert "fuse: 'e' (line 8) is computed in this statement's loops" in ir
    assert "new_array" not in ir
    x = np.random.default_rng(1).random(10001)
    (r1, _), (r0, _) = run_both(ROSEN, "rosen", lambda: (x.copy(),))
    same_bits(r1, r0)
    want = np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    assert np.isclose(r1, want, rtol=1e-12)


NOTES = '''
import numpy as np
import asc

@asc.kernel
def twice(a, out):
    t = np.exp(a)
    out[:] = t * t + t

@asc.kernel
def two_statements(a, out):
    t = a * 2.0
    out[:] = t
    out[:] += t

@asc.kernel
def broadcast(a, m, out):
    t = a * 2.0
    out[:, :] = m + t

@asc.kernel
def in_loop(a, out):
    t = a + 1.0
    for i in range(3):
        out[:] += t

@asc.kernel
def between(a, b, out):
    t = a + 1.0
    b[0] = 5.0
    out[:] = t

@asc.kernel
def cheap_twice(a, out):
    t = a - 1.0
    out[:] = t * t

@asc.kernel
def centered(x, out):
    d = x - np.mean(x)
    out[:] = d * 2.0

@asc.kernel
def centered_sq(x):
    d = x - np.mean(x)
    return np.sum(d * d)

@asc.kernel
def moments(x):
    mu = np.mean(x)
    d = x - mu
    v = np.sum(d * d)
    s = np.sum(d * d * d)
    return v, s
'''


@pytest.mark.parametrize("sig,expect", [
    ("twice(f64[:], f64[:])",
     "fuse: 't' is stored: computing it 3 times costs more"),
    ("two_statements(f64[:], f64[:])",
     "fuse: 't' is stored: the statement at line 13 runs between its "
     "definition and a later reader"),
    ("broadcast(f64[:], f64[:, :], f64[:, :])",
     "fuse: 't' is stored: line 19 reads it whole, in a loop or branch, "
     "or broadcast against more axes"),
    ("in_loop(f64[:], f64[:])",
     "fuse: 't' is stored: line 24 reads it whole, in a loop or branch"),
    ("between(f64[:], f64[:], f64[:])",
     "fuse: 't' is stored: the statement at line 30 runs between"),
    ("cheap_twice(f64[:], f64[:])",
     "fuse: 't' (line 35) is computed in this statement's loops at each "
     "of its reads, not stored"),
    ("centered(f64[:], f64[:])",
     "fuse: 'd' (line 40) is computed in this statement's loops, not "
     "stored"),
    ("centered_sq(f64[:])",
     "fuse: 'd' is stored: a number in it takes a pass of its own, which "
     "each read would run again"),
    ("moments(f64[:])",
     "fuse: 'd' (line 51) is computed in this statement's loops at each "
     "of its reads, not stored"),
])
def test_each_decision_is_a_note(tmp_path, sig, expect):
    ir = ir_of(NOTES, sig, tmp_path)
    assert expect in ir, ir


def test_notes_kernels_agree_with_numpy():
    rng = np.random.default_rng(2)
    a = rng.random(50)
    m = rng.random((4, 50))
    with env(ASC_FUSE=None):
        k = asc.compile(NOTES)
        out = np.zeros(50)
        k.twice(a, out)
        np.testing.assert_allclose(out, np.exp(a) ** 2 + np.exp(a),
                                   rtol=1e-14)
        out = np.zeros(50)
        k.two_statements(a, out)
        same_bits(out, a * 2.0 + a * 2.0)
        out = np.zeros((4, 50))
        k.broadcast(a, m, out)
        same_bits(out, m + a * 2.0)
        out = np.zeros(50)
        k.in_loop(a, out)
        same_bits(out, (a + 1.0) * 3)
        out = np.zeros(50)
        b = np.zeros(3)
        k.between(a, b, out)
        same_bits(out, a + 1.0)
        assert b[0] == 5.0
        out = np.zeros(50)
        k.cheap_twice(a, out)
        same_bits(out, (a - 1.0) * (a - 1.0))
    (_, a1), (_, a0) = run_both(NOTES, "centered",
                                lambda: (a.copy(), np.zeros(50)))
    same_bits(a1[1], a0[1])
    np.testing.assert_allclose(a1[1], (a - np.mean(a)) * 2.0, rtol=1e-13,
                               atol=1e-15)
    (r1, _), (r0, _) = run_both(NOTES, "moments", lambda: (a.copy(),))
    same_bits(np.array(r1), np.array(r0))
    d = a - np.mean(a)
    np.testing.assert_allclose(r1, (np.sum(d * d), np.sum(d * d * d)),
                               rtol=1e-12)


ALIAS = '''
import numpy as np
import asc

@asc.kernel
def reverse_into(x):
    t = x[::-1] * 2.0
    x[:] = t

@asc.kernel
def shift_into(x):
    t = x[1:] + x[:-1]
    x[1:] = t

@asc.kernel
def add_self(x):
    t = x * 3.0
    x[:] += t

@asc.kernel
def add_reversed(x):
    t = x[::-1] + 0.5
    x[:] += t

@asc.kernel
def chain(x, y):
    t = x * 2.0
    u = t + y
    v = u * u
    return v - t

@asc.kernel
def ints(a, b):
    t = a * b
    u = t + 1
    return u * 0.5

@asc.kernel
def mask_of(x):
    t = x > 0.5
    return np.where(t, x, -x)

@asc.kernel
def reduce_axis(x):
    t = x * x
    return t.sum(axis=0)

@asc.kernel
def var_of(x):
    t = x + 1.0
    return np.var(t)

@asc.kernel
def in_prange(x, out):
    for i in asc.prange(x.shape[0]):
        r = x[i, :] * 2.0
        out[i, :] = r + 1.0

@asc.kernel
def bad_shapes(a, b, out):
    t = a + b
    out[:] = t * 2.0
'''


def check_alias(name, make, want):
    (r1, a1), (r0, a0) = run_both(ALIAS, name, make)
    for x, y in zip(a1, a0):
        same_bits(x, y)
    if r1 is not None:
        same_bits(r1, r0)
    got = r1 if r1 is not None else a1[0]
    if want is not None:
        np.testing.assert_allclose(got, want, rtol=1e-13)


def test_numpy_aliasing_holds():
    x = np.arange(10.0)
    check_alias("reverse_into", lambda: (x.copy(),), x[::-1] * 2.0)
    w = x.copy()
    w[1:] = x[1:] + x[:-1]
    check_alias("shift_into", lambda: (x.copy(),), w)
    check_alias("add_self", lambda: (x.copy(),), x + x * 3.0)
    check_alias("add_reversed", lambda: (x.copy(),), x + (x[::-1] + 0.5))


def test_chains_dtypes_masks_reductions():
    rng = np.random.default_rng(3)
    x = rng.random(33)
    y = rng.random(33)
    t = x * 2.0
    check_alias("chain", lambda: (x.copy(), y.copy()),
                (t + y) * (t + y) - t)
    a = rng.integers(-2**31, 2**31 - 1, 40, dtype=np.int32)
    b = rng.integers(-2**31, 2**31 - 1, 40, dtype=np.int32)
    with np.errstate(over="ignore"):
        check_alias("ints", lambda: (a.copy(), b.copy()),
                    ((a * b) + 1) * 0.5)
    check_alias("mask_of", lambda: (x.copy(),), np.where(x > 0.5, x, -x))
    m = rng.random((7, 5))
    check_alias("reduce_axis", lambda: (m.copy(),), (m * m).sum(axis=0))
    check_alias("var_of", lambda: (x.copy(),), np.var(x + 1.0))
    (r, args), _ = run_both(ALIAS, "in_prange",
                            lambda: (m.copy(), np.zeros((7, 5))))
    same_bits(args[1], m * 2.0 + 1.0)


def test_broadcast_error_still_raised():
    with env(ASC_FUSE=None):
        k = asc.compile(ALIAS)
        with pytest.raises(ValueError, match="broadcast"):
            k.bad_shapes(np.zeros(3), np.zeros(4), np.zeros(3))
        out = np.zeros(3)
        k.bad_shapes(np.ones(3), np.ones(1), out)
        same_bits(out, np.full(3, 4.0))


# ------------------------------------------------------ random programs

def gen_program(rng):
    """A kernel of 2-5 local arrays over x, y (1-D, same length n), each
    read by later statements in one of several ways, and a consumer; the
    expected value is the same text run by numpy."""
    views = ["x", "y", "x[1:]", "y[:-1]", "x[::-1][1:]", "y[1:]"]
    n_tmp = rng.randint(2, 5)
    names = []
    lines = []
    # every operand of a statement is over n - 1 elements
    base = {"x": "x[1:]", "y": "y[1:]", "x[1:]": "x[:-1]",
            "y[:-1]": "y[:-1]", "x[::-1][1:]": "x[::-1][1:]",
            "y[1:]": "y[1:]"}

    def leaf():
        if names and rng.random() < 0.6:
            return rng.choice(names)
        return base[rng.choice(views)]

    def expr(depth=0):
        r = rng.random()
        if depth > 2 or r < 0.3:
            return leaf()
        if r < 0.45:
            return f"({expr(depth + 1)} * {rng.choice(['2.0', '0.5', '-1.5'])})"
        if r < 0.55:
            return f"np.abs({expr(depth + 1)})"
        if r < 0.62:
            return f"np.maximum({expr(depth + 1)}, {expr(depth + 1)})"
        if r < 0.68:
            return f"np.where({expr(depth + 1)} > 0.5, {expr(depth + 1)}, 1.0)"
        if r < 0.74:
            return f"np.sqrt(np.abs({expr(depth + 1)}) + 1.0)"
        op = rng.choice(["+", "-", "*"])
        return f"({expr(depth + 1)} {op} {expr(depth + 1)})"

    for k in range(n_tmp):
        nm = f"t{k}"
        lines.append(f"    {nm} = {expr()}")
        names.append(nm)
        if rng.random() < 0.15:
            lines.append(f"    acc[0] += 1.0")   # a statement between
    last = rng.choice(names)
    form = rng.randrange(5)
    if form == 0:
        lines.append(f"    return np.sum({expr()} + {last})")
    elif form == 1:
        lines.append(f"    out[:] = {expr()} - {last}")
        lines.append("    return out")
    elif form == 2:
        lines.append(f"    out += {expr()} * {last}")
        lines.append("    return out")
    elif form == 3:
        lines.append(f"    return {expr()} + {last}")
    else:
        lines.append(f"    return np.max({expr()} * {last})")
    body = "\n".join(lines)
    v = "asc.Tensor[asc.float64, 1]"
    return ("import numpy as np\nimport asc\n\n@asc.kernel\n"
            f"def k(x: {v}, y: {v}, out: {v}, acc: {v}):\n{body}\n",
            f"def k(x, y, out, acc):\n{body}\n")


@pytest.mark.parametrize("seed", range(int(os.environ.get(
    "ASC_FUSION_FUZZ_SEEDS", "4"))))
def test_random_programs(seed):
    """Each random kernel: fused and unfused give the same bits, arguments
    included, and numpy's value (close: reductions sum in another order,
    sqrt is exact either way)."""
    rng = random.Random(seed)
    data = np.random.default_rng(seed)
    srcs = [gen_program(rng) for _ in range(4)]
    n = int(data.integers(2, 300))
    x = data.standard_normal(n)
    y = data.standard_normal(n)
    out0 = data.standard_normal(n - 1)
    for src, pysrc in srcs:
        def make():
            return (x.copy(), y.copy(), out0.copy(), np.zeros(1))
        (r1, a1), (r0, a0) = run_both(src, "k", make)
        same_bits(r1, r0)
        for p, q in zip(a1, a0):
            same_bits(p, q)
        env = {"np": np}
        exec(pysrc, env)
        args = make()
        want = env["k"](*args)
        np.testing.assert_allclose(r1, want, rtol=1e-9, atol=1e-9,
                                   err_msg=src)


def test_long_blocks_plan_in_linear_time(tmp_path):
    """3000 definitions, two read only by the last statement: planning
    looks 64 statements ahead at most (a note says so), and the last
    statement's own operand still fuses."""
    lines = ["import numpy as np", "import asc", "", "@asc.kernel",
             "def far(x):"]
    lines += [f"    t{i} = x * {i}.0" for i in range(3000)]
    lines.append("    return t0 + t2999 + t1500")
    src = "\n".join(lines) + "\n"
    ir = ir_of(src, "far(f64[:])", tmp_path)
    assert "fuse: 't0' is stored: its readers are more than 64 " \
        "statements after it" in ir
    assert "fuse: 't2999' (line 3005) is computed" in ir
