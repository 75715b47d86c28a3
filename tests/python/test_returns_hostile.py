"""Kernels that return values, and matrix products, under unusual inputs
(docs/arrays.md, "Returning values" and "`@`, `np.dot`, `np.matmul`").

Every dtype, empty, 3-D and transposed results, returns inside
try/except/finally, `asc.critical()`, nested loops and after a rebinding,
aliases returned twice, mixed tuples, process memory over many calls, an
ahead-of-time module; and products of hostile shapes, overlapping
operands and outputs, on the BLAS and with ASC_BLAS=0.  Every value is
compared with numpy or Python.
"""
import gc
import os
import signal
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

import asc

ROOT = Path(__file__).resolve().parents[2]

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32,
          np.uint32, np.int64, np.uint64, np.float16, np.float32, np.float64]

MADE = asc.compile("""
import asc
import numpy as np

@asc.kernel
def copy_made(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i]
    return out

@asc.kernel
def item(a):
    return a[1]
""")


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype_comes_back_as_itself(dt):
    a = (np.arange(7) % 3).astype(dt)
    r = MADE.copy_made(a)
    assert r.dtype == a.dtype and r.shape == a.shape
    np.testing.assert_array_equal(r, a)
    x = MADE.item(a)
    assert type(x) is np.dtype(dt).type and x == a[1]


def test_extreme_numbers():
    assert MADE.item(np.array([0, 2**64 - 1], dtype=np.uint64)) == \
        np.uint64(2**64 - 1)
    assert MADE.item(np.array([0, -2**63], dtype=np.int64)) == -2**63
    assert np.isnan(MADE.item(np.array([0.0, np.nan])))
    assert MADE.item(np.array([0.0, -np.inf], dtype=np.float32)) == -np.inf


SHAPES = asc.compile("""
import asc
import numpy as np

@asc.kernel
def empty(a):
    out = np.zeros(a.shape[0] - a.shape[0])
    return out

@asc.kernel
def twice(a):
    return a * 2.0

@asc.kernel
def three(a):
    out = np.zeros((2, 3, 4))
    for i in range(2):
        for j in range(3):
            for k in range(4):
                out[i, j, k] = a[0] + i * 100 + j * 10 + k
    return out

@asc.kernel
def made_view(a):
    t = a * 2.0
    return t[::-2]

@asc.kernel
def made_transposed(a):
    t = a * 2.0
    return t.T
""")


def test_empty_3d_views_and_transposes():
    r = SHAPES.empty(np.ones(3))
    assert r.shape == (0,) and r.dtype == np.float64
    assert SHAPES.twice(np.ones(0)).shape == (0,)
    assert SHAPES.twice(np.ones((0, 5))).shape == (0, 5)
    e = (1.0 + np.arange(2)[:, None, None] * 100
         + np.arange(3)[None, :, None] * 10 + np.arange(4))
    np.testing.assert_array_equal(SHAPES.three(np.array([1.0])), e)
    a = np.arange(9.0)
    np.testing.assert_array_equal(SHAPES.made_view(a), (a * 2)[::-2])
    b = np.arange(12.0).reshape(3, 4)
    r = SHAPES.made_transposed(b)
    np.testing.assert_array_equal(r, (b * 2).T)
    assert r.flags.c_contiguous
    c = np.arange(24.0).reshape(2, 3, 4)
    for v in (c, c[:, ::-1, 1::2], c.transpose(2, 0, 1)):
        r = SHAPES.twice(v)
        np.testing.assert_array_equal(r, v * 2)
        assert r.flags.c_contiguous and not np.shares_memory(r, c)


