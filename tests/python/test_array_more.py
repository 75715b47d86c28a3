"""More of the numpy subset in kernels (issue 16, docs/arrays.md): zip()
and enumerate() loops; transpose, ravel and flatten; np.cumsum, np.outer
and np.linalg.norm; boolean masks and integer-array indexing.  Every kernel is also run by CPython with numpy
on copies of the same arguments, and every array argument is compared."""
import copy

import numpy as np
import pytest

import asc

TEXT = """
import numpy as np
import asc

@asc.kernel
def enum_rows(a, out):
    for i, row in enumerate(a):
        out[i] = row.sum() * i

@asc.kernel
def enum_range(n, out):
    for i, j in enumerate(range(2, n, 3)):
        out[i] = j * 10 + i
    for i, j in enumerate(range(n - 1, -1, -2), start=1):
        out[i + 5] += j

@asc.kernel
def zip_arrays(a, b, out):
    for x, y in zip(a, b):
        out[0] += x * y
    for i, (x, y) in enumerate(zip(a[1:], b), 1):
        out[i] = x - y
    for k, x, r in zip(range(a.shape[0]), a[::-1], out[::2]):
        out[k] += x + r

@asc.kernel
def zip_2d(a, b, out):
    for ra, rb, o in zip(a, b, out):
        o[:] = ra * rb
        o[0] = ra[-1]

@asc.kernel
def enum_1d(v, out):
    for i, x in enumerate(v):
        out[i] = x * 2 + i

@asc.kernel
def transposes(a, out1, out2, out3, out4):
    out1[:, :, :] = a.transpose()
    out2[:, :, :] = a.transpose(1, 0, 2) * 2
    out3[:, :, :] = np.transpose(a, (2, 0, 1)) + 1
    out4[:, :, :] = a.transpose((0, -1, 1))
    t = a.transpose(2, 1, 0)
    t[0, 0, 0] = -5.0

@asc.kernel
def flat(a, out1, out2, out3, out4, out5):
    out1[:] = a.ravel()
    out2[:] = np.ravel(a[:, ::2]) * 2
    f = a.flatten()
    f[0] = 100.0
    out3[:] = f
    b = a * 3
    r = b.ravel()
    r[1] = -1.0
    out4[:] = b.reshape(-1)
    out5[:] = a.T.ravel()

@asc.kernel
def ravel_param_is_a_copy(a, out):
    r = a.ravel()
    r[0] = 42.0
    out[:] = r

@asc.kernel
def astype_dtype(a, b, out):
    out[:] = a.astype(b.dtype) * 2

@asc.kernel
def cums(a, v, o1, o2, o3, o4, o5):
    o1[:] = np.cumsum(a)
    o2[:, :] = np.cumsum(a, axis=0)
    o3[:, :] = a.cumsum(axis=1)
    o4[:] = v.cumsum()
    o5[:, :] = np.cumsum(a[::-1, 1:] * 2, axis=-1)

@asc.kernel
def cums_int(v, out):
    out[:] = np.cumsum(v)

@asc.kernel
def outers(u1, v1, u2, v2, A, B):
    A += np.outer(u1, v1) + np.outer(u2, v2)
    B[:, :] = np.outer(u1[::-1], v1[1:])

@asc.kernel
def norms(v, a, out, rows, cols, keep):
    out[0] = np.linalg.norm(v)
    out[1] = np.linalg.norm(a)
    out[2] = np.linalg.norm(a[1])
    out[3] = np.linalg.norm(v - 1.0) / np.linalg.norm(v[::2])
    rows[:] = np.linalg.norm(a, axis=1)
    cols[:] = np.linalg.norm(a, axis=0)
    keep[:, :] = a / np.linalg.norm(a, axis=1, keepdims=True)

@asc.kernel
def masked(a, b, c, out):
    a[a > 0.5] = 0.0
    m = b < 0.3
    b[m] += 10.0
    g = b[b > 5.0]
    out[0] = g.sum()
    out[1] = g.shape[0]
    c[c[::-1] > 0.5] = -1.0

@asc.kernel
def masked_nd(a, b, out):
    a[(a > 0.2) & (a < 0.7)] = b[(a > 0.2) & (a < 0.7)]
    t = a[b > 0.5]
    out[:t.shape[0]] = t * 2
    b[b < 0.5] = np.arange(b.size)[:5]

@asc.kernel
def masked_int(v, w):
    v[v % 3 == 0] *= 7
    v[v < 0] = w[:1]
    w[w > 0] -= v[-2:]

@asc.kernel
def gathers(x, idx: asc.Tensor[asc.int64, 1], out):
    out[:] = x[idx] * 2

@asc.kernel
def gathers_nd(x, idx: asc.Tensor[asc.int32, 2], out):
    out[:, :, :] = x[idx]

@asc.kernel
def scatters(x, idx: asc.Tensor[asc.int64, 1], v: asc.Tensor[asc.float64, 1]):
    x[idx] = v

@asc.kernel
def scatters2(x, y, idx: asc.Tensor[asc.int64, 1]):
    x[idx] += 1.0
    y[idx] = y[idx[::-1]] * 10 + 0.5
    x[idx[:2]] = 3.0

@asc.kernel
def gather_local(x, out):
    i = np.arange(x.shape[0])[::-1]
    out[:] = x[i] + x[i[::2]].sum()
"""


