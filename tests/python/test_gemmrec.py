"""The gemmrec pass (docs/optimizer.md, "gemmrec"): naive matrix-product
loop nests become one gemm_exact call (the loops' own order of operations
per element) or, under fastmath reassoc, the runtime's BLAS.

Every kernel runs compiled with ASC_GEMMREC=0 (the loops) and with the
pass (the switch is read when a kernel compiles, at its first launch, and
is part of the cache key); in the default mode the outputs must be equal
bit for bit, and close to numpy's.  Shapes include empty and one-element
ones, odd sizes, sub-rectangles, transposed and strided views, output rows
that overlap (the run-time test falls back to the loops) and arguments
that overlap (a may_alias specialisation, which the pass refuses)."""
import os
import random
import re
import subprocess

import numpy as np
import pytest

asc = pytest.importorskip("asc")

TEXT = """
import asc

@asc.kernel
def mm(a, b, c):
    n, m = c.shape
    K = a.shape[1]
    for i in range(n):
        for j in range(m):
            s = 0.0
            for p in range(K):
                s += a[i, p] * b[p, j]
            c[i, j] = s

@asc.kernel
def mm_prange(a, b, c):
    n, K = a.shape
    m = b.shape[1]
    for i in asc.prange(n):
        for j in range(m):
            s = 0.0
            for p in range(K):
                s += a[i, p] * b[p, j]
            c[i, j] = s

@asc.kernel
def mm_jip(a, b, c):
    n, m = c.shape
    K = a.shape[1]
    for j in range(m):
        for i in range(n):
            s = 0.0
            for p in range(K):
                s = s + b[p, j] * a[i, p]
            c[i, j] = s

@asc.kernel
def acc_scalar(a, b, c):
    n, m = c.shape
    K = a.shape[1]
    for i in range(n):
        for j in range(m):
            s = c[i, j]
            for p in range(K):
                s += a[i, p] * b[p, j]
            c[i, j] = s

@asc.kernel
def acc_mem(a, b, c):
    n, m = c.shape
    K = a.shape[1]
    for i in range(n):
        for j in range(m):
            for p in range(K):
                c[i, j] += a[i, p] * b[p, j]

@asc.kernel
def acc_ipj(a, b, c):
    n, m = c.shape
    K = a.shape[1]
    for i in asc.prange(n):
        for p in range(K):
            for j in range(m):
                c[i, j] = c[i, j] + a[i, p] * b[p, j]

@asc.kernel
def sub_rect(a, b, c, mi: int, nj: int, kp: int):
    for i in range(mi):
        for j in range(nj):
            s = 0.0
            for p in range(kp):
                s += a[i + 2, p + 1] * b[p + 3, j + 1]
            c[i + 1, j + 4] = s

@asc.kernel
def sub_rect_runtime_start(a, b, c, i0: int, i1: int, j0: int, j1: int):
    # indices that may be negative (they count from the end): not affine
    for i in range(i0, i1):
        for j in range(j0, j1):
            s = 0.0
            for p in range(3):
                s += a[i, p] * b[p, j]
            c[i, j] = s

@asc.kernel
def batched(x, y, out):
    B, n, K = x.shape
    m = y.shape[2]
    for q in asc.prange(B):
        for i in range(n):
            for j in range(m):
                s = 0.0
                for p in range(K):
                    s += x[q, i, p] * y[q, p, j]
                out[q, i, j] = s

@asc.kernel
def self_product(c, b):
    n, m = c.shape
    for i in range(n):
        for j in range(m):
            s = 0.0
            for p in range(m):
                s += c[i, p] * b[p, j]
            c[i, j] = s

@asc.kernel(fastmath=True)
def mm_fast(a, b, c):
    n, m = c.shape
    K = a.shape[1]
    for i in range(n):
        for j in range(m):
            s = 0.0
            for p in range(K):
                s += a[i, p] * b[p, j]
            c[i, j] = s

@asc.kernel(fastmath=True)
def acc_fast(a, b, c):
    n, m = c.shape
    K = a.shape[1]
    for i in range(n):
        for j in range(m):
            for p in range(K):
                c[i, j] += a[i, p] * b[p, j]
"""

SHAPES = [(0, 3, 4), (3, 0, 4), (3, 4, 0), (1, 1, 1), (1, 9, 6), (6, 9, 1),
          (5, 7, 4), (37, 53, 29), (130, 70, 90)]
DTYPES = [np.float32, np.float64]