FLOW = asc.compile("""
import asc
import numpy as np

@asc.kernel
def retry(a, z):
    t = a + 1.0
    try:
        return t, 1 // z
    except ZeroDivisionError:
        return t, -1

@asc.kernel
def finally_raises(a, z):
    t = a + 1.0
    try:
        try:
            return t
        finally:
            q = 1 // z
            t[0] = q + 10.0
    except ZeroDivisionError:
        t[1] = -5.0
        return t

@asc.kernel
def finally_writes(a):
    t = a + 1.0
    try:
        return t
    finally:
        t[0] = 99.0

@asc.kernel
def in_critical(a):
    with asc.critical():
        t = a * 3.0
        return t

@asc.kernel
def nested(a):
    i = 0
    while i < a.shape[0]:
        if a[i] > 0:
            if a[i] > 10:
                t = a * 2.0
                return t, i
        i += 1
    u = a * 0.0
    return u, -1

@asc.kernel
def rebound(a):
    t = a * 1.0
    for k in range(3):
        t = a * k
        if k == 1:
            return t
    return t

@asc.kernel
def aliases(a):
    t = a + 1.0
    u = t
    u[0] = 42.0
    return t, u, t

@asc.kernel
def mixed(a):
    t = a * 2.0
    return 1, t, 2.5, a.sum(), t[1:]
""")


def test_a_return_retried_by_except_hands_the_array_over_once():
    """The first return's second value raises; the `except` returns the
    same array again.  Every value of a tuple is computed before any is
    handed over, so the array is handed over once, by the second return."""
    a = np.arange(3.0)
    t, q = FLOW.retry(a, 1)
    assert q == 1
    np.testing.assert_array_equal(t, a + 1)
    for _ in range(20):
        t, q = FLOW.retry(a, 0)
        assert q == -1
        np.testing.assert_array_equal(t, a + 1)


def test_a_return_whose_finally_raises_into_an_except_that_returns():
    a = np.arange(3.0)
    # as Python: the finally raises before writing t[0]; the except returns
    np.testing.assert_array_equal(FLOW.finally_raises(a, 0), [1.0, -5.0, 3.0])
    np.testing.assert_array_equal(FLOW.finally_raises(a, 1), [11.0, 2.0, 3.0])
    np.testing.assert_array_equal(FLOW.finally_writes(a), [99.0, 2.0, 3.0])


def test_returns_from_critical_sections_loops_and_rebound_names():
    a = np.array([1.0, 20.0, 3.0])
    for _ in range(3):  # the critical section is left: no deadlock
        np.testing.assert_array_equal(FLOW.in_critical(a), a * 3)
    t, i = FLOW.nested(a)
    assert i == 1
    np.testing.assert_array_equal(t, a * 2)
    t, i = FLOW.nested(np.array([1.0, 2.0]))
    assert i == -1
    np.testing.assert_array_equal(t, [0.0, 0.0])
    np.testing.assert_array_equal(FLOW.rebound(a), a)


def test_aliases_and_mixed_tuples():
    a = np.array([1.0, 20.0, 3.0])
    t, u, v = FLOW.aliases(a)
    e = a + 1.0
    e[0] = 42.0
    for x in (t, u, v):
        np.testing.assert_array_equal(x, e)
    assert not np.shares_memory(t, u) and not np.shares_memory(t, v)
    assert not np.shares_memory(u, v)
    r = FLOW.mixed(a)
    assert len(r) == 5
    assert r[0] == 1 and type(r[0]) is np.int64
    assert r[2] == 2.5 and r[3] == a.sum()
    np.testing.assert_array_equal(r[1], a * 2)
    np.testing.assert_array_equal(r[4], (a * 2)[1:])
    assert not np.shares_memory(r[1], r[4])


def _rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1])
    return 0


BIG = asc.compile("""
import asc
import numpy as np

@asc.kernel
def big(a, z):
    out = np.empty_like(a)
    for i in asc.prange(a.shape[0]):
        out[i] = a[i] * 2.0
    return out, 1 // z
""")


@pytest.mark.skipif(not os.path.exists("/proc/self/status"),
                    reason="needs /proc")
def test_memory_does_not_grow_over_many_megabyte_results():
    x = np.ones(1 << 17)  # 1 MiB
    for _ in range(100):
        BIG.big(x, 1)
    gc.collect()
    before = _rss_kb()
    for k in range(2000):
        r, q = BIG.big(x, 1)
        assert r[k % r.shape[0]] == 2.0 and q == 1
        if k % 4 == 0:  # raising: the kept array is freed
            with pytest.raises(ZeroDivisionError):
                BIG.big(x, 0)
    del r
    gc.collect()
    grown = _rss_kb() - before
    assert grown < 64 * 1024, f"VmRSS grew by {grown} kB"