class _StubType:
    """asc as CPython sees the kernels: plain functions."""
    prange = range

    @staticmethod
    def kernel(f=None, **kw):
        return f if f is not None else (lambda g: g)

    def __getattr__(self, name):  # asc.Tensor, asc.int64 in annotations
        return getattr(asc, name)


_Stub = _StubType()


def _python():
    ns = {"asc": _Stub}
    exec(TEXT.replace("import asc\n", ""), ns)
    return ns


@pytest.fixture(scope="module")
def m():
    return asc.compile(TEXT)


@pytest.fixture(scope="module")
def py():
    return _python()


def check(m, py, name, *args, exact=True):
    mine = copy.deepcopy(args)
    ref = copy.deepcopy(args)
    getattr(m, name)(*mine)
    py[name](*ref)
    for x, y in zip(mine, ref):
        if isinstance(y, np.ndarray):
            if exact:
                np.testing.assert_array_equal(x, y)
            else:
                np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).random(shape)


def test_enumerate_rows(m, py):
    check(m, py, "enum_rows", rnd(5, 3), np.zeros(5), exact=False)
    check(m, py, "enum_1d", rnd(7), np.zeros(7))
    check(m, py, "enum_1d", np.arange(5, dtype=np.int32), np.zeros(5, np.int64))


@pytest.mark.parametrize("n", [0, 1, 2, 5, 9, 10])
def test_enumerate_range(m, py, n):
    check(m, py, "enum_range", n, np.zeros(12, np.int64))


def test_zip(m, py):
    for n in (1, 4, 7):
        check(m, py, "zip_arrays", rnd(n), rnd(n + 2, seed=1), np.zeros(n + 3),
              exact=False)
    check(m, py, "zip_2d", rnd(4, 3), rnd(5, 3, seed=2), np.zeros((3, 3)))


@pytest.mark.parametrize("body,match", [
    ("for t in enumerate(a):\n        a[0] = 1.0", "unpacks each pair"),
    ("for x, y in zip(a):\n        a[0] = 1.0", "unpacks 1 names|sequences unpacks"),
    ("for x, y in zip(a, b, strict=True):\n        a[0] = 1.0", "no strict"),
    ("for i, (x, y) in enumerate(a):\n        a[0] = 1.0", "into names only"),
    ("for x, (i, y) in zip(a, enumerate(b)):\n        a[0] = 1.0",
     "outermost"),
    ("for i, x in enumerate(np.arange(4)):\n        a[0] = 1.0",
     "take range\\(\\) or arrays"),
    ("for i, x in enumerate(range(0, 4, n)):\n        a[0] = 1.0",
     "integer literal step"),
])
def test_zip_enumerate_diagnostics(body, match):
    text = ("import numpy as np\nimport asc\n\n@asc.kernel\n"
            "def k(a, b, n):\n    " + body + "\n")
    with pytest.raises(asc.CompileError, match=match):
        asc.compile(text)


def test_transpose_views(m, py):
    a = rnd(2, 3, 4)
    check(m, py, "transposes", a, np.zeros((4, 3, 2)), np.zeros((3, 2, 4)),
          np.zeros((4, 2, 3)), np.zeros((2, 4, 3)))


def test_ravel_and_flatten(m, py):
    a = rnd(3, 4)
    check(m, py, "flat", a, np.zeros(12), np.zeros(6), np.zeros(12),
          np.zeros(12), np.zeros(12))


def test_ravel_of_a_parameter_copies():
    """Deliberate difference (docs/arrays.md): ravel of an array the
    compiler cannot prove contiguous is a copy, so writes through it stay
    in the copy; numpy writes through a view when a is contiguous."""
    m = asc.compile(TEXT)
    a, out = rnd(2, 3), np.zeros(6)
    before = a.copy()
    m.ravel_param_is_a_copy(a, out)
    np.testing.assert_array_equal(a, before)
    want = before.ravel().copy()
    want[0] = 42.0
    np.testing.assert_array_equal(out, want)


