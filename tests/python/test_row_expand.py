"""Row-wise fusion of a reduction along the last axis broadcast back by
m[:, None], m[..., np.newaxis] or m.reshape(-1, 1) (docs/optimizer.md,
"Fusion across statements", Rows): computed once per row of the
statement that reads it, as with keepdims=True.  Results against numpy,
bit for bit against ASC_FUSE=0, and the IR notes."""
import numpy as np
import pytest

from envvars import ascc_ir, env

asc = pytest.importorskip("asc")

SRC = '''
import numpy as np
import asc

@asc.kernel
def softmax_nk(x):
    m = x.max(axis=1)
    e = np.exp(x - m[:, None])
    return e / e.sum(axis=1)[:, None]

@asc.kernel
def center3(x):
    mu = np.mean(x, axis=-1)
    return x - mu[..., np.newaxis]

@asc.kernel
def scale_reshape(x):
    s = np.sum(x, axis=1)
    return x / s.reshape(-1, 1)

@asc.kernel
def into_out(x, out):
    m = np.min(x, axis=-1)
    out[:, :] = (x - m[:, np.newaxis]) * 0.5

@asc.kernel
def read_twice(x):
    m = x.max(axis=1)
    return x - m[:, None] + m[:, None]

@asc.kernel
def logsumexp(x):
    m = x.max(axis=1)
    return np.log(np.sum(np.exp(x - m[:, None]), axis=1)) + m
'''

NUMPY = {}
exec(SRC.replace("@asc.kernel", ""), NUMPY)


def same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


@pytest.fixture(scope="module")
def mods():
    with env(ASC_FUSE=None):
        on = asc.compile(SRC)
    with env(ASC_FUSE="0"):
        off = asc.compile(SRC)
    return on, off


def run(mods, name, *args, out=None):
    res = []
    for mod, fuse in zip(mods, (None, "0")):
        with env(ASC_FUSE=fuse):
            if out is None:
                res.append(getattr(mod, name)(*args))
            else:
                o = np.zeros_like(out)
                getattr(mod, name)(*args, o)
                res.append(o)
    return res


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("name,shape", [("softmax_nk", (37, 129)),
                                        ("center3", (3, 5, 67)),
                                        ("scale_reshape", (40, 33)),
                                        ("read_twice", (9, 70)),
                                        ("logsumexp", (21, 50))])
def test_against_numpy_and_unfused(mods, name, shape, dt):
    x = np.random.default_rng(2).standard_normal(shape).astype(dt)
    a, b = run(mods, name, x)
    same_bits(a, b)
    want = NUMPY[name](x)
    assert a.dtype == want.dtype
    np.testing.assert_allclose(a, want, rtol=1e-5 if dt == np.float32
                               else 1e-13, atol=1e-6)


def test_into_out_and_nan(mods):
    x = np.random.default_rng(4).standard_normal((17, 40))
    x[3, 5] = np.nan
    a, b = run(mods, "into_out", x, out=x)
    same_bits(a, b)
    want = np.zeros_like(x)
    NUMPY["into_out"](x, want)
    np.testing.assert_array_equal(a, want)
    assert np.isnan(a[3]).all()


def test_empty_rows_raise_as_numpy(mods):
    x = np.zeros((4, 0))
    for mod, fuse in zip(mods, (None, "0")):
        with env(ASC_FUSE=fuse):
            with pytest.raises(ValueError, match="zero-size array"):
                mod.softmax_nk(x)
    with pytest.raises(ValueError, match="zero-size array"):
        NUMPY["softmax_nk"](x)


@pytest.mark.parametrize("sig,expect", [
    ("softmax_nk(f64[:,:])", "fuse: 'm' (line 7) is computed in this "
     "statement's loops, once per row before the row's elements, not "
     "stored"),
    ("center3(f64[:,:,:])", "fuse: 'mu' (line 13) is computed in this "
     "statement's loops, once per row"),
    ("scale_reshape(f64[:,:])", "fuse: 's' (line 18) is computed in this "
     "statement's loops, once per row"),
    ("into_out(f64[:,:], f64[:,:])", "fuse: 'm' (line 23) is computed in "
     "this statement's loops, once per row"),
    ("read_twice(f64[:,:])", "fuse: 'm' is stored: a reduction per row, "
     "read more than once"),
    ("logsumexp(f64[:,:])", "fuse: 'm' is stored: line 34 reads it whole"),
])
def test_notes(tmp_path, sig, expect):
    f = tmp_path / "k.py"
    f.write_text(SRC)
    ir = ascc_ir(f, sig)
    assert expect in ir, ir


def test_no_temporary_for_the_rows(tmp_path):
    f = tmp_path / "k.py"
    f.write_text(SRC)
    # softmax: e and the result only; the old code made m and e's sums too
    ir = ascc_ir(f, "softmax_nk(f64[:,:])")
    assert ir.count("new_array") == 2, ir
    ir = ascc_ir(f, "scale_reshape(f64[:,:])")
    assert ir.count("new_array") == 1, ir