def run(on, fn):
    """fn(module) with the pass on or off (set around the launches: the
    kernels compile at their first one)."""
    saved = os.environ.get("ASC_GEMMREC")
    os.environ["ASC_GEMMREC"] = "1" if on else "0"
    try:
        return fn(asc.compile(TEXT))
    finally:
        if saved is None:
            os.environ.pop("ASC_GEMMREC", None)
        else:
            os.environ["ASC_GEMMREC"] = saved


def rnd(rng, shape, dt):
    return (rng.random(shape) * 2 - 1).astype(dt)


def tol(dt, k):
    return dict(rtol=2e-5 if dt == np.float32 else 1e-12,
                atol=(1e-5 if dt == np.float32 else 1e-12) * (k + 1))


def same_bits(x, y):
    assert x.dtype == y.dtype and x.shape == y.shape
    assert np.array_equal(np.ascontiguousarray(x).view(np.uint8),
                          np.ascontiguousarray(y).view(np.uint8))


def both(fn):
    want = run(False, fn)
    got = run(True, fn)
    assert len(want) == len(got) and len(want) > 0
    for w, g in zip(want, got):
        same_bits(w, g)
    return got


def inputs(dt, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for m, k, n in SHAPES:
        a, b = rnd(rng, (m, k), dt), rnd(rng, (k, n), dt)
        # a signed zero and an exact cancellation in the first row
        if m and k >= 2 and n:
            a[0, :2] = [-0.0, 1.0]
            b[:2, 0] = [0.0, -0.0]
        out.append((a, b, rnd(rng, (m, n), dt)))
    return out


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("name", ["mm", "mm_prange", "mm_jip"])
def test_product_bitwise(dt, name):
    data = inputs(dt)

    def fn(mod):
        res = []
        for a, b, _ in data:
            c = np.full((a.shape[0], b.shape[1]), 7, dt)
            getattr(mod, name)(a, b, c)
            res.append(c)
        return res
    got = both(fn)
    for (a, b, _), c in zip(data, got):
        np.testing.assert_allclose(c, a @ b, **tol(dt, a.shape[1]))
        if a.size and b.size and a.shape[1] >= 2:
            # -0.0 * 0.0 + 1.0 * -0.0 summed from +0.0 is +0.0
            assert not np.signbit(c[0, 0]) or c[0, 0] != 0


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("name", ["acc_scalar", "acc_mem", "acc_ipj"])
def test_accumulate_bitwise(dt, name):
    data = inputs(dt, 1)

    def fn(mod):
        res = []
        for a, b, c0 in data:
            c = c0.copy()
            getattr(mod, name)(a, b, c)
            res.append(c)
        return res
    got = both(fn)
    for (a, b, c0), c in zip(data, got):
        np.testing.assert_allclose(c, c0 + a @ b, **tol(dt, a.shape[1] + 1))


@pytest.mark.parametrize("dt", DTYPES)
def test_views_bitwise(dt):
    """Transposed, strided and reversed operands; a column-major and a
    strided output."""
    rng = np.random.default_rng(2)
    a, b = rnd(rng, (40, 30), dt), rnd(rng, (30, 50), dt)

    def fn(mod):
        res = []
        c = np.zeros((50, 40), dt).T          # column-major c
        mod.mm(a, b, c)
        res.append(c.copy())
        c = np.zeros((30, 30), dt)
        mod.mm(b.T[::2, :], a.T[:, ::-1], c[::2, ::2][:15, :15])
        res.append(c)
        c = np.zeros((40, 50), dt)
        mod.mm(np.asfortranarray(a), np.asfortranarray(b), c)
        res.append(c)
        return res
    got = both(fn)
    np.testing.assert_allclose(got[0], a @ b, **tol(dt, 30))
    np.testing.assert_allclose(got[1][::2, ::2][:15, :15],
                               (b.T[::2, :] @ a.T[:, ::-1])[:15, :15],
                               **tol(dt, 30))
    assert not got[1][1::2, :].any() and not got[1][:, 1::2].any()
    np.testing.assert_allclose(got[2], a @ b, **tol(dt, 30))


@pytest.mark.parametrize("dt", DTYPES)
def test_sub_rectangle_bitwise(dt):
    rng = np.random.default_rng(3)
    a, b = rnd(rng, (20, 26), dt), rnd(rng, (28, 31), dt)
    cases = [(15, 26, 23), (17, 27, 25), (1, 1, 1), (0, 27, 25), (3, -2, 25),
             (17, 27, 0), (5, 4, 3)]

    def fn(mod):
        res = []
        for mi, nj, kp in cases:
            c = np.full((20, 31), -1, dt)
            mod.sub_rect(a, b, c, mi, nj, kp)
            res.append(c)
        c = np.full((20, 31), -1, dt)
        mod.sub_rect_runtime_start(a, b, c, 2, 9, 4, 30)
        res.append(c)
        return res
    got = both(fn)
    for (mi, nj, kp), c in zip(cases, got):
        want = np.full((20, 31), -1, dt)
        if mi > 0 and nj > 0:
            want[1:1 + mi, 4:4 + nj] = (a[2:2 + mi, 1:1 + kp]
                                        @ b[3:3 + kp, 1:1 + nj])
        np.testing.assert_allclose(c, want, **tol(dt, 25))
    want = np.full((20, 31), -1, dt)
    want[2:9, 4:30] = a[2:9, :3] @ b[:3, 4:30]
    np.testing.assert_allclose(got[-1], want, **tol(dt, 3))


@pytest.mark.parametrize("dt", DTYPES)
def test_batched_in_prange_bitwise(dt):
    rng = np.random.default_rng(4)
    x, y = rnd(rng, (5, 33, 21), dt), rnd(rng, (5, 21, 19), dt)

    def fn(mod):
        out = np.zeros((5, 33, 19), dt)
        mod.batched(x, y, out)
        return [out]
    got = both(fn)
    np.testing.assert_allclose(got[0], np.matmul(x, y), **tol(dt, 21))


@pytest.mark.parametrize("dt", DTYPES)
def test_overlapping_output_and_arguments(dt):
    """Rows of c that share memory run the loops (run-time test); a
    launch whose a and c overlap compiles may_alias, which the pass
    refuses; c read as an operand is refused at compile time."""
    rng = np.random.default_rng(5)
    a, b = rnd(rng, (6, 6), dt), rnd(rng, (6, 6), dt)

    def fn(mod):
        res = []
        buf = np.zeros(7, dt)
        c = np.lib.stride_tricks.as_strided(buf, (6, 6),
                                            (0, buf.itemsize))
        mod.mm(a, b, c)
        res.append(buf.copy())
        x = a.copy()
        mod.mm(x, b, x)          # a and c the same array
        res.append(x)
        y = np.zeros((6, 12), dt)
        y[:, :6] = a
        mod.mm(y[:, :6], b, y[:, 6:])   # disjoint halves of one array
        res.append(y)
        z = a.copy()
        mod.self_product(z, b)
        res.append(z)
        return res
    got = both(fn)
    # the rows share one row of memory: the last row's values stay
    np.testing.assert_allclose(got[0][:6], (a @ b)[5], **tol(dt, 6))
    np.testing.assert_allclose(got[2][:, 6:], a @ b, **tol(dt, 6))


@pytest.mark.parametrize("dt", DTYPES)
def test_fastmath_close_to_numpy(dt, monkeypatch):
    rng = np.random.default_rng(6)
    mod = asc.compile(TEXT)
    for blas in ("1", "0"):      # BLAS, and gemm_exact when it does nothing
        monkeypatch.setenv("ASC_BLAS", blas)
        for m, k, n in SHAPES + [(130, 257, 65)]:
            a, b = rnd(rng, (m, k), dt), rnd(rng, (k, n), dt)
            c = np.full((m, n), 7, dt)
            mod.mm_fast(a, b, c)
            np.testing.assert_allclose(c, a @ b, **tol(dt, k))
            c0 = rnd(rng, (m, n), dt)
            c = c0.copy()
            mod.acc_fast(a, b, c)
            np.testing.assert_allclose(c, c0 + a @ b, **tol(dt, k + 1))
        c = np.zeros((50, 40), dt).T
        a, b = rnd(rng, (40, 30), dt), rnd(rng, (30, 50), dt)
        mod.mm_fast(a.T.copy().T, b[:, ::-1], c)
        np.testing.assert_allclose(c, a @ b[:, ::-1], **tol(dt, 30))


def test_notes(tmp_path):
    """ascc --emit=ir: which nests are replaced, and why the others are
    not (else the bitwise tests above could pass with no replacement)."""
    build = os.environ.get("ASC_BUILD_DIR", os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "build"))
    ascc = os.path.join(build, "ascc")
    if not os.path.exists(ascc):
        pytest.skip(f"no ascc in {build} (set ASC_BUILD_DIR)")
    src = tmp_path / "k.py"
    src.write_text(TEXT)
    m2 = "f64[:, :]"
    sigs = {
        "mm": f"mm({m2}, {m2}, {m2})",
        "mm_prange": f"mm_prange({m2}, {m2}, {m2})",
        "mm_jip": f"mm_jip({m2}, {m2}, {m2})",
        "acc_scalar": f"acc_scalar({m2}, {m2}, {m2})",
        "acc_mem": f"acc_mem({m2}, {m2}, {m2})",
        "acc_ipj": f"acc_ipj({m2}, {m2}, {m2})",
        "sub_rect": f"sub_rect({m2}, {m2}, {m2}, i64, i64, i64)",
        "batched": "batched(f64[:, :, :], f64[:, :, :], f64[:, :, :])",
        "mm_fast": f"mm_fast({m2}, {m2}, {m2})",
        "self_product": f"self_product({m2}, {m2})",
    }
    for name, sig in sigs.items():
        ir = subprocess.run([ascc, "--emit=ir", "--signature", sig, str(src)],
                            check=True, capture_output=True, text=True).stdout
        if name == "self_product":
            assert "gemm_exact" not in ir
            assert "stays loops: %c is both stored and multiplied" in ir, ir
            continue
        assert ir.count("gemm_exact %") == 1, (name, ir)
        assert "is the matrix product" in ir, (name, ir)
        if name.startswith("acc"):
            assert "accumulating" in ir and ", 1 @" in ir, (name, ir)
        elif name == "mm_fast":
            assert "BLAS under reassoc" in ir and ", 2 @" in ir, ir
        else:
            assert ", 0 @" in ir, (name, ir)
    env = dict(os.environ, ASC_GEMMREC="0")
    ir = subprocess.run([ascc, "--emit=ir", "--signature", sigs["mm"],
                         str(src)], check=True, capture_output=True,
                        text=True, env=env).stdout
    assert "gemm_exact" not in ir and "gemmrec" not in ir