def test_astype_with_another_arrays_dtype(m, py):
    check(m, py, "astype_dtype", rnd(5) * 10, np.zeros(1, np.int32),
          np.zeros(5, np.int32))


def test_cumsum(m, py):
    a, v = rnd(4, 5), rnd(7, seed=3)
    check(m, py, "cums", a, v, np.zeros(20), np.zeros((4, 5)), np.zeros((4, 5)),
          np.zeros(7), np.zeros((4, 4)))
    a32, v32 = a.astype(np.float32), v.astype(np.float32)
    check(m, py, "cums", a32, v32, np.zeros(20, np.float32),
          np.zeros((4, 5), np.float32), np.zeros((4, 5), np.float32),
          np.zeros(7, np.float32), np.zeros((4, 4), np.float32))
    # int32 sums in int64, as numpy's; wraps like numpy
    v = np.array([2**31 - 1, 5, -3, 2**31 - 1], np.int32)
    out = np.zeros(4, np.int64)
    m.cums_int(v, out)
    np.testing.assert_array_equal(out, np.cumsum(v))
    assert np.cumsum(v).dtype == np.int64


def test_outer(m, py):
    u1, v1, u2, v2 = rnd(4), rnd(5, seed=1), rnd(4, seed=2), rnd(5, seed=3)
    check(m, py, "outers", u1, v1, u2, v2, rnd(4, 5, seed=4), np.zeros((4, 4)),
          exact=False)
    iu = np.arange(4, dtype=np.int32)
    iv = np.arange(5, dtype=np.int64) - 2
    A, B = np.zeros((4, 5), np.int64), np.zeros((4, 4), np.int64)
    m.outers(iu, iv, iu, iv, A, B)
    np.testing.assert_array_equal(A, 2 * np.outer(iu, iv))
    np.testing.assert_array_equal(B, np.outer(iu[::-1], iv[1:]))


def test_norm(m, py):
    v, a = rnd(9) - 0.5, rnd(3, 4, seed=5) - 0.5
    args = (v, a, np.zeros(4), np.zeros(3), np.zeros(4), np.zeros((3, 4)))
    mine = copy.deepcopy(args)
    m.norms(*mine)
    want = copy.deepcopy(args)
    py["norms"](*want)
    for x, y in zip(mine[2:], want[2:]):
        np.testing.assert_allclose(x, y, rtol=1e-14, atol=0)
    v32, a32 = v.astype(np.float32), a.astype(np.float32)
    out = np.zeros(4, np.float32)
    m.norms(v32, a32, out, np.zeros(3, np.float32), np.zeros(4, np.float32),
            np.zeros((3, 4), np.float32))
    np.testing.assert_allclose(out[:2], [np.linalg.norm(v32), np.linalg.norm(a32)],
                               rtol=1e-6)


@pytest.mark.parametrize("body,match", [
    ("a[0] = np.linalg.norm(a, ord=1)", "ord=None"),
    ("a[0] = np.linalg.norm(a, 2)", "ord=None"),
    ("a[0] = np.linalg.norm(b, axis=(0, 1))", "one axis"),
    ("x = np.linalg.pinv(b)", "np.linalg.pinv is not supported"),
    ("c = np.outer(b, a)", "two 1-D arrays"),
    ("c = np.cumsum(a, dtype=np.float32)", "dtype="),
    ("c = a.transpose(0, 0)", "permutation"),
    ("c = b.transpose(1)", "permutation"),
    ("c = np.transpose(b, (0, n))", "permutation"),
    ("if a.dtype == np.float64:\n        a[0] = 1.0", "comparing dtypes"),
])
def test_view_and_function_diagnostics(body, match):
    text = ("import numpy as np\nimport asc\n\n@asc.kernel\n"
            "def k(a, b, n):\n    a[0] = 0.0\n    b[0, 0] = 0.0\n    " + body + "\n")
    with pytest.raises(asc.CompileError, match=match):
        asc.compile(text).k(np.zeros(3), np.zeros((2, 3)), 1)


def test_boolean_masks(m, py):
    check(m, py, "masked", rnd(10), rnd(10, seed=1), rnd(10, seed=2), np.zeros(2))
    a, b = rnd(4, 5), rnd(4, 5, seed=7)
    n = int((b > 0.5).sum())
    c = b.copy()
    c[c < 0.5] = 0.9  # numpy needs exactly 5 (or 1) values for the last store
    c.flat[:5] = 0.1
    check(m, py, "masked_nd", a, c, np.zeros(20))
    assert n > 0
    check(m, py, "masked_int", np.arange(-5, 60, dtype=np.int64),
          np.arange(-3, 3, dtype=np.int64))


