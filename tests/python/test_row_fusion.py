"""Row-wise fusion of reductions along the last axis with keepdims=True
(docs/optimizer.md, "Fusion across statements", rows): such a reduction
inside a larger expression stored by one loop nest is computed once per
row, between the row loops and the loop along the row, instead of being
made first into a temporary; a local defined by one and read once there
is fused into its reader.  softmax becomes a max-and-exp pass and a
sum-and-divide pass over each row, parallel across rows.  Each row's
reduction runs the same loop in the same order as when made first, so
the results are bit for bit those of ASC_FUSE=0 and numpy's to rounding."""
import os
import random

import numpy as np
import pytest

from test_fusion import ir_of, run_both, same_bits

asc = pytest.importorskip("asc")

SRC = '''
import numpy as np
import asc

@asc.kernel
def softmax(x):
    tmp_max = np.max(x, axis=-1, keepdims=True)
    tmp_out = np.exp(x - tmp_max)
    tmp_sum = np.sum(tmp_out, axis=-1, keepdims=True)
    return tmp_out / tmp_sum

@asc.kernel
def softmax_inline(x):
    m = np.max(x, axis=1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=1, keepdims=True)

@asc.kernel
def layer_norm(x, g, b):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b

@asc.kernel
def rms_norm(x, w):
    return x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + 1e-6) * w

@asc.kernel
def normalise_into(x, out):
    s = np.sum(x, axis=-1, keepdims=True)
    out[...] = x / s

@asc.kernel
def normalise_in_place(x):
    x[...] = x / np.sum(x, axis=-1, keepdims=True)

@asc.kernel
def shifted_rows(x):
    x[1:] = x[:-1] / np.sum(x[:-1], axis=-1, keepdims=True)

@asc.kernel
def broadcast_more(y, x):
    return y - np.max(x, axis=-1, keepdims=True)

@asc.kernel
def int_rows(a):
    return a - np.sum(a, axis=-1, keepdims=True)

@asc.kernel
def std_rows(x):
    return (x - x.mean(axis=-1, keepdims=True)) / x.std(axis=-1, keepdims=True)
'''


def np_softmax(x):
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=-1, keepdims=True)


def np_layer_norm(x, g, b):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


def test_softmax_notes_and_no_temporaries(tmp_path):
    ir = ir_of(SRC, "softmax(f64[:,:,:,:])", tmp_path)
    assert ("fuse: 'tmp_max' (line 7) is computed in this statement's "
            "loops, once per row before the row's elements") in ir
    assert ("fuse: 'tmp_sum' (line 9) is computed in this statement's "
            "loops, once per row before the row's elements") in ir
    assert "fuse: 'tmp_out' is stored" in ir
    # tmp_out and the result: nothing of the reduced shape
    assert ir.count("new_array") == 2, ir.count("new_array")
    assert "1:i64 @" not in ir.split("new_array")[1].split("\n")[0]


def test_inline_reduction_is_per_row_without_fusion(tmp_path):
    # not a fusion decision: the lowering of e / e.sum(axis=1, keepdims)
    ir = ir_of(SRC, "softmax_inline(f64[:,:])", tmp_path)
    news = [l for l in ir.splitlines() if "new_array" in l]
    assert len(news) == 2 and all("1:i64" not in l for l in news), news


def test_refusals_name_their_reason(tmp_path):
    ir = ir_of(SRC, "layer_norm(f64[:,:], f64[:], f64[:])", tmp_path)
    assert ("fuse: 'mu' is stored: a reduction per row, read more than "
            "once: each read would run it again") in ir
    assert "fuse: 'var' (line 21) is computed in this statement's loops, " \
           "once per row" in ir


@pytest.mark.parametrize("shape", [(32, 8, 16, 64), (3, 2, 5, 1), (1, 1, 1, 300),
                                   (2, 3, 4, 129)])
def test_softmax_4d_bitwise_and_numpy(shape):
    x = np.random.default_rng(sum(shape)).standard_normal(shape) * 4
    (r1, _), (r0, _) = run_both(SRC, "softmax", lambda: (x.copy(),))
    same_bits(r1, r0)
    np.testing.assert_allclose(r1, np_softmax(x), rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_two_d_kernels(dtype):
    r = np.random.default_rng(7)
    x = r.standard_normal((57, 130)).astype(dtype)
    g = r.standard_normal(130).astype(dtype)
    b = r.standard_normal(130).astype(dtype)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    for name, args, want in (
            ("softmax_inline", (x,), np_softmax(x)),
            ("layer_norm", (x, g, b), np_layer_norm(x, g, b)),
            ("rms_norm", (x, g),
             x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + 1e-6) * g),
            ("std_rows", (x,), (x - x.mean(axis=-1, keepdims=True)) /
             x.std(axis=-1, keepdims=True))):
        (r1, _), (r0, _) = run_both(SRC, name,
                                    lambda: tuple(a.copy() for a in args))
        same_bits(r1, r0)
        np.testing.assert_allclose(r1, want, rtol=tol, atol=tol)


