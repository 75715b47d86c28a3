"""Python's rebinding and the numpy idioms around it (docs/arrays.md,
"Locals rebound to another array", "`x.shape = n`", "ufuncs with out="):
a name bound to a view and to a new array in a loop or a branch (an array
variable), a parameter rebound to a new array, `x.shape = n`, `len(x)`,
ufuncs writing into out=, each against numpy."""
import numpy as np
import pytest

import asc


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def both(kernel, *args):
    """kernel and its Python function on copies of args: the results and
    the arguments afterwards must be numpy's."""
    a1 = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    a2 = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got, want = kernel(*a1), kernel.py_func(*a2)
    for x, y in zip(a1, a2):
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y)
    return got, want


# ------------------------------------- a view and a new array in one name

@asc.kernel
def view_or_copy(a, b, c):
    if c > 0:
        x = a[::2]
    else:
        x = b.copy()
    x[0] = 99.0
    return x.sum() + x[-1]


def test_a_branch_binds_a_view_or_a_new_array():
    """`if c: x = a[::2] else: x = b.copy()` (it was "'x' names a view
    here; a name that holds a new array the kernel makes cannot also
    name a view"); a store through the view writes a, as numpy's does,
    one through the copy does not."""
    a, b = rnd(11), rnd(6, seed=1)
    for c in (1, 0):
        got, want = both(view_or_copy, a, b, c)
        assert got == want


@asc.kernel
def thomas_back(d, c):
    K = d.shape[2]
    out = np.zeros(d.shape)
    data = np.zeros((d.shape[0], d.shape[1]))
    for k in range(K - 1, K - 2, -1):
        datacol = d[:, :, k]
        data[:] = datacol
        out[:, :, k] = datacol * 2.0
    for k in range(K - 2, -1, -1):
        datacol = d[:, :, k] - c[:, :, k] * data[:, :]
        data[:] = datacol
        out[:, :, k] = datacol * 2.0
    return out


def test_a_view_in_one_loop_and_a_new_array_in_the_next():
    """NPBench vadv's back substitution: datacol is a view of a column in
    one loop and a new array in the next."""
    got, want = both(thomas_back, rnd(4, 5, 6), rnd(4, 5, 6, seed=1))
    np.testing.assert_array_equal(got, want)


@asc.kernel
def slide(a, n):
    x = a[:]
    s = 0.0
    for i in range(n):
        x = x[1:]
        s += x[0] * (i + 1)
    return s


def test_a_view_of_itself_in_a_loop():
    """x = x[1:] in a loop: each iteration views the last one's view (the
    view was fixed at the loop's entry: 4.0 for 10.0)."""
    got, want = both(slide, np.arange(10.0), 4)
    assert got == want == 1 * 1 + 2 * 2 + 3 * 3 + 4 * 4


@asc.kernel
def zigzag(a, n):
    x = a[:, :]
    for i in range(n):
        if i % 2 == 0:
            x = x[1:, ::-1] * 1.0
        else:
            x = x[1:, :]
        x[0, 0] = -1.0
    return x, a


@asc.kernel
def halve(a):
    z = a
    while z.shape[0] > 2:
        z = z[::2]
    z[0] = 100.0
    return a


@asc.kernel
def read_in_prange(a, b, c):
    if c > 0:
        x = a[::2]
    else:
        x = b * 2.0
    out = np.zeros(x.shape[0])
    for i in asc.prange(x.shape[0]):
        out[i] = x[i] + 1.0
    return out, x, x.max(), np.sum(x * x)