def test_mask_errors(m):
    # numpy: as many values as true elements, or one
    a, b = rnd(4, 5), rnd(4, 5, seed=7)
    b[:] = 0.1  # 20 true elements, 5 values
    with pytest.raises(ValueError, match="cannot assign 5 input values to "
                       "the 20 output values where the mask is true"):
        m.masked_nd(a, b, np.zeros(20))
    v = np.arange(-5, 60, dtype=np.int64)
    with pytest.raises(ValueError, match="cannot assign"):
        m.masked_int(v, np.arange(-3, 10, dtype=np.int64))


def test_mask_shape_mismatch():
    k = asc.compile("import numpy as np\nimport asc\n@asc.kernel\n"
                    "def k(a, b):\n    a[b > 0.5] = 1.0\n")
    with pytest.raises(IndexError, match="boolean index did not match indexed "
                       "array along axis 0; size of axis is 3 but size of "
                       "corresponding boolean axis is 4"):
        k.k(np.zeros(3), np.ones(4))
    a = np.zeros(3)
    k.k(a, np.array([0.0, 1.0, 1.0]))
    np.testing.assert_array_equal(a, [0.0, 1.0, 1.0])


def test_integer_array_gathers(m, py):
    x = rnd(6)
    check(m, py, "gathers", x, np.array([0, -1, 3, 3, 5, -6]), np.zeros(6))
    check(m, py, "gathers", x, np.array([], np.int64), np.zeros(0))
    x2 = rnd(5, 3)
    idx = np.array([[0, 4], [-1, 2], [1, 1]], np.int32)
    check(m, py, "gathers_nd", x2, idx, np.zeros((3, 2, 3)))
    check(m, py, "gather_local", rnd(7), np.zeros(7))
    # out of bounds raises like numpy, whatever boundscheck says
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 0 "
                       "with size 6"):
        m.gathers(x, np.array([0, 6, 1, 2, 3, 4]), np.zeros(6))
    with pytest.raises(IndexError, match="index -7 is out of bounds"):
        m.gathers(x, np.array([0, -7, 1, 2, 3, 4]), np.zeros(6))


def test_integer_array_scatters(m, py):
    x = rnd(6)
    check(m, py, "scatters", x, np.array([0, -1, 3, 2]), np.arange(4.0))
    check(m, py, "scatters", x, np.array([1, 1, 4]), np.arange(3.0))
    # x[i] += 1 with a repeated index adds once, as numpy's (not np.add.at)
    check(m, py, "scatters2", rnd(6), rnd(6, seed=1), np.array([1, 4, 4, -1]))
    with pytest.raises(IndexError, match="out of bounds"):
        m.scatters(x, np.array([0, 9]), np.arange(2.0))


@pytest.mark.parametrize("body,match", [
    ("a[b > 0] = 1.0", "number of axes \\(1\\), not 2"),
    ("a[a * 1.5] = 1.0", "integer \\(or boolean\\) type"),
    ("a[a > 0] = b", "cannot broadcast"),
    ("b[b > 0, 0] = 1.0", "only as the whole index"),
    ("b[b[0] > 0, :] = 1.0", "only as the whole index"),
])
def test_mask_and_gather_diagnostics(body, match):
    text = ("import numpy as np\nimport asc\n\n@asc.kernel\n"
            "def k(a, b):\n    a[0] = 0.0\n    b[0, 0] = 0.0\n    " + body + "\n")
    with pytest.raises(asc.CompileError, match=match):
        asc.compile(text).k(np.zeros(3), np.zeros((2, 3)))


def test_array_fuzz_batches(tmp_path):
    """tests/tools/array_fuzz.py --batch: many cases per module compiled
    ahead of time by ascc; bounded here (the long runs are by hand)."""
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    p = subprocess.run([sys.executable, str(root / "tests/tools/array_fuzz.py"),
                        "--seed", "5", "--count", "24", "--batch", "12", "--opt", "0",
                        "--last", str(tmp_path / "last.py")],
                       capture_output=True, text=True, timeout=900,
                       env={**os.environ, "ASC_CACHE_DIR": str(tmp_path / "cache")})
    assert p.returncode == 0, p.stdout + p.stderr
    counts = dict(re.findall(r"^  (\w[\w ]*?)\s+(\d+)\b", p.stdout, re.M))
    assert counts["cases"] == "24", p.stdout
    assert counts["mismatched"] == "0" and counts["internal error"] == "0", p.stdout
    assert int(counts["matched"]) >= 20, p.stdout
    assert counts["modules"] == "2", p.stdout
