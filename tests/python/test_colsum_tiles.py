"""Reductions over the rows of a C-contiguous array (a.sum(axis=0) and
its kin, and the same written as loops).  The interchange pass walks the
columns in tiles inside the row loop; the tile loop, outermost, is split
over the team (parallelize.c, tile_of), and the row loop takes 4 rows per
pass over a tile (interchange.c, jam).  Each column still adds its rows
in order, one at a time: the results are the bytes of a plain row-by-row
loop, for every count of rows around the 4-row step and every width
around the tile."""
import numpy as np
import pytest

from envvars import ascc_ir

asc = pytest.importorskip("asc")

SRC = '''
import asc
import numpy as np


@asc.kernel
def col_sum(a):
    return a.sum(axis=0)


@asc.kernel
def col_mean(a):
    return np.mean(a, axis=0)


@asc.kernel
def col_max(a):
    return np.max(a, axis=0)


@asc.kernel
def col_prod(a):
    return np.prod(a, axis=0)


@asc.kernel
def col_loop(a, out):
    n, m = a.shape
    for j in range(m):
        s = 0.0
        for i in range(n):
            s += a[i, j] * a[i, j]
        out[j] = s
'''

mod = asc.compile(SRC)


def rowwise(a, op):
    """The reduction in row order, one row at a time (numpy's own order
    for axis 0 of a C-contiguous array, written out)."""
    acc = a[0].copy()
    for r in a[1:]:
        acc = op(acc, r)
    return acc


ROWS = (1, 2, 3, 4, 5, 7, 8, 9, 33)
COLS = (1, 5, 255, 256, 257, 513, 1000)


@pytest.mark.parametrize("n", ROWS)
@pytest.mark.parametrize("m", COLS)
def test_sum_bytes(n, m):
    rng = np.random.default_rng(n * 1000 + m)
    a = rng.standard_normal((n, m)) * 10.0 ** rng.integers(-8, 8, (n, m))
    got = mod.col_sum(a)
    want = rowwise(a, np.add)
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dt", [np.float32, np.int64, np.int32, np.complex128])
def test_dtypes(dt):
    """float32 sums accumulate in float64 and round once at the end, so
    they are compared with the float32 row-by-row sum within its
    rounding."""
    rng = np.random.default_rng(3)
    for n, m in ((7, 300), (4, 257), (13, 1)):
        a = (rng.standard_normal((n, m)) * 100).astype(dt)
        if np.issubdtype(dt, np.complexfloating):
            a = a + 1j * rng.standard_normal((n, m))
        got = mod.col_sum(a)
        want = rowwise(a, np.add).astype(got.dtype)
        assert got.dtype == np.sum(a, axis=0).dtype
        if dt == np.float32:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-3)
        else:
            assert got.tobytes() == want.tobytes(), (n, m)


def test_mean_max_prod():
    rng = np.random.default_rng(5)
    a = rng.random((10, 700)) + 0.5
    np.testing.assert_array_equal(mod.col_max(a), a.max(axis=0))
    assert mod.col_prod(a).tobytes() == rowwise(a, np.multiply).tobytes()
    np.testing.assert_allclose(mod.col_mean(a), a.mean(axis=0), rtol=1e-15)


def test_loop_written():
    rng = np.random.default_rng(9)
    for n in (1, 6, 11):
        a = rng.standard_normal((n, 600))
        out = np.full(600, np.nan)
        mod.col_loop(a, out)
        want = np.zeros(600)
        for i in range(n):
            want = want + a[i] * a[i]
        assert out.tobytes() == want.tobytes()


def test_empty_and_views():
    a = np.zeros((0, 300))
    assert mod.col_sum(a).tobytes() == np.zeros(300).tobytes()
    big = np.arange(40 * 600, dtype=np.float64).reshape(40, 600)
    v = big[3:30]               # C-contiguous rows of a larger array
    assert mod.col_sum(v).tobytes() == rowwise(v, np.add).tobytes()
    w = big[:, 7:500]           # rows with a gap between them
    assert mod.col_sum(w).tobytes() == rowwise(w, np.add).tobytes()


def test_nan_and_inf_keep_their_place():
    a = np.ones((9, 260))
    a[2, 3] = np.nan
    a[5, 200] = np.inf
    a[6, 200] = -np.inf
    a[8, 259] = np.inf
    got = mod.col_sum(a)
    assert np.isnan(got[3]) and np.isnan(got[200]) and got[259] == np.inf
    assert got[0] == 9.0


def test_ir_notes(tmp_path):
    f = tmp_path / "k.py"
    f.write_text(SRC)
    out = ascc_ir(f, "col_sum(f64[:, ::1])")
    assert "; parallelize: loop %j0 at line 8 becomes a pfor" in out, out
    assert "; interchange: loop %red takes 4 of its iterations per pass " \
           "over the tile" in out, out
    assert "pfor %j0:i64 = 0, " in out
