"""Arrays a kernel creates (issue 16 item 5, docs/arrays.md "Arrays a
kernel creates"): np.empty/zeros/ones/full and their _like forms,
np.arange, np.linspace, a.copy(), a.astype(), a.fill(), a new array from
an expression (c = a + b), numpy's copy when a statement reads the array
it writes through another view, per-iteration temporaries in parallel
loops, and the errors numpy raises.  Each result is compared with numpy
running the same Python function."""
import numpy as np
import pytest

import asc

TEXT = """
import numpy as np
import asc

@asc.kernel
def creators(n, m, out1, out2, out3, out4, x):
    a = np.zeros((n, m))
    b = np.ones(n, dtype=np.int32)
    c = np.full((n, m), 2.5)
    d = np.empty_like(x)
    d[:] = x * 3
    e = np.zeros_like(x, dtype=np.float32)
    f = np.ones_like(x)
    g = np.full_like(x, 7)
    out1[:, :] = a + c
    out2[:] = b * 2 + e + f[::-1]
    out3[:] = d + g
    h = np.empty((n, m), dtype=x.dtype)
    h.fill(1.5)
    out4[:, :] = h

@asc.kernel
def ranges(n, out_i, out_f, out_neg, out_lin, out_lin2, out_lin3):
    out_i[:] = np.arange(n)
    out_f[:] = np.arange(0.5, n, 0.75)[:out_f.shape[0]]
    out_neg[:] = np.arange(10, 0, -3)
    out_lin[:] = np.linspace(-1.0, 2.0, out_lin.shape[0])
    out_lin2[:] = np.linspace(0, 1, out_lin2.shape[0], endpoint=False)
    x = np.linspace(3, 4, 1)
    out_lin3[:] = x

@asc.kernel
def expr(a, b, out):
    c = a + b * 2.0
    d = np.sqrt(c) - a.mean()
    t = d.copy()
    t *= 2
    out[:] = t + c.astype(np.float32)

@asc.kernel
def rebind(a, out, n):
    t = a.copy()
    for i in range(n):
        t = t[::-1] + 1.0
        out[i, :] = t

@asc.kernel
def rows(a, out):
    for i in asc.prange(a.shape[0]):
        t = np.empty(a.shape[1])
        t[:] = a[i] * 2.0
        u = t + a[i]
        out[i] = u.sum()

@asc.kernel
def overlap(a, b, c):
    a[1:] = a[:-1] + 1
    b[::-1] += b
    c[:, :] = c.T + c

@asc.kernel
def zeros_n(n, out):
    x = np.zeros(n)
    out[0] = x.sum() + x.shape[0]

@asc.kernel
def shape_of(a, out):
    t = np.zeros(a.shape)
    t[:, :] = a
    t[0, 0] = -1.0
    out[:, :] = t
"""


@pytest.fixture(scope="module")
def m():
    return asc.compile(TEXT)


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).random(shape)


def test_creators(m):
    n, k = 4, 3
    x = rnd(n)
    outs = [np.zeros((n, k)), np.zeros(n), np.zeros(n), np.zeros((n, k))]
    m.creators(n, k, *outs, x)
    np.testing.assert_array_equal(outs[0], np.zeros((n, k)) + np.full((n, k), 2.5))
    np.testing.assert_allclose(outs[1], np.ones(n, np.int32) * 2 +
                               np.zeros_like(x, np.float32) + np.ones_like(x)[::-1])
    np.testing.assert_allclose(outs[2], x * 3 + np.full_like(x, 7))
    np.testing.assert_array_equal(outs[3], np.full((n, k), 1.5))