# ---- random nests of the product's shape, and near misses --------------

RI, RP, RJ = 9, 11, 13      # a (RI, RP+2), b (RP+2, RJ+2), o (.., RI+2, RJ+2)


def gen_nest(r, k):
    """Nest k of a random kernel: writes o[k, ...]; about half of them are
    products the pass replaces, the rest differ in one detail."""
    A = r.choice(["a[i, p]"] * 4 + ["a[i, p + 1]", "t[p, i]"])
    B = r.choice(["b[p, j]"] * 4 + ["b[p, j + 1]", "u[j, p]"])
    C = r.choice(["o[k, i, j]"] * 4 + ["o[k, i + 1, j + 1]"])
    bounds = {
        "i": f"range({r.choice([0, 0, 1])}, n - {r.choice([0, 0, 2])})",
        "j": f"range({r.choice([0, 0, 1, 2])}, m - {r.choice([0, 0, 3])})",
        "p": f"range({r.choice([0, 0, 1])}, K - {r.choice([0, 0, 1])})",
    }
    if r.random() < 0.5:
        init = r.choice(["0.0"] * 5 + [C, "1.0", "-0.0"])
        upd = r.choice([f"s += {A} * {B}"] * 4 + [f"s = s + {B} * {A}",
                       f"s -= {A} * {B}", f"s += {A} * {B} * 2.0",
                       f"s += {A} + {B}", f"s += {A} * o[k, i, j]"])
        outer = r.sample(["i", "j"], 2)
        body = [f"for {outer[0]} in {bounds[outer[0]]}:",
                f"    for {outer[1]} in {bounds[outer[1]]}:",
                f"        s = {init}",
                f"        for p in {bounds['p']}:",
                f"            {upd}",
                f"        {C} = s"]
    else:
        near = r.random()
        if near < 0.1 and "range(0" not in bounds["j"]:
            upd = f"{C} = {C.replace('j]', 'j - 1]')} + {A} * {B}"
        elif near < 0.2:
            upd = f"{C} -= {A} * {B}"
        elif near < 0.3:
            upd = f"{C} += {A} * {A}"
        else:
            upd = r.choice([f"{C} += {A} * {B}", f"{C} = {C} + {A} * {B}"])
        order = r.sample(["i", "j", "p"], 3)
        body = [f"for {order[0]} in {bounds[order[0]]}:",
                f"    for {order[1]} in {bounds[order[1]]}:",
                f"        for {order[2]} in {bounds[order[2]]}:",
                f"            {upd}"]
    text = "\n".join("    " + line for line in body)
    text = text.replace("[k,", f"[{k},")
    for v in ("s", "i", "j", "p"):
        text = re.sub(rf"\b{v}\b", f"{v}{k}", text)
    return text


