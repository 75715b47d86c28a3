"""The dot products of one statement in one pass over their vectors
(np.dot(x, y) / (np.linalg.norm(x) * np.linalg.norm(y)): three products,
x and y read once, not three times): asc_krt.linalg's ASC_KLINALG_DOTS
(docs/arrays.md, "Dot products of vectors").  Checked against numpy for
lengths on both sides of the call's threshold and of the team's split,
strided and reversed views, float32, pairs of unequal lengths (each its
own call), the shape error, and the statements that must not be batched
(a helper or an array write in the statement, a conditional branch)."""
import numpy as np
import pytest

from envvars import ascc_ir

asc = pytest.importorskip("asc")

SRC = '''
import numpy as np
import asc


@asc.kernel
def cosine(x, y):
    return np.dot(x, y) / (np.linalg.norm(x) * np.linalg.norm(y))


@asc.kernel
def corr(x, y):
    sxy = x @ y
    return sxy / np.sqrt((x @ x) * (y @ y))


@asc.kernel
def three(a, b, c):
    return np.dot(a, b) + 2.0 * np.dot(b, c) - np.dot(a[::-1], c)


@asc.kernel
def views(m, x):
    return np.dot(m[:, 0], x[::2]), np.dot(m[:, 1], m[:, 2])


@asc.kernel
def unequal(a, b, c, d):
    return np.dot(a, b) * np.dot(c, d)


@asc.kernel
def rows(m, out):
    for i in range(m.shape[0] - 1):
        out[i] = np.dot(m[i], m[i + 1]) / (np.linalg.norm(m[i]) * np.linalg.norm(m[i + 1]))


@asc.kernel
def branch(x, y, flag):
    return np.dot(x, y) if flag else np.dot(x, x)


@asc.func
def bump(x):
    x[0] += 1.0
    return 0.0


@asc.kernel
def helper(x, y):
    return bump(x) + np.dot(x, y) + np.dot(y, y)
'''

SIZES = [0, 1, 1023, 1024, 5000, 65_535, 65_536, 300_001]


@pytest.fixture(scope="module")
def mod():
    return asc.compile(SRC)


def close(got, want, scale, tol=1e-12):
    assert abs(got - want) <= tol * (scale + 1), (got, want)


@pytest.mark.parametrize("n", SIZES)
def test_cosine_and_corr(mod, n):
    r = np.random.default_rng(n)
    x, y = r.standard_normal(n), r.standard_normal(n)
    if n == 0:
        with np.errstate(invalid="ignore"):
            assert np.isnan(mod.cosine(x, y))
        return
    want = np.dot(x, y) / (np.linalg.norm(x) * np.linalg.norm(y))
    close(mod.cosine(x, y), want, 1, 1e-10)
    close(mod.corr(x, y), want, 1, 1e-10)


@pytest.mark.parametrize("n", [3000, 200_000])
def test_three_and_views(mod, n):
    r = np.random.default_rng(n + 1)
    a, b, c = (r.standard_normal(n) for _ in range(3))
    want = np.dot(a, b) + 2.0 * np.dot(b, c) - np.dot(a[::-1], c)
    scale = np.abs(a) @ np.abs(b) + 2 * np.abs(b) @ np.abs(c) + np.abs(a) @ np.abs(c)
    close(mod.three(a, b, c), want, scale)
    with pytest.raises(ValueError, match="not aligned"):
        mod.three(a, b, np.ones(n + 1))
    m = r.standard_normal((n, 3))
    x = r.standard_normal(2 * n)
    g0, g1 = mod.views(m, x)
    close(g0, np.dot(m[:, 0], x[::2]), np.abs(m[:, 0]) @ np.abs(x[::2]))
    close(g1, np.dot(m[:, 1], m[:, 2]), np.abs(m[:, 1]) @ np.abs(m[:, 2]))


def test_unequal_lengths_each_its_own(mod):
    r = np.random.default_rng(3)
    for n, k in ((5000, 7000), (100_000, 3), (2000, 2000)):
        a, b = r.standard_normal(n), r.standard_normal(n)
        c, d = r.standard_normal(k), r.standard_normal(k)
        want = np.dot(a, b) * np.dot(c, d)
        close(mod.unequal(a, b, c, d), want, abs(want), 1e-10)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_dtypes(mod, dt):
    r = np.random.default_rng(5)
    x = r.standard_normal(100_000).astype(dt)
    y = r.standard_normal(100_000).astype(dt)
    got = mod.corr(x, y)
    xd, yd = x.astype(float), y.astype(float)
    want = (xd @ yd) / np.sqrt((xd @ xd) * (yd @ yd))
    assert abs(got - want) <= (1e-4 if dt == np.float32 else 1e-12)
    assert np.asarray(got).dtype == dt


def test_in_a_loop(mod):
    m = np.random.default_rng(9).standard_normal((20, 5000))
    out = np.zeros(19)
    mod.rows(m, out)
    want = [np.dot(m[i], m[i + 1]) / (np.linalg.norm(m[i]) * np.linalg.norm(m[i + 1]))
            for i in range(19)]
    np.testing.assert_allclose(out, want, rtol=1e-12)


def test_shape_error(mod):
    with pytest.raises(ValueError, match="not aligned"):
        mod.cosine(np.ones(3000), np.ones(3001))


def test_not_batched_where_order_matters(mod):
    x = np.arange(5000.0)
    y = np.ones(5000)
    assert mod.branch(x, y, True) == np.dot(x, y)
    assert mod.branch(x, y, False) == np.dot(x, x)
    x2 = x.copy()
    got = mod.helper(x2, y)
    # the helper runs first and changes x[0]; the products see the change
    assert x2[0] == 1.0
    assert got == pytest.approx(np.dot(x2, y) + np.dot(y, y), rel=1e-12)


def test_the_ir(tmp_path):
    f = tmp_path / "d.py"
    f.write_text(SRC)
    ir = ascc_ir(f, "cosine(f64[1], f64[1])")
    assert "the 3 dot products of the statement at line 8" in ir, ir
    ir = ascc_ir(f, "helper(f64[1], f64[1])")
    assert "dot products of the statement" not in ir
    ir = ascc_ir(f, "branch(f64[1], f64[1], bool)")
    assert "dot products of the statement" not in ir
