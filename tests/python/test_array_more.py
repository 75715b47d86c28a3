"""More of the numpy subset in kernels (issue 16, docs/arrays.md): zip()
and enumerate() loops.  Every kernel is also run by CPython with numpy
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
"""


class _Stub:
    """asc as CPython sees the kernels: plain functions."""
    prange = range

    @staticmethod
    def kernel(f=None, **kw):
        return f if f is not None else (lambda g: g)


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
