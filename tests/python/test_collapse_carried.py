"""A nest whose inner loop carries a scalar from one iteration to the next
(a running sum down each column, np.add.accumulate along axis 0, np.diff
and running extremes) keeps that loop serial inside the parallel outer
loop: collapsing both into one flat pfor lost the running value (wrong
results, found when the arrays kernels make got strides the dependence
test reads).  docs/parallelize.md, "Collapsing"."""
import numpy as np
import pytest

asc = pytest.importorskip("asc")

SRC = '''
import numpy as np
import asc


@asc.kernel
def running(a, out):
    for j in range(a.shape[1]):
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i, j]
            out[i, j] = s


@asc.kernel
def running_max(a, out):
    for j in range(a.shape[1]):
        m = -np.inf
        for i in range(a.shape[0]):
            m = max(m, a[i, j])
            out[i, j] = m


@asc.kernel
def accumulate0(a):
    return np.add.accumulate(a, axis=0)


@asc.kernel
def cumsum0(a):
    return np.cumsum(a, axis=0)


@asc.kernel
def independent(a, out):
    for j in range(a.shape[1]):
        for i in range(a.shape[0]):
            t = a[i, j] * 2.0
            out[i, j] = t + 1.0
'''


@pytest.fixture(scope="module")
def mod():
    return asc.compile(SRC)


@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (300, 200), (2000, 40)])
def test_running_values_down_columns(mod, shape):
    a = np.random.default_rng(sum(shape)).standard_normal(shape)
    out = np.zeros_like(a)
    mod.running(a, out)
    assert np.array_equal(out, np.add.accumulate(a, axis=0))
    mod.running_max(a, out)
    assert np.array_equal(out, np.maximum.accumulate(a, axis=0))
    assert np.array_equal(mod.accumulate0(a), np.add.accumulate(a, axis=0))
    assert np.array_equal(mod.cumsum0(a), np.cumsum(a, axis=0))


def test_independent_nest_still_parallel(mod, tmp_path):
    from envvars import ascc_ir
    a = np.random.default_rng(1).standard_normal((500, 300))
    out = np.zeros_like(a)
    mod.independent(a, out)
    assert np.array_equal(out, a * 2.0 + 1.0)
    f = tmp_path / "k.py"
    f.write_text(SRC)
    ir = ascc_ir(f, "independent(f64[2], f64[2])")
    assert "pfor" in ir
    ir = ascc_ir(f, "running(f64[2], f64[2])")
    assert "is carried from one of its iterations to the next" in ir, ir
