"""Lists and comprehensions in kernels (docs/arrays.md, "Lists and
comprehensions"): list displays where numpy code writes shapes, axes and
arrays to stack; comprehensions unrolled at compile time over sequences of
static length; np.ndarray(shape, dtype=...); and the errors of the forms
that stay unsupported."""
import numpy as np
import pytest

import asc
from test_np_ufuncs import same  # dtype, shape and every element (NaN equal)

TEXT = """
import numpy as np
import asc

@asc.kernel
def shapes(a):
    n = a.shape[0]
    e = np.empty([n, 2])
    e[:, 0] = a[:, 1]
    e[:, 1] = a[:, 0]
    z = np.zeros([n, a.shape[1]], dtype=np.float32)
    f = np.full([2, n], 7, dtype=np.int32)
    r = a.reshape([n, -1])
    r2 = np.reshape(a, [-1])
    t = np.transpose(a, [1, 0])
    s = np.sum(a, axis=[0, 1])
    m = np.max(a, axis=[1])
    return e, z, f, r, r2, t, s, m

@asc.kernel
def stacks(a, b):
    return (np.concatenate([a, b]), np.concatenate([a, b, a], axis=0),
            np.stack([a, b], axis=1), np.hstack([a, b]), np.vstack([a, b]),
            np.column_stack([a, b]), np.concatenate([a[i:i + 1] * i for i in range(3)]),
            np.stack(tuple(a * k for k in (1, 2, 3))))

@asc.kernel
def comps(a):
    s = tuple(d + 1 for d in a.shape)
    v = [a[i] * 2 for i in range(3)]
    t = sum(v)
    g = sum(a[i] for i in range(1, 4, 2))
    w = np.zeros(tuple(d * 2 for d in a.shape))
    p = sum(i * j for i, j in zip(range(3), (4, 5, 6)))
    q = sum(k * d for k, d in enumerate(a.shape, 1))
    m = sum(x * y for x in range(3) for y in range(x))
    l = list(d for d in a.shape)
    neg = tuple(i for i in range(3, -3, -2))
    return s[0], t, g, w, p, q, m, l[0], neg[0], neg[1], neg[2]

@asc.kernel
def comps_2d(a):
    s = tuple(d - 1 for d in a.shape)
    c = tuple(a.shape)
    return (s[0], s[-1], sum(a.shape), c[1],
            np.ones([d + 1 for d in a.shape]), sum(np.sum(a[i]) for i in range(2)))

@asc.kernel
def arrays(a, x):
    p = np.array([1, 2, 3])
    q = np.array([1, 2.5, x])
    s = np.array([[1, 2], [3, 4]], dtype=np.float32)
    t = np.array([np.sum(a[i]) for i in range(2)])
    u = np.array([a[0], a[1] * 2])
    v = np.asarray(a, dtype=np.float32)
    w = np.array(a)
    w[0, 0] = 100
    c = np.array(tuple(a.shape))
    b = np.array([True, False])
    n = np.array([[i * j for j in range(3)] for i in range(2)])
    st = np.asarray([a[1], a[0]], dtype=np.int32)
    return p, q, s, t, u, v, w, c, b, n, st

@asc.kernel
def nd(a):
    x = np.ndarray((a.shape[0], 3), dtype=a.dtype)
    x[:] = 1
    y = np.ndarray(a.shape[0] + 1, dtype=np.float64)
    y[:] = 2
    return x, y
"""


@pytest.fixture(scope="module")
def mod():
    return asc.compile(TEXT)


def test_list_displays_as_shapes_and_axes(mod):
    a = np.arange(6.0).reshape(3, 2)
    e, z, f, r, r2, t, s, m = mod.shapes(a)
    same(e, a[:, ::-1].copy())
    same(z, np.zeros([3, 2], dtype=np.float32))
    same(f, np.full([2, 3], 7, dtype=np.int32))
    same(r, a.reshape([3, -1]))
    same(r2, np.reshape(a, [-1]))
    same(t, np.transpose(a, [1, 0]))
    assert s == np.sum(a, axis=(0, 1))
    same(m, np.max(a, axis=1))


def test_lists_of_arrays_to_stack(mod):
    a, b = np.arange(3.0), np.arange(3.0) + 5
    want = (np.concatenate([a, b]), np.concatenate([a, b, a], axis=0),
            np.stack([a, b], axis=1), np.hstack([a, b]), np.vstack([a, b]),
            np.column_stack([a, b]), np.concatenate([a[i:i + 1] * i for i in range(3)]),
            np.stack(tuple(a * k for k in (1, 2, 3))))
    for got, w in zip(mod.stacks(a, b), want):
        same(got, w)


def test_comprehensions_unrolled(mod):
    a = np.arange(5.0)
    s0, t, g, w, p, q, m, l0, n0, n1, n2 = mod.comps(a)
    assert s0 == tuple(d + 1 for d in a.shape)[0]
    assert t == sum([a[i] * 2 for i in range(3)])
    assert g == sum(a[i] for i in range(1, 4, 2))
    same(w, np.zeros(tuple(d * 2 for d in a.shape)))
    assert p == sum(i * j for i, j in zip(range(3), (4, 5, 6)))
    assert q == sum(k * d for k, d in enumerate(a.shape, 1))
    assert m == sum(x * y for x in range(3) for y in range(x))
    assert l0 == list(d for d in a.shape)[0]
    assert (n0, n1, n2) == tuple(i for i in range(3, -3, -2))