def test_ranges(m):
    n = 9
    out_i = np.zeros(n, np.int64)
    nf = len(np.arange(0.5, n, 0.75))
    out_f = np.zeros(nf)
    out_neg = np.zeros(len(np.arange(10, 0, -3)), np.int64)
    out_lin, out_lin2, out_lin3 = np.zeros(7), np.zeros(5), np.zeros(1)
    m.ranges(n, out_i, out_f, out_neg, out_lin, out_lin2, out_lin3)
    np.testing.assert_array_equal(out_i, np.arange(n))
    np.testing.assert_allclose(out_f, np.arange(0.5, n, 0.75), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(out_neg, np.arange(10, 0, -3))
    # numpy's linspace: start + i * step, and stop itself last
    np.testing.assert_array_equal(out_lin, np.linspace(-1.0, 2.0, 7))
    np.testing.assert_array_equal(out_lin2, np.linspace(0, 1, 5, endpoint=False))
    np.testing.assert_array_equal(out_lin3, np.linspace(3, 4, 1))


def test_new_array_from_expressions(m):
    a, b = rnd(50), rnd(50, seed=1)
    out = np.zeros(50)
    m.expr(a, b, out)
    c = a + b * 2.0
    t = (np.sqrt(c) - a.mean()) * 2
    np.testing.assert_allclose(out, t + c.astype(np.float32), rtol=1e-6)


def test_rebinding_in_a_loop_reads_the_old_array(m):
    a = rnd(6)
    out = np.zeros((5, 6))
    m.rebind(a, out, 5)
    t, ref = a.copy(), np.zeros((5, 6))
    for i in range(5):
        t = t[::-1] + 1.0
        ref[i, :] = t
    np.testing.assert_array_equal(out, ref)


def test_temporaries_in_a_parallel_loop(m):
    a = rnd(300, 17)
    out = np.zeros(300)
    m.rows(a, out)
    np.testing.assert_allclose(out, (a * 2.0 + a).sum(axis=1), rtol=1e-13)


def test_copy_on_overlap(m):
    a, b, c = np.arange(7.0), rnd(8), rnd(5, 5)
    ra, rb, rc = a.copy(), b.copy(), c.copy()
    ra[1:] = ra[:-1] + 1
    rb[::-1] += rb
    rc[:, :] = rc.T + rc
    m.overlap(a, b, c)
    np.testing.assert_array_equal(a, ra)
    np.testing.assert_array_equal(b, rb)
    np.testing.assert_array_equal(c, rc)


def test_empty_and_shape_tuples(m):
    out = np.zeros(1)
    m.zeros_n(0, out)
    assert out[0] == 0
    m.zeros_n(5, out)
    assert out[0] == 5
    a = rnd(3, 4)
    o = np.zeros((3, 4))
    m.shape_of(a, o)
    ref = a.copy()
    ref[0, 0] = -1
    np.testing.assert_array_equal(o, ref)


def test_numpy_errors(m):
    out = np.zeros(1)
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        m.zeros_n(-1, out)
    with pytest.raises(ValueError, match="array is too big"):
        m.zeros_n(1 << 61, out)
    with pytest.raises(MemoryError, match="unable to allocate"):
        m.zeros_n(1 << 58, out)      # 2 EiB: no machine has it
    with pytest.raises(ZeroDivisionError):
        asc.compile("import numpy as np\nimport asc\n@asc.kernel\n"
                    "def k(s, out):\n    out[:] = np.arange(0, 3, s)[:1]\n"
                    ).k(0, np.zeros(1, np.int64))
    with pytest.raises(ValueError, match="Number of samples, -1"):
        asc.compile("import numpy as np\nimport asc\n@asc.kernel\n"
                    "def k(n, out):\n    x = np.linspace(0, 1, n)\n"
                    "    out[0] = x.sum()\n").k(-1, np.zeros(1))


def test_kernel_keeps_working_after_an_allocation_failure(m):
    out = np.zeros(1)
    with pytest.raises(MemoryError):
        m.zeros_n(1 << 58, out)
    m.zeros_n(3, out)
    assert out[0] == 3


def test_memory_is_reused_across_iterations_and_launches(m):
    # every iteration makes two arrays; without reuse this would take
    # 2000 * 8 MB
    a = rnd(2000, 1 << 17)[:, :8]
    out = np.zeros(2000)
    m.rows(np.ascontiguousarray(a), out)
    np.testing.assert_allclose(out, (a * 3.0).sum(axis=1), rtol=1e-13)
    big = np.zeros((4, 1 << 20))
    o = np.zeros((4, 1 << 20))
    for _ in range(20):
        m.shape_of(big, o)


def test_names_that_cannot_hold_new_arrays():
    # a parameter rebound to a new array is an array variable now
    # (test_rebind.py::test_a_parameter_rebound_then_written)
    with pytest.raises(asc.CompileError, match="assigned in a parallel loop"):
        asc.compile("import numpy as np\nimport asc\n@asc.kernel\n"
                    "def k(a, out):\n    t = np.zeros(3)\n"
                    "    for i in asc.prange(4):\n        t = a * i\n"
                    "        out[i] = t.sum()\n").k(np.zeros(3), np.zeros(4))


MM = """
import numpy as np
import asc

@asc.kernel
def mm(a, b, v, out, out2, out3, out4):
    c = a @ b
    out[:, :] = c
    out2[:] = a @ v
    out3[:] = v @ b
    out4[0] = v @ v + np.dot(v, v) + np.matmul(v, v)
    d = np.dot(a, b) * 2.0 + 1.0
    out[:, :] += d

@asc.kernel
def mm_into(a, b, out):
    out[:, :] = a @ b
"""


def test_matrix_products():
    m = asc.compile(MM)
    rng = np.random.default_rng(0)
    a, b, v = rng.random((5, 7)), rng.random((7, 4)), rng.random(7)
    out, out2, out3, out4 = np.zeros((5, 4)), np.zeros(5), np.zeros(4), np.zeros(1)
    m.mm(a, b, v, out, out2, out3, out4)
    np.testing.assert_allclose(out, a @ b + (a @ b) * 2 + 1, rtol=1e-13)
    np.testing.assert_allclose(out2, a @ v, rtol=1e-13)
    np.testing.assert_allclose(out3, v @ b, rtol=1e-13)
    np.testing.assert_allclose(out4[0], 3 * (v @ v), rtol=1e-13)
    ai, bi = rng.integers(-9, 9, (3, 4)), rng.integers(-9, 9, (4, 2))
    o = np.zeros((3, 2), np.int64)
    m.mm_into(ai, bi, o)
    np.testing.assert_array_equal(o, ai @ bi)          # integers: exact
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        m.mm_into(ai, ai, np.zeros((3, 4), np.int64))
    with pytest.raises(asc.CompileError, match="take arrays of 1 or more axes, not int64"):
        asc.compile("import asc\n@asc.kernel\ndef k(a, n):\n"
                    "    a[0] = n @ n\n").k(np.zeros(2), 3)


def test_a_name_read_before_any_array_is_empty():
    m = asc.compile("import numpy as np\nimport asc\n@asc.kernel\n"
                    "def k(n, out):\n    if n > 0:\n        t = np.ones(n)\n"
                    "    out[0] = t.sum()\n    out[1] = t.shape[0]\n")
    out = np.full(2, -1.0)
    m.k(3, out)
    np.testing.assert_array_equal(out, [3, 3])
    m.k(0, out)
    np.testing.assert_array_equal(out, [0, 0])


def test_reshape_views_contiguous_arrays():
    m = asc.compile("""
import numpy as np
import asc
@asc.kernel
def r(a, out, out2, out3):
    b = a.reshape(a.shape[0], 1, a.shape[1])
    c = a.reshape(1, a.shape[0], a.shape[1])
    out[:, :, :] = b - c
    out2[:] = a.reshape(-1) * 2
    out3[:, :] = np.reshape(a, (a.shape[1], a.shape[0]))
@asc.kernel
def bad(a, out):
    out[:] = a[:, ::2].reshape(-1)
@asc.kernel
def tr(a, out):
    out[:] = a.T.reshape(-1)
@asc.kernel
def size(a, out, n):
    out[:] = a.reshape(n, -1)[0]
""")
    a = rnd(4, 3)
    out, out2, out3 = np.zeros((4, 4, 3)), np.zeros(12), np.zeros((3, 4))
    m.r(a, out, out2, out3)
    np.testing.assert_array_equal(out, a.reshape(4, 1, 3) - a.reshape(1, 4, 3))
    np.testing.assert_array_equal(out2, a.reshape(-1) * 2)
    np.testing.assert_array_equal(out3, a.reshape(3, 4))
    # numba's rule: a non-contiguous array is not reshaped (numpy copies)
    with pytest.raises(ValueError, match="contiguous arrays only"):
        m.bad(a, np.zeros(6))
    # but a transposed view is copied, as numpy's
    out = np.zeros(12)
    m.tr(a, out)
    np.testing.assert_array_equal(out, a.T.reshape(-1))
    with pytest.raises(ValueError, match="cannot reshape array of size 12"):
        m.size(a, np.zeros(3), 5)


def test_returned_arrays_reuse_their_pages():
    """An array a kernel returns is freed when numpy lets it go; the next
    call's array takes the same pages back instead of faulting fresh ones
    in (the allocator gave every block over 8 MiB back to the system at
    once: 7,800 page faults a call for 32 MB)."""
    import resource
    m = asc.compile("""
import numpy as np
import asc

@asc.kernel
def sub(x, m):
    return x - m
""")
    a = np.ones((2000, 2000))
    col = np.ones((2000, 1))
    for _ in range(3):
        m.sub(a, col)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        r = m.sub(a, col)
        assert r.shape == (2000, 2000) and r[1999, 1999] == 0.0
        del r
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    pages = a.nbytes // 4096
    assert faults < pages, f"{faults} page faults in 5 calls ({pages} pages an array)"
