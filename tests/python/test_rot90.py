"""np.rot90(m, k=1, axes=(0, 1)) in kernels: numpy's view (flips and a
swap of the two axes), any k (mod 4), axes of either sign, a store
through it lands in m; numpy's errors (docs/arrays.md, "Diagonals and
flips")."""
import numpy as np
import pytest

import asc

SRC = """
import numpy as np
import asc

@asc.kernel
def r(m):
    return np.rot90(m).copy()

@asc.kernel
def rk(m):
    return (np.rot90(m, 0).copy(), np.rot90(m, 2).copy(),
            np.rot90(m, 3).copy(), np.rot90(m, -1).copy(), np.rot90(m, 5).copy())

@asc.kernel
def raxes(m):
    return (np.rot90(m, 1, (1, 2)).copy(), np.rot90(m, 3, axes=(2, 0)).copy(),
            np.rot90(m, k=2, axes=(-1, -3)).copy())

@asc.kernel
def in_expr(m):
    return np.rot90(m) * 2 + 1

@asc.kernel
def store(m):
    v = np.rot90(m)
    v[0, :] = -1
"""

M = asc.compile(SRC)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.complex128])
@pytest.mark.parametrize("shape", [(3, 4), (1, 5), (4, 1), (0, 3), (2, 2)])
def test_rot90_2d(dtype, shape):
    m = (np.arange(np.prod(shape)).reshape(shape) * 1.5).astype(dtype)
    got = M.r(m)
    assert got.dtype == m.dtype
    np.testing.assert_array_equal(got, np.rot90(m))
    for g, k in zip(M.rk(m), (0, 2, 3, -1, 5)):
        np.testing.assert_array_equal(g, np.rot90(m, k))
    np.testing.assert_array_equal(M.in_expr(m), np.rot90(m) * 2 + 1)


def test_rot90_views_and_axes():
    a = np.arange(60.0).reshape(3, 4, 5)
    for m in (a, a[:, ::-1, 1:], a.transpose(2, 0, 1)):
        want = (np.rot90(m, 1, (1, 2)), np.rot90(m, 3, axes=(2, 0)),
                np.rot90(m, k=2, axes=(-1, -3)))
        for g, w in zip(M.raxes(m), want):
            np.testing.assert_array_equal(g, w)


def test_rot90_is_a_view():
    m = np.arange(12.0).reshape(3, 4)
    want = m.copy()
    np.rot90(want)[0, :] = -1
    M.store(m)
    np.testing.assert_array_equal(m, want)


@pytest.mark.parametrize("call, message", [
    ("np.rot90(m, n)", "np.rot90's k is an integer constant in kernels"),
    ("np.rot90(m, 1, (0, 0))", "Axes must be different."),
    ("np.rot90(m, 1, (0, 2))", "Axes must be different."),
    ("np.rot90(m, 1, (0, 1, 2))", "len(axes) must be 2."),
    ("np.rot90(m, 1, (0, 3))", "Axes out of range"),
    ("np.rot90(v)", "Axes must be different."),  # numpy's, of 1-D
])
def test_rot90_errors(call, message):
    src = ("import numpy as np\nimport asc\n\n@asc.kernel\n"
           f"def k(m: asc.Tensor, v: asc.Tensor, n: int):\n"
           f"    return {call}.copy()\n")
    with pytest.raises(asc.CompileError) as ei:
        asc.compile(src).k(np.ones((2, 3)), np.ones(3), 1)
    assert message in str(ei.value) and ":6:" in str(ei.value)