def test_array_variables_in_2d_while_and_prange():
    """2-D views and new arrays alternating in a loop, written through;
    a while loop viewing a parameter's view of a view, then a store that
    reaches the caller's array; an array variable read by a parallel
    loop, returned (a copy) and reduced."""
    got, want = both(zigzag, np.arange(30.0).reshape(6, 5), 4)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    a = np.arange(20.0)
    want = halve.py_func(a.copy())
    np.testing.assert_array_equal(halve(a), want)
    np.testing.assert_array_equal(a, want)  # the kernel wrote into a
    a, b = rnd(10), rnd(5, seed=1)
    for c in (1, 0):
        x = a[::2] if c > 0 else b * 2.0
        out, y, mx, ss = read_in_prange(a, b, c)
        np.testing.assert_array_equal(out, x + 1.0)
        np.testing.assert_array_equal(y, x)
        assert mx == x.max() and np.isclose(ss, np.sum(x * x), rtol=1e-14)


@asc.kernel
def shrink(Z, t):
    for i in range(4):
        Z = Z[Z > t] * 1.5
    return Z


@asc.kernel
def rebound_then_written(a):
    a = a + 1.0
    a[0] = -1.0
    return a


def test_a_parameter_rebound_then_written():
    """A parameter rebound to a new array in a loop (Z = Z[Z > t] * 1.5)
    and at the top (a = a + 1.0 then a[0] = -1.0: it was "'a' names a
    parameter's array"); the caller's array is unchanged."""
    got, want = both(shrink, np.linspace(0, 1, 40), 0.3)
    np.testing.assert_array_equal(got, want)
    got, want = both(rebound_then_written, rnd(5))
    np.testing.assert_array_equal(got, want)


@asc.kernel
def pairs(a, b, t):
    X = a.copy()
    Y = b.copy()
    for i in range(3):
        I = X > t
        X, Y = X[I] * 2.0, Y[I]
    return Y


def test_a_tuple_of_arrays_rebinds_both_names():
    """X, Y = X[I] * 2.0, Y[I]: both values first, then the names (it was
    'expected a scalar value here')."""
    got, want = both(pairs, np.linspace(0, 1, 30), np.arange(30.0), 0.6)
    np.testing.assert_array_equal(got, want)


def test_another_rank_or_dtype_in_a_loop_is_an_error():
    """Versions that cannot merge at a loop head or a join: the error
    names the variable, both types and both lines."""
    src = ("import numpy as np\nimport asc\n@asc.kernel\ndef k(a, n):\n"
           "    x = a[:, 0]\n    if n > 1:\n"
           "        x = np.zeros(3, dtype=np.int32)\n    return x\n")
    with pytest.raises(asc.CompileError) as e:
        asc.compile(src).k(np.ones((3, 2)), 2)
    msg = str(e.value)
    assert "<string>:7:" in msg and "<string>:5:" in msg
    assert "Tensor[int32, 1]" in msg and "'x'" in msg
    assert "Tensor[float64, 1, strided]" in msg


# ------------------------------------------------------- x.shape = n