def gen_random_module(seed, nk, per):
    r = random.Random(seed)
    out = ["import asc", ""]
    for q in range(nk):
        out += ["@asc.kernel", f"def k{q}(a, b, t, u, o):",
                "    n = a.shape[0]", "    K = a.shape[1] - 2",
                "    m = b.shape[1] - 2"]
        out += [gen_nest(r, k) for k in range(per)]
        out.append("")
    return "\n".join(out) + "\n"


RANDOM_KERNELS, RANDOM_PER_KERNEL = 3, 20


@pytest.mark.parametrize("dt", DTYPES)
def test_random_nests_bitwise(dt, monkeypatch):
    seed = 77 if dt == np.float32 else 78
    text = gen_random_module(seed, RANDOM_KERNELS, RANDOM_PER_KERNEL)
    rng = np.random.default_rng(seed)
    a = rnd(rng, (RI, RP + 2), dt)
    b = rnd(rng, (RP + 2, RJ + 2), dt)
    b[0, :4] = [0.0, -0.0, 1e30, -1e30]
    t, u = a.T.copy(), b.T.copy()
    o0 = rnd(rng, (RANDOM_PER_KERNEL, RI + 2, RJ + 2), dt)
    monkeypatch.setenv("ASC_CFLAGS", "-O0")   # the C order is fixed anyway

    def fn(_):
        mod = asc.compile(text)
        res = []
        for q in range(RANDOM_KERNELS):
            o = o0.copy()
            getattr(mod, f"k{q}")(a, b, t, u, o)
            res.append(o)
            # transposed views of the inputs as arguments
            o = o0.copy()
            getattr(mod, f"k{q}")(np.asfortranarray(a), b[:, ::-1].copy()[:, ::-1],
                                  t, u, o)
            res.append(o)
        return res
    want, got = run(False, fn), run(True, fn)
    for q, (w, g) in enumerate(zip(want, got)):
        if not np.array_equal(w.view(np.uint8), g.view(np.uint8)):
            bad = np.argwhere(w.view(np.uint8) != g.view(np.uint8))
            pytest.fail(f"kernel k{q // 2}: {len(bad)} bytes differ, first "
                        f"at {bad[0]}\n{text}")


