"""np.count_nonzero, np.isclose, np.allclose and a.sort() in kernels
(docs/arrays.md): each against numpy on the same inputs, infinities,
nans and integer arrays included; and the errors of the forms kernels
do not take."""
import numpy as np
import pytest

import asc


@asc.kernel
def count(a):
    return (np.count_nonzero(a), np.count_nonzero(a, axis=1),
            np.count_nonzero(a > 0.5, axis=0, keepdims=True))


@asc.kernel
def closeness(a, b):
    return (np.isclose(a, b), np.allclose(a, b),
            np.isclose(a, b, rtol=0.1, atol=0.0),
            np.allclose(a, b, equal_nan=True),
            np.isclose(a, b, 1e-3, 1e-6, True))


@asc.kernel
def close_scalars(x, y):
    return np.isclose(x, y)


@asc.kernel
def sort_in_place(a):
    a.sort()


@asc.kernel
def sorted_columns(a):
    b = a.copy()
    b.sort(axis=0)
    return b


def test_count_nonzero():
    a = np.random.default_rng(0).random((4, 5))
    a[a < 0.3] = 0
    total, rows, cols = count(a)
    assert total == np.count_nonzero(a)
    np.testing.assert_array_equal(rows, np.count_nonzero(a, axis=1))
    np.testing.assert_array_equal(
        cols, np.count_nonzero(a > 0.5, axis=0, keepdims=True))
    assert count(np.zeros((2, 3)))[0] == 0


EDGES_A = [1.0, np.inf, -np.inf, np.nan, 1.0, 1e10, 0.0, np.inf, 1.0, np.nan]
EDGES_B = [1.0 + 1e-9, np.inf, np.inf, np.nan, 1.1, 1.00001e10, 1e-9, 1.0,
           np.inf, 0.0]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_isclose_and_allclose_are_numpys(dtype):
    a = np.array(EDGES_A, dtype)
    b = np.array(EDGES_B, dtype)
    want = (np.isclose(a, b), np.allclose(a, b),
            np.isclose(a, b, rtol=0.1, atol=0.0),
            np.allclose(a, b, equal_nan=True),
            np.isclose(a, b, 1e-3, 1e-6, True))
    for got, w in zip(closeness(a, b), want):
        np.testing.assert_array_equal(got, w)
    # a close pair, and the same with nans in the same places
    c = np.array([1.0, 2.0, np.nan], dtype)
    assert not closeness(c, c + 1e-9)[1]
    assert closeness(c, c + 1e-9)[3]


def test_isclose_of_integers_and_scalars():
    ia, ib = np.array([1, 2, 3]), np.array([1, 2, 4])
    for got, w in zip(closeness(ia, ib)[:3],
                      (np.isclose(ia, ib), np.allclose(ia, ib),
                       np.isclose(ia, ib, rtol=0.1, atol=0.0))):
        np.testing.assert_array_equal(got, w)
    assert close_scalars(1.0, 1.0 + 1e-9)
    assert not close_scalars(1.0, 1.1)
    assert not close_scalars(1.0, np.inf)


def test_sort_method_sorts_in_place():
    x = np.random.default_rng(1).random(9)
    y = x.copy()
    sort_in_place(y)
    np.testing.assert_array_equal(y, np.sort(x))
    m = np.random.default_rng(2).random((3, 4))
    np.testing.assert_array_equal(sorted_columns(m), np.sort(m, axis=0))


@pytest.mark.parametrize("body, message", [
    ("    b = a.sort()\n    return b\n", "sorts a in place and gives None"),
    ("    return np.isclose(twice(a), a)\n",
     "reads each operand several times"),
    ("    return np.isclose(a, a, equal_nan=a[0] > 0)\n",
     "equal_nan must be True or False"),
])
def test_forms_kernels_do_not_take(body, message):
    src = ("import asc\nimport numpy as np\n\n@asc.func\ndef twice(x):\n"
           "    return x * 2.0\n\n@asc.kernel\ndef k(a):\n" + body)
    with pytest.raises(asc.CompileError, match=message) as e:
        asc.compile(src).k(np.ones(3))
    assert ":10:" in str(e.value)     # the body's line, in the text
