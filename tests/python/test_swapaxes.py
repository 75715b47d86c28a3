"""np.swapaxes, a.swapaxes and np.moveaxis: views with the axes permuted
(types/infer_call.c, asc__transpose_axes; lower_view.c), against numpy
for every pair of axes of a 3-D array, negative axes, views that are not
contiguous, stores through the view, reductions of it, and the compile
errors of axes out of range, axes that are not constants, and moveaxis
of sequences."""
import itertools

import numpy as np
import pytest

asc = pytest.importorskip("asc")

TEMPLATE = '''
import numpy as np
import asc


@asc.kernel
def sw(a):
    return np.swapaxes(a, {i}, {j}) * 2.0


@asc.kernel
def sw_method(a):
    return a.swapaxes({i}, {j}) + 1.0


@asc.kernel
def mv(a):
    return np.moveaxis(a, {i}, {j}) - 1.0
'''

SRC = '''
import numpy as np
import asc


@asc.kernel
def store(a, b):
    np.swapaxes(a, 0, 1)[...] = b


@asc.kernel
def sums(a):
    return np.moveaxis(a, 2, 0).sum(axis=0)


@asc.kernel
def rows_first(a):
    t = np.moveaxis(a, -1, 0)
    t[0] = 0.0
    return t.shape[0]
'''

PAIRS = [(i, j) for i, j in itertools.product(range(-3, 3), repeat=2)]


@pytest.mark.parametrize("i,j", PAIRS)
def test_every_pair_against_numpy(i, j):
    m = asc.compile(TEMPLATE.format(i=i, j=j))
    a = np.random.default_rng((i + 3) * 7 + j + 3).random((2, 3, 4))
    np.testing.assert_array_equal(m.sw(a), np.swapaxes(a, i, j) * 2.0)
    np.testing.assert_array_equal(m.sw_method(a), a.swapaxes(i, j) + 1.0)
    np.testing.assert_array_equal(m.mv(a), np.moveaxis(a, i, j) - 1.0)
    v = np.random.default_rng(1).random((4, 6, 5))[::2, ::-2, 1:]
    np.testing.assert_array_equal(m.sw(v), np.swapaxes(v, i, j) * 2.0)
    np.testing.assert_array_equal(m.mv(v), np.moveaxis(v, i, j) - 1.0)


def test_stores_and_reductions():
    m = asc.compile(SRC)
    b = np.random.default_rng(2).random((3, 2))
    x = np.zeros((2, 3))
    m.store(x, b)
    np.testing.assert_array_equal(x, b.T)
    a = np.random.default_rng(3).random((2, 3, 4))
    np.testing.assert_allclose(m.sums(a), np.moveaxis(a, 2, 0).sum(axis=0),
                               rtol=1e-14)
    c = a.copy()
    assert m.rows_first(c) == 4
    want = a.copy()
    np.moveaxis(want, -1, 0)[0] = 0.0
    np.testing.assert_array_equal(c, want)


@pytest.mark.parametrize("call,msg", [
    ("np.swapaxes(a, 0, 3)", "swapaxes's axes are integer constants"),
    ("np.swapaxes(a, 0, n)", "swapaxes's axes are integer constants"),
    ("np.moveaxis(a, -4, 0)", "moveaxis's axes are integer constants"),
    ("np.moveaxis(a, (0, 1), (1, 0))", "not yet sequences"),
])
def test_errors(call, msg):
    src = ("import numpy as np\nimport asc\n\n@asc.kernel\ndef f(a, n):\n"
           "    return %s\n" % call)
    with pytest.raises(asc.CompileError, match=msg):
        asc.compile(src).f(np.ones((2, 3, 4)), 1)
