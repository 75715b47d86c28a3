"""argmin / argmax of floats along one axis (lower_reduce.c,
first_extreme): one pass in blocks of 1024, each block's extreme in
vector lanes, the first block that beats those before it, then the first
index holding it in that block, in pieces of 32.  Against numpy: ties
(the first index, also across blocks), NaN (the first NaN), signed zeros,
infinities, rows whose length is below, at and past the pieces of 32 and
the blocks of 1024, float32 and float64, 1-D, each axis of 2-D and 3-D
arrays, views."""
import numpy as np
import pytest

from envvars import ascc_ir

asc = pytest.importorskip("asc")

SRC = '''
import numpy as np
import asc

@asc.kernel
def arg1(x):
    return np.argmax(x), np.argmin(x)

@asc.kernel
def arg2(a):
    return (np.argmax(a, axis=1), np.argmin(a, axis=1),
            np.argmax(a, axis=0), np.argmin(a, axis=-2))

@asc.kernel
def arg3(a):
    return np.argmax(a, axis=2), np.argmin(a, axis=1), np.argmax(a[:, ::2], axis=-1)
'''


@pytest.fixture(scope="module")
def mod():
    return asc.compile(SRC)


def tricky(shape, dt, seed):
    r = np.random.default_rng(seed)
    a = r.integers(-3, 4, shape).astype(dt)  # many ties
    flat = a.reshape(-1)
    k = flat.size
    if k:
        flat[r.integers(0, k, max(1, k // 7))] = np.nan
        flat[r.integers(0, k, max(1, k // 11))] = -0.0
        flat[r.integers(0, k, max(1, k // 13))] = np.inf
        flat[r.integers(0, k, max(1, k // 13))] = -np.inf
    return a


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 2, 31, 32, 33, 63, 64, 65, 100, 1000])
def test_1d(mod, dt, n):
    for seed in range(4):
        x = tricky(n, dt, seed)
        if seed == 0:
            x = np.nan_to_num(x, nan=1.0)  # rows without a NaN too
        got = mod.arg1(x)
        assert (int(got[0]), int(got[1])) == (np.argmax(x), np.argmin(x)), x


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(3, 1), (5, 31), (4, 32), (7, 33), (50, 129),
                                   (2, 3000)])
def test_2d(mod, dt, shape):
    for seed in range(3):
        a = tricky(shape, dt, seed)
        if seed == 0:
            a = np.nan_to_num(a, nan=2.0, posinf=3.0, neginf=-3.0)
        got = mod.arg2(a)
        want = (np.argmax(a, axis=1), np.argmin(a, axis=1),
                np.argmax(a, axis=0), np.argmin(a, axis=-2))
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.tobytes() == w.tobytes(), (g, w)


def test_3d_and_views(mod):
    for seed in range(3):
        a = tricky((4, 35, 70), np.float64, seed)
        got = mod.arg3(a)
        want = (np.argmax(a, axis=2), np.argmin(a, axis=1),
                np.argmax(a[:, ::2], axis=-1))
        for g, w in zip(got, want):
            assert g.tobytes() == w.tobytes(), (g, w)


def test_all_equal_and_all_nan(mod):
    x = np.full(77, -np.inf)
    assert tuple(map(int, mod.arg1(x))) == (0, 0)
    x = np.full(77, np.nan)
    assert tuple(map(int, mod.arg1(x))) == (0, 0)
    x = np.zeros(77)
    x[40] = -0.0
    assert tuple(map(int, mod.arg1(x))) == (np.argmax(x), np.argmin(x))


def test_empty_axis_raises(mod):
    with pytest.raises(ValueError, match="argmax of an empty sequence"):
        mod.arg2(np.zeros((3, 0)))


def test_ir(tmp_path):
    f = tmp_path / "k.py"
    f.write_text(SRC)
    ir = ascc_ir(f, "arg2(f64[:,:])")
    assert ir.count("reduce: each block's extreme (vector lanes), the first "
                    "block that beats those before it") == 4, ir
    assert "redlanes: pmax" in ir and "redlanes: pmin" in ir, ir


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1023, 1024, 1025, 2047, 2048, 2049, 3000, 5121])
def test_across_blocks(mod, dt, n):
    """The extreme's first occurrence in each block, ties in later
    blocks, in the last piece of a block, in the short last block."""
    base = np.linspace(-1.0, 1.0, n).astype(dt) * 0.5
    spots = sorted({0, 31, 32, 1023 % n, 1024 % n, 1055 % n, n - 1, n // 2})
    for p in spots:
        for later in (None, n - 1, min(p + 1024, n - 1)):
            x = base.copy()
            x[p] = 7.0
            if later is not None:
                x[later] = 7.0               # a tie: the first one wins
            y = -x
            got = mod.arg1(x)
            assert (int(got[0]), int(got[1])) == (np.argmax(x), np.argmin(x)), p
            got = mod.arg1(y)
            assert (int(got[0]), int(got[1])) == (np.argmax(y), np.argmin(y)), p
            z = x.copy()
            z[min(p + 5, n - 1)] = np.nan    # a NaN after the extreme wins
            got = mod.arg1(z)
            assert (int(got[0]), int(got[1])) == (np.argmax(z), np.argmin(z)), p
    rows = np.stack([base, base[::-1], np.where(base > 0, 0.0, -0.0).astype(dt)])
    got = mod.arg2(rows)
    want = (np.argmax(rows, axis=1), np.argmin(rows, axis=1),
            np.argmax(rows, axis=0), np.argmin(rows, axis=-2))
    for g, w in zip(got, want):
        assert g.tobytes() == w.tobytes(), (g, w)


PAR_SRC = '''
import numpy as np
import asc

@asc.kernel
def both(x):
    return np.argmax(x), np.argmin(x)

@asc.kernel
def of_expr(x, y):
    return np.argmax(x * 2.0 - y), np.argmin(np.abs(x))

@asc.kernel
def in_loop(x, k):
    r = 0
    for _ in range(k):
        r += np.argmax(x)
    return r
'''


@pytest.fixture(scope="module")
def pmod():
    return asc.compile(PAR_SRC)


@pytest.mark.parametrize("n", [131072, 131073, 200001, 1000003])
def test_whole_array_on_the_team(pmod, n):
    """A whole 1-D array of 131,072 elements or more goes in chunks of
    whole blocks on the team (at least 65,536 elements, at most 64
    chunks); the chunks' results are taken in order."""
    r = np.random.default_rng(n)
    base = r.random(n) * 0.5
    chunk = max(65536, (-(-n // 64) + 1023) // 1024 * 1024)
    spots = sorted({0, chunk - 1, chunk, chunk + 1, n // 2, n - 1})
    for p in spots:
        for tie in (None, min(p + chunk, n - 1), n - 1):
            x = base.copy()
            x[p] = 3.0
            x[(p + 17) % n] = -3.0
            if tie is not None:
                x[tie] = 3.0
            got = pmod.both(x)
            assert (int(got[0]), int(got[1])) == (np.argmax(x), np.argmin(x)), (p, tie)
        z = base.copy()
        z[p] = 3.0
        z[min(p + chunk + 5, n - 1)] = np.nan     # a NaN in a later chunk wins
        got = pmod.both(z)
        assert (int(got[0]), int(got[1])) == (np.argmax(z), np.argmin(z)), p
    x = np.full(n, -np.inf)
    assert tuple(map(int, pmod.both(x))) == (0, 0)
    x = np.zeros(n, np.float32)
    x[n - 3] = -0.0
    assert tuple(map(int, pmod.both(x))) == (0, 0)
    y = r.random(n)
    got = pmod.of_expr(base, y)
    assert (int(got[0]), int(got[1])) == (np.argmax(base * 2.0 - y),
                                          np.argmin(np.abs(base)))
    v = np.repeat(base, 2)[::2]                   # a strided view
    got = pmod.both(v)
    assert (int(got[0]), int(got[1])) == (np.argmax(v), np.argmin(v))
    assert int(pmod.in_loop(base, 3)) == 3 * int(np.argmax(base))
