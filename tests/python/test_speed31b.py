"""Array speed forms (docs/optimizer.md): a 1-D boolean selection reduced
whole is one loop over the mask in chunks by default (the chunk's mask
in a loop without branches, which vectorises, then its true elements
folded in C order), never the selection made; results against numpy and
bit for bit against the selection made (ASC_FUSE=0), across chunk
boundaries, strided and empty selections."""
import warnings

import numpy as np
import pytest

from envvars import ascc_ir, env

asc = pytest.importorskip("asc")

SRC = '''
import numpy as np
import asc

@asc.kernel
def bins_mean(data, radius, npt):
    rmax = radius.max()
    res = np.zeros(npt, dtype=np.float64)
    for i in range(npt):
        r1 = rmax * i / npt
        r2 = rmax * (i + 1) / npt
        mask_r12 = np.logical_and((r1 <= radius), (radius < r2))
        values_r12 = data[mask_r12]
        res[i] = values_r12.mean()
    return res

@asc.kernel
def stats(x, lo):
    return (np.sum(x[x > lo]), x[x > lo].max(), np.argmin(x[x > lo]),
            np.var(x[x > lo]), np.any(x[x > lo]))
'''


@pytest.fixture(scope="module")
def mods():
    with env(ASC_FUSE=None, ASC_FUSE_SELECT=None):
        on = asc.compile(SRC)
    with env(ASC_FUSE="0", ASC_FUSE_SELECT=None):
        off = asc.compile(SRC)
    return on, off


def run(mod, fuse, name, *args):
    # kernels compile at their first launch: the switches are read then
    with env(ASC_FUSE=fuse, ASC_FUSE_SELECT=None):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return getattr(mod, name)(*args)


def bins_mean_np(data, radius, npt):
    rmax = radius.max()
    res = np.zeros(npt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for i in range(npt):
            m = np.logical_and(rmax * i / npt <= radius,
                               radius < rmax * (i + 1) / npt)
            res[i] = data[m].mean()
    return res


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), (a, b)


def test_select_chunks_ir(tmp_path):
    f = tmp_path / "k.py"
    f.write_text(SRC)
    with env(ASC_FUSE_SELECT=None):
        ir = ascc_ir(f, "bins_mean(f64[:], f64[:], i64)")
    assert "select reduce: the mask in chunks of 512" in ir, ir
    assert "tensor<bool,1,contig> = local_array [512]" in ir, ir
    # the mask is not made; besides res, the one array holds the selected
    # elements as the mask's loop finds them, summed as numpy sums its
    # selection (pairwise)
    assert ir.count("new_array") == 2, ir
    # the bins still run in parallel
    assert "loop %i.it at line 9 becomes a pfor" in ir, ir
    with env(ASC_FUSE_SELECT="0"):
        ir = ascc_ir(f, "bins_mean(f64[:], f64[:], i64)")
    # ASC_FUSE_SELECT=0: the mask and the selection are made (its size
    # counted in chunks on the team from 32768 elements, docs/arrays.md)
    assert "select reduce:" not in ir and "new_array %sel.total" in ir, ir


@pytest.mark.parametrize("n", [1, 511, 512, 1537])
def test_bins_mean(mods, n):
    r = np.random.default_rng(n)
    data, radius = r.random(2 * n), r.random(2 * n)
    for d, rad in ((data[:n], radius[:n]), (data[::2], radius[1::2])):
        npt = 7 if n > 1 else 2  # bins with and without elements
        got = run(mods[0], None, "bins_mean", d, rad, npt)
        np.testing.assert_allclose(got, bins_mean_np(d, rad, npt),
                                   rtol=1e-13, equal_nan=True)
        same_bits(got, run(mods[1], "0", "bins_mean", d, rad, npt))


def test_stats_across_chunks(mods):
    r = np.random.default_rng(7)
    x = r.standard_normal(3001)
    x[1500] = np.nan  # in the third chunk: max is nan, argmin its index
    for lo in (-0.2, 5.0):  # dense, and one with nothing selected
        for v in (x, x[::3]):
            if lo == 5.0:
                with pytest.raises(ValueError):
                    run(mods[0], None, "stats", v, lo)
                with pytest.raises(ValueError):
                    v[v > lo].max()
                continue
            got = run(mods[0], None, "stats", v, lo)
            s = v[v > lo]
            want = (s.sum(), s.max(), np.argmin(s), s.var(), s.any())
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-12, equal_nan=True)
            for g, w in zip(got, run(mods[1], "0", "stats", v, lo)):
                same_bits(g, w)
