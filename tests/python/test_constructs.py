"""numpy code's constructs around the numpy functions, each against numpy:
comprehensions with conditions, dtypes passed as values, a.flat
(docs/arrays.md, "Constructs of numpy code").  Few kernels, many cases in each: every kernel is a compile."""
import numpy as np
import pytest

import asc

SRC = """
import numpy as np
import asc

N = 6

@asc.kernel
def comp_if(a):
    odd = np.array([x for x in range(8) if x % 2])
    pairs = np.array([i * 10 + j for i in range(4) for j in range(i) if j != 1])
    rows = sum(a[i] for i in range(N) if i < 2 or i >= N - 1)
    both = np.array([a[i] for i in (0, 1, 2, 3) if i > 0 if not i == 2])
    nest = np.array([x for x in range(10) if x % 3 == 0 and (x > 2 or x == 0)])
    none = tuple(x for x in range(3) if x > 5)
    return odd, pairs, rows, both, nest, len(none)

@asc.func
def filled(n, dtype, v):
    x = np.zeros(n, dtype=dtype)
    x[:] = v
    return x

@asc.func
def ramp(n, dtype=np.float32):
    return np.arange(n).astype(dtype)

@asc.kernel
def dtypes(a, n):
    dt = np.float32
    one = np.ones(4, dt)
    same = a.dtype
    return (filled(n, np.float64, 1.5), filled(n, dtype=np.complex128, v=2.0),
            filled(n, np.int32, 7), one, ramp(n), ramp(n, np.int16),
            filled(n, same, 3), np.empty(2, dtype=a.dtype).size)

@asc.kernel
def flat(a, b, k):
    s = 0.0
    n = 0
    for v in a.flat:
        s += v * (n + 1)
        n += 1
    a.flat[k] = -1.0
    a.flat[-1] += 100.0
    t = b[:, ::-2]
    t.flat[1] = 7
    return s, a.flat[2], t.flat[-1], b.flat[k]
"""

M = asc.compile(SRC)


def test_comprehension_conditions():
    a = np.arange(30.0).reshape(6, 5)
    odd, pairs, rows, both, nest, none = M.comp_if(a)
    np.testing.assert_array_equal(odd, np.array([x for x in range(8) if x % 2]))
    assert odd.dtype == np.int64
    np.testing.assert_array_equal(
        pairs, np.array([i * 10 + j for i in range(4) for j in range(i) if j != 1]))
    np.testing.assert_array_equal(rows, a[0] + a[1] + a[5])
    np.testing.assert_array_equal(both, a[[1, 3]])
    np.testing.assert_array_equal(nest, [0, 3, 6, 9])
    assert none == 0


def test_comprehension_condition_on_a_run_time_value():
    src = """
import numpy as np
import asc

@asc.kernel
def k(a, n):
    return np.array([a[i] for i in range(4) if i < n])
"""
    with pytest.raises(asc.CompileError, match=r"(?s):7:.*its condition \('if'\) must be "
                       r"known at compile time.*depends on run-time values"):
        asc.compile(src).k(np.arange(4.0), 2)


def test_dtype_values():
    a = np.arange(3, dtype=np.int8)
    got = M.dtypes(a, 5)
    want = (np.full(5, 1.5), np.full(5, 2.0, np.complex128), np.full(5, 7, np.int32),
            np.ones(4, np.float32), np.arange(5).astype(np.float32),
            np.arange(5).astype(np.int16), np.full(5, 3, np.int8))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    assert got[-1] == 2


DTYPE_BAD = [
    ("def k(x, dtype=np.float64):\n    x[0] = 1\n",
     r"(?s):4:.*parameter 'dtype': a kernel's parameters take arrays and numbers, not a dtype"),
    ("def k(x):\n    dt = np.float32\n    x[0] = dt + 1\n",
     r"unsupported operand types for \+: type\[numpy.float32\]"),
    ("def k(x):\n    dt = np.float32\n    dt = np.float64\n    x[:] = np.ones(3, dt)\n",
     r"cannot assign type\[numpy.float64\] to 'dt', which has type type\[numpy.float32\]"),
]


def test_flat():
    for shape in [(2, 3), (4,), (2, 2, 3)]:
        a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)[..., ::-1] * 1.5
        b = np.arange(24, dtype=np.int32).reshape(4, 6)
        a0, b0 = a.copy(), b.copy()
        got = M.flat(a, b, 1)
        want_s = sum(v * (i + 1) for i, v in enumerate(a0.flat))
        a0.flat[1] = -1.0
        a0.flat[-1] += 100.0
        t = b0[:, ::-2]
        t.flat[1] = 7
        assert got[0] == pytest.approx(want_s)
        assert got[1:] == (a0.flat[2], t.flat[-1], b0.flat[1])
        np.testing.assert_array_equal(a, a0)
        np.testing.assert_array_equal(b, b0)
    a = np.zeros(3)
    with pytest.raises(IndexError, match="index 3 is out of bounds for size 3"):
        M.flat(a, np.zeros((4, 6), np.int32), 3)
    with pytest.raises(IndexError, match="index -4 is out of bounds for size 3"):
        M.flat(a, np.zeros((4, 6), np.int32), -4)
    assert not a.any()


FLAT_BAD = [
    ("def k(x):\n    y = x.flat\n    x[0] = 1\n",
     r"kernels read a.flat indexed by one integer .*use a.ravel\(\)"),
    ("def k(x):\n    x[0] = x.flat[1:].sum()\n",
     r"kernels index a.flat with one integer .*a.ravel\(\)\[...\]"),
]


LIST_BAD = [
    ("def k(x):\n    parts = [x, x * 2]\n    return np.concatenate(parts)\n",
     r"(?s):5:.*a list or tuple of arrays held in a name \('parts'\) is not supported in "
     r"kernels yet: write it in place where it is used"),
    ("def k(x):\n    s = 0.0\n    for p in (x, x * 2):\n        s += p.sum()\n    return s\n",
     r"(?s):6:.*a for loop over a tuple or list of Tensor\[float64, 1\] is not supported.*"
     r"use a comprehension, which is unrolled"),
]


def test_lists_of_arrays_nearest_spellings():
    m = asc.compile("""
import numpy as np
import asc

@asc.kernel
def k(a, b):
    return (np.concatenate([a, b * 2, a]), np.stack([a, b * 2], axis=1),
            sum(p.sum() for p in (a, b * 2)))
""")
    a, b = np.arange(3.0), np.arange(3.0, 6.0)
    c, s, t = m.k(a, b)
    np.testing.assert_array_equal(c, np.concatenate([a, b * 2, a]))
    np.testing.assert_array_equal(s, np.stack([a, b * 2], axis=1))
    assert t == a.sum() + (b * 2).sum()


# what stays unsupported: the error names what, where and what to write
@pytest.mark.parametrize("body,msg", DTYPE_BAD + FLAT_BAD + LIST_BAD)
def test_unsupported_forms_have_clear_errors(body, msg):
    with pytest.raises(asc.CompileError, match=msg):
        asc.compile("import asc\nimport numpy as np\n@asc.jit\n" + body).k(np.zeros(3))
