"""argmin / argmax of floats along one axis (lower_reduce.c,
first_extreme): the extreme first in vector lanes, then the first index
holding it, block by block.  Against numpy: ties (the first index), NaN
(the first NaN), signed zeros, infinities, rows whose length is below,
at and past the search's block of 32, float32 and float64, 1-D, each
axis of 2-D and 3-D arrays, views."""
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
    assert ir.count("then the first index holding it, a block at a time") == 4, ir
    assert "redlanes: pmax" in ir and "redlanes: pmin" in ir, ir
