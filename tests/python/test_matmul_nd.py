"""`@` and np.matmul of arrays of more than two axes (docs/arrays.md "N-D
matrix products"): stacks of matrices whose leading axes broadcast, as
numpy's matmul.  Every product is compared with numpy's, on the BLAS and
with ASC_BLAS=0 (the loops behind each call), in float32, float64,
int64 and complex128, with transposed, strided and reversed views, the
doitgen form (a reshape of a C-contiguous array times a matrix: one gemm
over all the rows), empty stacks, and numpy's errors."""
import numpy as np
import pytest

import asc
from envvars import ascc_ir
from test_matmul_blas import mode  # noqa: F401 (the fixture: on the BLAS, ASC_BLAS=0)

TEXT = """
import numpy as np
import asc

@asc.kernel
def mm(a, b):
    return a @ b

@asc.kernel
def mm_call(a, b):
    return np.matmul(a, b)

@asc.kernel
def views(a, b):
    return a.transpose(0, 2, 1) @ b[:, ::2, ::-1]

@asc.kernel
def strided_stack(a, b):
    return a[::2] @ b

@asc.kernel
def doitgen(NR, NQ, NP, A, C4):
    A[:] = np.reshape(np.reshape(A, (NR, NQ, 1, NP)) @ C4, (NR, NQ, NP))

@asc.kernel
def in_expr(a, b, c):
    return 2.0 * (a @ b) + c
"""

# (left shape, right shape): stacks against matrices, vectors and
# stacks, size-1 leading axes broadcasting, 1-D operands, empty stacks
PAIRS = [((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((1, 3, 4), (2, 4, 5)),
         ((2, 3, 4), (1, 4, 5)), ((4,), (2, 4, 5)), ((2, 3, 4), (4,)),
         ((3, 4), (2, 1, 4, 5)), ((2, 3, 4), (3, 2, 4, 5)),
         ((2, 1, 3, 4), (1, 5, 4, 6)), ((0, 3, 4), (4, 5)),
         ((2, 0, 4), (2, 4, 5)), ((2, 3, 0), (2, 0, 5)),
         ((3, 5, 1, 7), (7, 6)), ((4, 33, 17), (17, 40))]

DTYPES = [np.float32, np.float64, np.int64, np.complex128]


@pytest.fixture(scope="module")
def mod():
    return asc.compile(TEXT)


def operand(rng, shape, dt):
    if np.dtype(dt).kind == "i":
        return rng.integers(-9, 10, size=shape).astype(dt)
    x = rng.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def check(got, want, k):
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-5 * (k + 1))
    elif want.dtype.kind == "i":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * (k + 1))


@pytest.mark.parametrize("dt", DTYPES)
def test_stacks_broadcast_as_numpy(mod, mode, dt):
    rng = np.random.default_rng(1)
    for sa, sb in PAIRS:
        a, b = operand(rng, sa, dt), operand(rng, sb, dt)
        check(mod.mm(a, b), a @ b, sa[-1])
        check(mod.mm_call(a, b), np.matmul(a, b), sa[-1])


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_views(mod, mode, dt):
    rng = np.random.default_rng(2)
    a = operand(rng, (3, 6, 5), dt)
    b = operand(rng, (3, 12, 14), dt)
    check(mod.views(a, b), a.transpose(0, 2, 1) @ b[:, ::2, ::-1], 6)
    a = operand(rng, (6, 5, 4), dt)
    b = operand(rng, (4, 7), dt)
    check(mod.strided_stack(a, b), a[::2] @ b, 4)
    # a Fortran-order stack: its rows are not evenly spaced
    f = np.asfortranarray(operand(rng, (3, 5, 4), dt))
    check(mod.mm(f, b), f @ b, 4)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_doitgen_form(mod, mode, dt):
    rng = np.random.default_rng(3)
    NR, NQ, NP = 5, 7, 12
    A = operand(rng, (NR, NQ, NP), dt)
    C4 = operand(rng, (NP, NP), dt)
    want = np.reshape(np.reshape(A, (NR, NQ, 1, NP)) @ C4, (NR, NQ, NP))
    mod.doitgen(NR, NQ, NP, A, C4)
    check(A, want, NP)


def test_inside_an_expression(mod, mode):
    rng = np.random.default_rng(4)
    a, b = operand(rng, (2, 3, 4), np.float64), operand(rng, (4, 5), np.float64)
    c = operand(rng, (3, 5), np.float64)
    check(mod.in_expr(a, b, c), 2.0 * (a @ b) + c, 4)


def test_errors_are_numpys(mod):
    with pytest.raises(ValueError) as e:
        mod.mm(np.ones((2, 3, 4)), np.ones((2, 5, 5)))
    assert "matmul: Input operand 1 has a mismatch in its core dimension 0" \
        in str(e.value) and "(size 5 is different from 4)" in str(e.value)
    with pytest.raises(ValueError) as e:
        mod.mm(np.ones((2, 3, 4)), np.ones((3, 4, 5)))
    assert "operands could not be broadcast together" in str(e.value)
    assert "size 2 against size 3" in str(e.value)
    with pytest.raises(ValueError):
        np.ones((2, 3, 4)) @ np.ones((3, 4, 5))  # numpy raises it too


def test_dot_of_a_stack_on_the_right_is_a_compile_error():
    m = asc.compile("""
import numpy as np
import asc

@asc.kernel
def k(a, b):
    return np.dot(a, b)
""")
    with pytest.raises(asc.CompileError) as e:
        m.k(np.ones((2, 3)), np.ones((2, 3, 4)))
    assert "np.dot of a right operand of more than 2 axes" in str(e.value)
    # np.dot of a stack times a matrix is matmul's product
    a, b = np.ones((2, 3, 4)), np.arange(20.0).reshape(4, 5)
    np.testing.assert_allclose(m.k(a, b), np.dot(a, b))


def test_collapsed_stack_is_one_gemm(tmp_path):
    f = tmp_path / "k.py"
    f.write_text(TEXT)
    ir = ascc_ir(f, "doitgen(i64, i64, i64, f64[:, :, :], f64[:, :])")
    assert "one gemm call over the rows of its left operand's stack" in ir, ir
    # the call over all rows first, one call per matrix behind its status
    assert ir.count("= gemm ") == 2, ir