def test_an_ahead_of_time_module_returns(tmp_path):
    ascc = Path(os.environ.get("ASC_BUILD_DIR", ROOT / "build")) / "ascc"
    if not ascc.exists():
        pytest.skip("no ascc built")
    src = tmp_path / "rk.py"
    src.write_text(
        "import asc\nimport numpy as np\n\n"
        "# asc: signature pairk(f64[:])\n"
        "@asc.kernel\n"
        "def pairk(a):\n"
        "    out = a * 2.0\n"
        "    return out, a.sum()\n")
    so = tmp_path / "rk.so"
    p = subprocess.run([str(ascc), "--emit=so", "-o", str(so), str(src)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    m = asc.load_module(str(so))
    a = np.arange(5.0)
    for _ in range(3):
        r, s = m.pairk(a)
        np.testing.assert_array_equal(r, a * 2)
        assert s == 10.0 and type(s) is np.float64
    with pytest.raises(TypeError, match="returns a value"):
        m.pairk[2](a)



SLOW = asc.compile("""
import asc
import numpy as np

@asc.kernel
def slow(a, n):
    t = a * 2.0
    s = 0.0
    for i in range(n):
        s += a[i % a.shape[0]] * 1e-9
    return t, s
""")


@pytest.mark.skipif(not hasattr(signal, "SIGINT") or os.name != "posix",
                    reason="needs SIGINT")
@pytest.mark.serial   # SIGINT to this process (conftest.py)
def test_ctrl_c_during_a_returning_kernel():
    """Ctrl-C stops the launch: KeyboardInterrupt, nothing returned, and
    the next call returns its values."""
    a = np.ones(1000)
    for _ in range(2):
        timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                SLOW.slow(a, 10**10)
        finally:
            timer.join()
    t, s = SLOW.slow(a, 1000)
    np.testing.assert_array_equal(t, a * 2)
    assert s == pytest.approx(1e-6)


MM = asc.compile("""
import asc
import numpy as np

@asc.kernel
def mm(a, b):
    return a @ b

@asc.kernel
def dot(a, b):
    return np.dot(a, b)

@asc.kernel
def mixed_views(a, b):
    return a.T @ b[::-1, ::2]

@asc.kernel
def powers(a, n):
    r = a * 1.0
    for k in range(n):
        r = r @ a
    return r

@asc.kernel
def overwrite(a, b):
    a[:, :] = a @ b

@asc.kernel
def shifted(a):
    a[1:, :] = a[:-1, :] @ a[1:, :]

@asc.kernel
def rows(a, b, out):
    for i in asc.prange(a.shape[0]):
        out[i] = (a[i] @ b).sum()
""")


@pytest.fixture(params=["blas", "loops"])
def blas_mode(request, monkeypatch):
    if request.param == "loops":
        monkeypatch.setenv("ASC_BLAS", "0")  # read at each product
    else:
        monkeypatch.delenv("ASC_BLAS", raising=False)
    return request.param


def _tol(dt):
    return (dict(rtol=2e-4, atol=2e-4) if dt == np.float32
            else dict(rtol=1e-10, atol=1e-10))


@pytest.mark.parametrize("dt", [np.float32, np.float64],
                         ids=["f32", "f64"])
@pytest.mark.parametrize("shape", [(0, 3, 4), (3, 0, 4), (3, 4, 0),
                                   (1, 7, 1), (1, 1, 9), (9, 1, 1),
                                   (2, 50000, 3), (33, 17, 65)])
def test_hostile_product_shapes(blas_mode, dt, shape):
    m, k, n = shape
    rng = np.random.default_rng(m * 1000 + k + n)
    a = rng.standard_normal((m, k)).astype(dt)
    b = rng.standard_normal((k, n)).astype(dt)
    r = MM.mm(a, b)
    e = a @ b
    assert r.shape == e.shape and r.dtype == e.dtype
    np.testing.assert_allclose(r, e, **_tol(dt))


@pytest.mark.parametrize("dt", [np.float32, np.float64],
                         ids=["f32", "f64"])
def test_products_of_views_overlaps_and_vectors(blas_mode, dt):
    rng = np.random.default_rng(7)
    tol = _tol(dt)
    a = rng.standard_normal((6, 5)).astype(dt)
    b = rng.standard_normal((6, 7)).astype(dt)
    np.testing.assert_allclose(MM.mixed_views(a, b), a.T @ b[::-1, ::2],
                               **tol)
    s = rng.standard_normal((5, 5)).astype(dt)
    np.testing.assert_allclose(MM.powers(s, 3), s @ s @ s @ s, **tol)
    # the output is an operand: numpy computes the product first
    x = rng.standard_normal((6, 6)).astype(dt)
    y = rng.standard_normal((6, 6)).astype(dt)
    e = x @ y
    MM.overwrite(x, y)
    np.testing.assert_allclose(x, e, **tol)
    z = rng.standard_normal((5, 4)).astype(dt)
    e = z.copy()
    e[1:, :] = z[:-1, :] @ z[1:, :]
    MM.shifted(z)
    np.testing.assert_allclose(z, e, **tol)
    # vectors, negative strides, empty vectors
    v = rng.standard_normal(7).astype(dt)
    w = rng.standard_normal(7).astype(dt)
    r = MM.dot(v, w)
    assert np.ndim(r) == 0
    np.testing.assert_allclose(r, v @ w, **tol)
    A = rng.standard_normal((7, 3)).astype(dt)
    np.testing.assert_allclose(MM.dot(v, A), v @ A, **tol)
    np.testing.assert_allclose(MM.dot(A.T[::-1], v[::-1]),
                               A.T[::-1] @ v[::-1], **tol)
    zv = np.zeros(0, dt)
    assert MM.dot(zv, zv) == 0
    with pytest.raises(ValueError, match="size 5 is different from 4"):
        MM.mm(np.ones((3, 4), dt), np.ones((5, 2), dt))


@pytest.mark.parametrize("blocks", [1, 4, 16])
def test_products_in_parallel_loops_on_many_blocks(blas_mode, blocks):
    rng = np.random.default_rng(blocks)
    a = rng.standard_normal((64, 9))
    b = rng.standard_normal((9, 4))
    out = np.zeros(64)
    MM.rows[blocks](a, b, out)
    asc.synchronize()
    np.testing.assert_allclose(out, (a @ b).sum(1), rtol=1e-10, atol=1e-10)


MM2 = asc.compile("""
import asc
import numpy as np

@asc.kernel
def strided_out(a, b, out):
    out[::2, ::-1] = a @ b

@asc.kernel
def transposed_product(a, b):
    return (a @ b).T

@asc.kernel
def per_block(a, b, out):
    i = asc.get_block_idx()
    out[i] = a[i] @ b[i]

@asc.kernel
def chain(a, b):
    return a @ b @ a.T + 1.0
""")


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int64,
                                np.float16], ids=lambda d: np.dtype(d).name)