def test_comprehensions_follow_each_signature(mod):
    # one kernel, two ranks: each signature unrolls the comprehension anew
    for a in (np.arange(6.0).reshape(2, 3), np.arange(24.0).reshape(2, 3, 4)):
        first, last, ssum, shp1, ones, total = mod.comps_2d(a)
        assert (first, last) == (a.shape[0] - 1, a.shape[-1] - 1)
        assert ssum == sum(a.shape)
        assert shp1 == a.shape[1]
        same(ones, np.ones([d + 1 for d in a.shape]))
        assert total == sum(np.sum(a[i]) for i in range(2))


def test_comprehension_in_helper_instances():
    m = asc.compile("""
import numpy as np
import asc

@asc.func
def grown(x):
    return np.zeros([d + 1 for d in x.shape])

@asc.kernel
def k(a, b):
    return grown(a), grown(b)
""")
    a, b = np.zeros(3), np.zeros((2, 2))
    ga, gb = m.k(a, b)
    same(ga, np.zeros(4))
    same(gb, np.zeros((3, 3)))


def test_np_array_of_lists(mod):
    a = np.arange(6.0).reshape(2, 3)
    x = np.float32(3)
    got = mod.arrays(a, x)
    w = np.array(a)
    w[0, 0] = 100
    want = (np.array([1, 2, 3]), np.array([1, 2.5, x]),
            np.array([[1, 2], [3, 4]], dtype=np.float32),
            np.array([np.sum(a[i]) for i in range(2)]), np.array([a[0], a[1] * 2]),
            np.asarray(a, dtype=np.float32), w, np.array(tuple(a.shape)),
            np.array([True, False]), np.array([[i * j for j in range(3)] for i in range(2)]),
            np.asarray([a[1], a[0]], dtype=np.int32))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        same(g, w)
    assert a[0, 0] == 0  # np.array copies


def test_np_array_of_arrays_checks_shapes():
    m = asc.compile("""
import numpy as np
import asc

@asc.kernel
def k(a, b):
    return np.array([a, b])
""")
    same(m.k(np.ones(3), np.zeros(3)), np.array([np.ones(3), np.zeros(3)]))
    with pytest.raises(ValueError, match="same shape"):
        m.k(np.ones(3), np.zeros(4))


def test_ndarray_constructor(mod):
    a = np.arange(4, dtype=np.float32)
    x, y = mod.nd(a)
    want = np.ndarray((4, 3), dtype=a.dtype)
    want[:] = 1
    same(x, want)
    same(y, np.full(5, 2.0))


BAD = [
    ("def k(x, n):\n    v = [1, 2]\n    v.append(3)\n    x[0] = v[0]\n",
     r"lists in kernels have a fixed length \('\.append\(\)'\)"),
    ("def k(x, n):\n    v = [1, 2.0]\n    x[0] = v[n]\n",
     r"can only be indexed with a constant \(its elements differ in type"),
    ("def k(x, n):\n    v = [1, 2]\n    v[0] = 3\n    x[0] = v[0]\n",
     r"cannot assign to an element of tuple.*fixed length"),
    ("def k(x, n):\n    x[0] = sum(i for i in range(n))\n",
     r"unrolled at compile time.*this bound of range\(\) is not a compile-time constant"),
    ("def k(x, n):\n    x[0] = sum(v for v in x)\n",
     r"static length.*whose length is known only at run time"),
    ("def k(x, n):\n    x[0] = sum(v for v in range(10) if v > n)\n",
     r"its condition \('if'\) must be known at compile time for each element"),
    ("def k(x, n):\n    x[0] = sum(a * b for a, b in ((1, 2), (3,)))\n",
     r"cannot unpack 1 values into 2 names"),
    ("def k(x, n):\n    x[0] = max(v for v in range(3), 1)\n",
     r"Generator expression must be parenthesized"),
    ("def k(x, n):\n    x[:] = np.array([1, x])\n",
     r"np.array\(\) in kernels takes numbers, lists of numbers of one length, or "
     r"arrays of one shape; element 1 is"),
    ("def k(x, n):\n    x[:2] = np.array([[1, 2], [3]])[0]\n",
     r"element 1 is tuple.* and does not match element 0"),
    ("def k(x, n):\n    t = (1, 2)\n    x[:2] = np.array(t)\n",
     r"written in place \(np.array\(tuple\(t\)\) for a tuple t\)"),
    ("def k(x, n):\n    y = {1, 2}\n",
     r"dict and set displays are not supported"),
    ("def k(x, n):\n    y = {i for i in range(3)}\n",
     r"dict and set comprehensions are not supported"),
]


@pytest.mark.parametrize("src,msg", BAD)
def test_unsupported_forms_have_clear_errors(src, msg):
    with pytest.raises(asc.CompileError, match=msg):
        m = asc.compile("import asc\nimport numpy as np\n@asc.jit\n" + src)
        m.k(np.zeros(3), 1)


def test_list_of_numbers_indexed_at_run_time():
    m = asc.compile("""
import asc

@asc.kernel
def k(a, i):
    v = [a[0] * 2, a[1] + 1, a[2]]
    w = [j * j for j in range(4)]
    return v[i], w[i]
""")
    a = np.array([3.0, 5.0, 7.0])
    for i in (0, 1, 2, -1, -3):
        v, w = m.k(a, i)
        assert v == [a[0] * 2, a[1] + 1, a[2]][i] and w == [j * j for j in range(4)][i]
    for i in (3, -4):
        with pytest.raises(IndexError, match=f"index {i} is out of range for 'v' of 3 elements"):
            m.k(a, i)


def test_comprehension_variable_does_not_leak():
    # Python 3: the comprehension's variable is local to it
    m = asc.compile("""
import asc

@asc.kernel
def k(x):
    i = 10
    t = sum(i * 2 for i in range(3))
    x[0] = t + i
""")
    x = np.zeros(1)
    m.k(x)
    assert x[0] == sum(i * 2 for i in range(3)) + 10