@asc.kernel
def set_shapes(a, b, n):
    X = a * 2.0
    Y = b + 1.0
    X.shape = Y.shape = n
    Z = X + Y
    Z.shape = (2, n // 2)
    return Z, len(Z), len(X)


def test_shape_assignment_and_len():
    """X.shape = Y.shape = n (a chain), Z.shape = (2, m), len() (it was
    "cannot assign to 'shape' of Tensor[float64, 2]")."""
    got, want = both(set_shapes, rnd(2, 3), rnd(3, 2, seed=1), 6)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[0].shape == want[0].shape == (2, 3)
    assert got[1:] == want[1:] == (2, 6)


@asc.kernel
def set_shape_t(a, n):
    X = a.T
    X.shape = n
    return X


@asc.kernel
def set_shape_size(a, n):
    X = a * 1.0
    X.shape = n
    return X


def test_shape_assignment_errors():
    """numpy's messages: a view that cannot take the shape in place
    (numpy's AttributeError; ValueError in a kernel, whose exceptions
    have no AttributeError), a size that differs; a parameter's shape
    is the caller's: a compile error."""
    with pytest.raises(ValueError, match="Incompatible shape for in-place "
                       r"modification. Use `.reshape\(\)` to make a copy "
                       "with the desired shape."):
        set_shape_t(rnd(2, 3), 6)
    with pytest.raises(AttributeError, match="Incompatible shape"):
        set_shape_t.py_func(rnd(2, 3), 6)
    with pytest.raises(ValueError, match="cannot reshape array of size 6"):
        set_shape_size(rnd(2, 3), 4)
    src = ("import asc\n@asc.kernel\ndef k(a, n):\n    a.shape = n\n"
           "    return a.sum()\n")
    with pytest.raises(asc.CompileError, match="<string>:4:.*cannot set the "
                       "shape of parameter 'a'"):
        asc.compile(src).k(np.ones((2, 3)), 6)


@asc.kernel
def until_empty(a, t):
    Z = a.copy()
    n = 0
    for i in range(100):
        if not len(Z):
            break
        Z = Z[Z > t] * 1.1
        n += 1
    return n


def test_len_of_a_shrinking_array():
    got, want = both(until_empty, np.linspace(0, 1, 50), 0.2)
    assert got == want > 1


# ------------------------------------- several index arrays in a subscript

@asc.kernel
def pick(a, ii, jj):
    return a[ii, jj], a[ii, jj] * 2.0 + 1.0, a[ii[:, None], jj[None, :]]


@asc.kernel
def pick3(a, ii, jj):
    return a[ii, jj] + a[ii, -1 - jj].sum()


def test_several_index_arrays_read():
    """a[ii, jj] (numpy's a[ii[p], jj[p]]), in an expression (read in
    place), broadcast index arrays (ii[:, None], jj[None, :]), negative
    indices, and two index arrays into a 3-D array (its last axis kept);
    it was 'kernels take an index array or a boolean mask only as the
    whole index'."""
    a = rnd(5, 7)
    ii = np.array([0, 4, -1, 2, 2])
    jj = np.array([6, 0, 3, -7, 1])
    got, want = both(pick, a, ii, jj)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    got, want = both(pick3, rnd(5, 7, 3), ii, jj)
    np.testing.assert_array_equal(got, want)


@asc.kernel
def scatter2(a, ii, jj, v):
    A = a.copy()
    A[ii, jj] = v
    B = a.copy()
    B[ii, jj] = 7.0
    C = a.copy()
    C[ii, jj] += 1.0
    return A, B, C


def test_several_index_arrays_write():
    """A[ii, jj] = v (v an array or a number), += (a repeated index counts
    once, as numpy's)."""
    a = rnd(4, 6)
    ii = np.array([0, 3, 3, -2])
    jj = np.array([5, 0, 0, 2])
    got, want = both(scatter2, a, ii, jj, rnd(4, seed=1))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@asc.kernel
def scatter_bad(a, ii, jj):
    a[ii, jj] = 5.0


@asc.kernel
def gather_bad(a, ii, jj):
    return a[ii, jj]


def test_several_index_arrays_errors():
    """numpy's IndexError, checked one index array after the other before
    anything is written (the first out-of-range index of ii is reported
    although jj's comes first in order), and for index arrays that do not
    broadcast."""
    a = np.zeros((3, 4))
    for ii, jj in (([0, 9], [9, 0]), ([0, 1], [9, 0]), ([0, -4], [0, 0])):
        ii, jj = np.array(ii), np.array(jj)
        with pytest.raises(IndexError) as want:
            gather_bad.py_func(a, ii, jj)
        with pytest.raises(IndexError) as got:
            gather_bad(a, ii, jj)
        assert str(got.value).endswith("raised IndexError: " + str(want.value))
        b = a.copy()
        with pytest.raises(IndexError) as got:
            scatter_bad(b, ii, jj)
        assert str(got.value).endswith("raised IndexError: " + str(want.value))
        assert not b.any()  # nothing written
    ii, jj = np.array([0, 1]), np.array([0, 1, 2])
    with pytest.raises(IndexError) as want:
        gather_bad.py_func(a, ii, jj)
    with pytest.raises(IndexError) as got:
        gather_bad(a, ii, jj)
    # (numpy's message ends in a space, which the kernel's error trims)
    assert str(got.value).endswith("raised IndexError: " +
                                   str(want.value).rstrip())


# ----------------------------------------- NPBench mandelbrot2's idioms

@asc.kernel
def escape_counts(x0, x1, y0, y1, nx, ny, steps):
    rows = np.arange(nx)[:, None] + np.zeros((1, ny), dtype=np.int64)
    cols = np.zeros((nx, 1), dtype=np.int64) + np.arange(ny)[None, :]
    pts = (np.linspace(x0, x1, nx, dtype=np.float64)[rows] +
           1j * np.linspace(y0, y1, ny)[cols])
    count = np.zeros(pts.shape, dtype=np.int64)
    last = np.zeros(pts.shape, dtype=np.complex128)
    rows.shape = cols.shape = pts.shape = nx * ny
    z = np.zeros(nx * ny, dtype=np.complex128)
    for step in range(steps):
        if not len(z):
            break
        np.multiply(z, z, out=z)
        np.add(z, pts, z)
        gone = np.abs(z) > 2.0
        count[rows[gone], cols[gone]] = step + 1
        last[rows[gone], cols[gone]] = z[gone]
        np.logical_not(gone, gone)
        z = z[gone]
        rows, cols = rows[gone], cols[gone]
        pts = pts[gone]
    return count.T, last.T


def test_mandelbrot_with_rebinding_shapes_and_index_arrays():
    """The idioms of NPBench mandelbrot2 in a kernel of ours, its grid
    from broadcast aranges: rows.shape = cols.shape = pts.shape = n,
    len(z), ufuncs into out, count[rows[gone], cols[gone]] = step + 1,
    last[...] = z[gone], and z, rows, cols, pts shrinking in the loop
    (the last iterations with nothing left: break)."""
    for args in ((-2.0, 0.5, -1.25, 1.25, 31, 27, 40),
                 (-0.5, 0.5, -0.5, 0.5, 8, 9, 200)):
        got, want = both(escape_counts, *args)
        np.testing.assert_array_equal(got[0], want[0])
        # (the last bits of complex products differ; iterating amplifies)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-8, atol=0)


# ------------------------------------------------------- ufuncs with out=

@asc.kernel
def into_out(a, b, m):
    Z = a.copy()
    np.multiply(Z, Z, Z)
    np.add(Z, b, out=Z)
    np.negative(Z, out=Z)
    np.subtract(Z[::-1], b, Z)  # out overlaps an input reversed
    I = m.copy()
    np.logical_not(I, I)
    F = np.zeros(a.shape, dtype=np.float32)
    np.add(Z, b, out=F)         # float64 -> float32: same kind
    K = np.zeros(a.shape, dtype=np.int64)
    np.add(K, I, K)             # bool -> int64
    return Z, I, F, K


def test_ufuncs_write_into_out():
    """np.multiply(Z, Z, Z), np.add(Z, b, out=Z), np.negative(Z, out=Z),
    np.logical_not(I, I): numpy's results, an out that overlaps an input
    in another order included, and same-kind casts into out."""
    a, b = rnd(9), rnd(9, seed=1)
    got, want = both(into_out, a, b, a > 0)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_ufunc_out_of_another_kind_is_numpys_error():
    """A float result into an int out, or an int one into a bool out:
    numpy's UFuncTypeError message, at the line (a compile error)."""
    for dt, ufunc, operand in (("np.int64", "add", "a"),
                               ("np.bool_", "multiply", "i"),
                               ("np.float64", "multiply", "a * 1j")):
        src = ("import numpy as np\nimport asc\n@asc.kernel\ndef k(a):\n"
               "    i = np.ones(a.shape, dtype=np.int32)\n"
               f"    z = np.zeros(a.shape, dtype={dt})\n"
               f"    np.{ufunc}(z, {operand}, out=z)\n    return z\n")
        ns = {}
        exec(compile(src.replace("@asc.kernel\n", ""), "<py>", "exec"), ns)
        with pytest.raises(TypeError) as want:
            ns["k"](np.ones(3))
        with pytest.raises(asc.CompileError) as got:
            asc.compile(src).k(np.ones(3))
        assert "<string>:7:" in str(got.value)
        assert str(want.value) in str(got.value)


# ------------------------------- a parameter rebound to a new array, complex

@asc.kernel
def orbit(w, shift, n):
    k = 0
    while k < n:
        w = w * w + shift
        k += 1
    return np.abs(w) + np.abs(w * shift)


def test_a_complex_number_for_a_parameter_read_as_a_number():
    """w = w * w + shift rebinds a parameter to a new array, and shift is
    a Python complex (the corpus's nex_julia; it was refused at the
    call: 'a complex scalar is passed as a 0-d array'); the kernel takes
    it as a 0-d complex128 array."""
    g = np.linspace(-1.2, 1.2, 7)
    w0 = g[:, None] + 1j * g[None, :]
    for c in (-.4 + .6j, np.complex128(0.3 - 0.5j)):
        got, want = both(orbit, w0, c, 5)
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=0)