def test_stores_in_place_and_overlapping():
    r = np.random.default_rng(11)
    x = r.random((9, 14)) + 0.5
    (_, a1), (_, a0) = run_both(
        SRC, "normalise_into", lambda: (x.copy(), np.empty_like(x)))
    same_bits(a1[1], a0[1])
    np.testing.assert_allclose(a1[1], x / x.sum(axis=-1, keepdims=True),
                               rtol=1e-14)
    (_, a1), (_, a0) = run_both(SRC, "normalise_in_place", lambda: (x.copy(),))
    same_bits(a1[0], a0[0])
    np.testing.assert_allclose(a1[0], x / x.sum(axis=-1, keepdims=True),
                               rtol=1e-14)
    # rows read before any is written: numpy's copy on overlap
    (_, a1), (_, a0) = run_both(SRC, "shifted_rows", lambda: (x.copy(),))
    want = x.copy()
    want[1:] = x[:-1] / np.sum(x[:-1], axis=-1, keepdims=True)
    same_bits(a1[0], a0[0])
    np.testing.assert_allclose(a1[0], want, rtol=1e-14)


def test_broadcast_ints_and_empty_rows():
    m = asc.compile(SRC)
    r = np.random.default_rng(5)
    y, x = r.random((4, 5, 6)), r.random((5, 6))
    np.testing.assert_array_equal(m.broadcast_more(y, x),
                                  y - np.max(x, axis=-1, keepdims=True))
    a = r.integers(-50, 50, (7, 9))
    np.testing.assert_array_equal(m.int_rows(a),
                                  a - np.sum(a, axis=-1, keepdims=True))
    e = np.empty((3, 0))
    assert m.normalise_into(e, np.empty((3, 0))) is None
    with pytest.raises(ValueError):
        m.softmax(np.empty((2, 0)))


def test_nan_rows_as_numpy():
    x = np.random.default_rng(2).standard_normal((6, 40))
    x[2, 17] = np.nan
    x[4, :] = -np.inf
    (r1, _), (r0, _) = run_both(SRC, "softmax_inline", lambda: (x.copy(),))
    same_bits(r1, r0)
    with np.errstate(invalid="ignore"):
        want = np_softmax(x)
    np.testing.assert_array_equal(np.isnan(r1), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(r1[ok], want[ok], rtol=1e-13)


# ------------------------------------------------------ random programs

def gen_row_program(rng):
    """A kernel over x, y (2-D, same shape) of 2-4 local arrays, each an
    elementwise expression or a reduction along the last axis with
    keepdims=True, read by later statements, and a consumer; the numpy
    text is the same."""
    names, rows, lines = [], [], []

    def leaf():
        if names and rng.random() < 0.6:
            return rng.choice(names + rows)
        return rng.choice(["x", "y", "x[::-1]", "y[:, ::-1]"])

    def red(depth):
        f = rng.choice(["np.max", "np.sum", "np.mean", "np.min"])
        return f"{f}({expr(depth + 1)}, axis=-1, keepdims=True)"

    def expr(depth=0):
        r = rng.random()
        if depth > 2 or r < 0.3:
            return leaf()
        if r < 0.42:
            return f"({expr(depth + 1)} * {rng.choice(['2.0', '0.5', '-1.5'])})"
        if r < 0.5:
            return f"np.exp(-np.abs({expr(depth + 1)}))"
        if r < 0.58:
            return f"({expr(depth + 1)} - {red(depth)})"
        if r < 0.64:
            return f"np.maximum({expr(depth + 1)}, {expr(depth + 1)})"
        op = rng.choice(["+", "-", "*"])
        return f"({expr(depth + 1)} {op} {expr(depth + 1)})"

    for k in range(rng.randint(2, 4)):
        if rng.random() < 0.4:
            nm = f"r{k}"
            lines.append(f"    {nm} = {red(0)}")
            rows.append(nm)
        else:
            nm = f"t{k}"
            lines.append(f"    {nm} = {expr()}")
            names.append(nm)
    last = rng.choice(names + rows)
    form = rng.randrange(4)
    if form == 0:
        lines.append(f"    return {expr()} / (np.abs({last}) + 1.0)")
    elif form == 1:
        lines.append(f"    out[:] = {expr()} - {last}")
        lines.append("    return out")
    elif form == 2:
        lines.append(f"    return np.sum({expr()} * {last})")
    else:
        lines.append(f"    return {expr()} + "
                     f"np.sum({last} * x, axis=-1, keepdims=True)")
    body = "\n".join(lines)
    v = "asc.Tensor[asc.float64, 2]"
    return ("import numpy as np\nimport asc\n\n@asc.kernel\n"
            f"def k(x: {v}, y: {v}, out: {v}):\n{body}\n",
            f"def k(x, y, out):\n{body}\n")


@pytest.mark.parametrize("seed", range(int(os.environ.get(
    "ASC_ROW_FUSION_FUZZ_SEEDS", "3"))))
def test_random_row_programs(seed):
    """Each random kernel: fused and unfused give the same bits, and
    numpy's value to rounding."""
    rng = random.Random(1000 + seed)
    data = np.random.default_rng(seed)
    shape = (int(data.integers(1, 20)), int(data.integers(1, 150)))
    x = data.standard_normal(shape)
    y = data.standard_normal(shape)
    out0 = data.standard_normal(shape)
    for _ in range(4):
        src, pysrc = gen_row_program(rng)

        def make():
            return (x.copy(), y.copy(), out0.copy())
        (r1, a1), (r0, a0) = run_both(src, "k", make)
        same_bits(r1, r0)
        for p, q in zip(a1, a0):
            same_bits(p, q)
        env = {"np": np}
        exec(pysrc, env)
        want = env["k"](*make())
        np.testing.assert_allclose(r1, want, rtol=1e-9, atol=1e-9,
                                   err_msg=src)