def test_products_into_strided_outputs_returned_and_on_16_blocks(blas_mode,
                                                                 dt):
    rng = np.random.default_rng(3)
    loose = dt == np.float16
    tol = (dict(rtol=5e-2, atol=5e-1) if loose
           else dict(rtol=2e-4, atol=2e-4))
    a = (rng.standard_normal((5, 7)) * 3).astype(dt)
    b = (rng.standard_normal((7, 4)) * 3).astype(dt)
    out = np.zeros((10, 4), dt)
    MM2.strided_out(a, b, out)
    e = np.zeros((10, 4), dt)
    e[::2, ::-1] = a @ b
    np.testing.assert_allclose(out.astype(float), e.astype(float), **tol)
    r = MM2.transposed_product(a, b)
    assert r.dtype == (a @ b).dtype and r.shape == (4, 5)
    np.testing.assert_allclose(r.astype(float), (a @ b).T.astype(float),
                               **tol)
    A = rng.standard_normal((16, 64, 32)).astype(dt)
    B = rng.standard_normal((16, 32, 48)).astype(dt)
    O = np.zeros((16, 64, 48), dt)
    MM2.per_block[16](A, B, O)
    asc.synchronize()
    np.testing.assert_allclose(O.astype(float),
                               np.matmul(A, B).astype(float), **tol)
    s = rng.standard_normal((6, 6)).astype(dt)
    t = rng.standard_normal((6, 6)).astype(dt)
    np.testing.assert_allclose(np.asarray(MM2.chain(s, t), float),
                               (s @ t @ s.T + 1.0).astype(float), **tol)