# ---------------------------------------------------------------- closures

@asc.kernel
def closure(a, n):
    m = n * 2
    w = a * 3.0

    def f(x):
        return x * m

    def g(i):
        return w[i] + f(a[i])

    r = f(a)
    s = 0.0
    for i in range(a.shape[0]):
        s += g(i)
    m = 5
    return r + f(a[1]) + s


def test_closures_read_the_locals_around_them():
    """Nested defs that read locals of the function around them (read
    only; a closure calling another): each call reads the value the
    local holds then, as Python's closures do (m = 5 before the last
    call of f)."""
    got, want = both(closure, np.arange(4.0), 3)
    np.testing.assert_array_equal(got, want)


# ------------------------------------ a name bound to another name's array

@asc.kernel
def converge(A, tol):
    x = np.ones(A.shape[0]) / A.shape[0]
    steps = 0
    for i in range(200):
        old = x
        x = A @ x
        steps += 1
        if np.max(np.abs(old - x)) < tol:
            break
    return x, steps


@asc.kernel
def keep_previous(a, n):
    prev = np.zeros(a.shape[0])
    cur = a.copy()
    for i in range(n):
        prev = cur
        cur = cur * 0.5 + 1.0
    return prev + cur


def test_a_name_keeps_the_array_another_name_held():
    """old = x, then x = A @ x in a loop: numpy's old keeps the array x
    held (it read x's register, so the loop stopped after one step)."""
    A = np.array([[0.5, 0.25], [0.5, 0.75]])
    got, steps = converge(A, 1e-10)
    want, wsteps = converge.py_func(A, 1e-10)
    assert steps == wsteps and steps > 5
    np.testing.assert_allclose(got, want, rtol=1e-12)
    a = np.arange(5.0)
    for n in (0, 1, 4):
        np.testing.assert_array_equal(keep_previous(a, n),
                                      keep_previous.py_func(a, n))


def test_an_alias_of_a_rebound_array_that_is_written_is_an_error():
    @asc.kernel
    def k(u, n):
        v = u * 0.0
        for i in range(n):
            v = u * 2.0
            w = v
            w[0] = 1.0
        return v
    with pytest.raises(asc.CompileError, match=r"'w = v' would keep the array 'v' "
                       r"holds.*bind a copy \(w = v.copy\(\)\)"):
        k(np.ones(3), 2)


def test_an_alias_of_a_name_bound_once_still_shares_the_array():
    @asc.kernel
    def k(a):
        b = a
        b[0] = 7.0
        return a[0]
    a = np.zeros(3)
    assert k(a) == 7.0 and a[0] == 7.0