def test_random_nests_are_recognised(tmp_path):
    """The generator makes nests the pass replaces and nests it refuses."""
    build = os.environ.get("ASC_BUILD_DIR", os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "build"))
    ascc = os.path.join(build, "ascc")
    if not os.path.exists(ascc):
        pytest.skip(f"no ascc in {build} (set ASC_BUILD_DIR)")
    src = tmp_path / "nests.py"
    src.write_text(gen_random_module(77, 1, RANDOM_PER_KERNEL))
    m2 = "f32[:, ::1]"
    sig = f"k0({m2}, {m2}, {m2}, {m2}, f32[:, :, ::1])"
    ir = subprocess.run([ascc, "--emit=ir", "--signature", sig, str(src)],
                        check=True, capture_output=True, text=True).stdout
    rec, kept = ir.count("is the matrix product"), ir.count("stays loops")
    assert rec >= 6 and kept >= 3, (rec, kept)


CACHE_SCRIPT = '''
import os, sys
import numpy as np, asc
text = """import asc
@asc.kernel
def k(a, b, c):
    for i in range(c.shape[0]):
        for j in range(c.shape[1]):
            s = 0.0
            for p in range(a.shape[1]):
                s += a[i, p] * b[p, j]
            c[i, j] = s
"""
a = np.arange(6.0).reshape(2, 3)
b = np.arange(12.0).reshape(3, 4)
for sw in sys.argv[1:]:
    os.environ["ASC_GEMMREC"] = sw
    c = np.zeros((2, 4))
    asc.compile(text).k(a, b, c)
    assert (c == a @ b).all()
'''


def test_switch_is_part_of_the_cache_key(tmp_path):
    """ASC_GEMMREC=0 and the pass are two cache entries, each hit again."""
    import sys
    from pathlib import Path
    cache = tmp_path / "cache"
    script = tmp_path / "sw.py"
    script.write_text(CACHE_SCRIPT)
    env = dict(os.environ, ASC_CACHE_DIR=str(cache), PYTHONPATH=str(
        Path(__file__).resolve().parents[2] / "bindings" / "python"))
    env.pop("ASC_GEMMREC", None)

    def entries(*sw):
        subprocess.run([sys.executable, str(script), *sw], check=True,
                       env=env, timeout=300)
        return sorted(cache.rglob("*.so"))
    on = entries("1")
    assert len(on) == 1
    both = entries("0")
    assert len(both) == 2
    assert entries("1", "0") == both
