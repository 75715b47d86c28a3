"""The vmchunk pass (docs/optimizer.md): vector math calls of a loop that
raises (math.exp's OverflowError check) or carries a float sum run ahead,
a chunk at a time, in a loop that vectorises.  Each result must keep its
bits (compared with ASC_VMCHUNK=0, which leaves the pass out), and an
error must be raised at the same element with the same elements stored
before it, wherever it falls in a chunk."""
import math

import numpy as np
import pytest
from envvars import ascc_ir, compile_on_off, env

asc = pytest.importorskip("asc")

SRC = '''
import asc
import math


@asc.kernel
def softmax(x, out):
    rows, cols = x.shape
    for r in asc.prange(rows):
        m = x[r, 0]
        for j in range(1, cols):
            m = max(m, x[r, j])
        s = 0.0
        for j in range(cols):
            e = math.exp(x[r, j] - m)
            out[r, j] = e
            s += e
        for j in range(cols):
            out[r, j] = out[r, j] / s


@asc.kernel
def expsum(x, out, total):
    s = 0.0
    for j in range(x.shape[0]):
        e = math.exp(x[j])
        out[j] = e
        s += e
    total[0] = s


@asc.kernel
def pexp(x, out):
    for i in asc.prange(x.shape[0]):
        out[i] = math.exp(x[i]) - math.log(x[i] * x[i] + 1.0)


@asc.kernel
def mixed(x, y, out):
    s = 0.0
    for j in range(x.shape[0]):
        s += math.log(x[j]) * math.sin(y[j]) + x[j] ** 1.5 - math.tanh(y[j])
        out[j] = s
'''


@pytest.fixture(scope="module")
def mods():
    return compile_on_off(asc, SRC, "ASC_VMCHUNK")


def same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


SIZES = [0, 1, 5, 255, 256, 257, 1000, 4097]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("cols", [1, 7, 256, 257, 1000])
def test_softmax_same_bits(mods, dt, cols):
    on, off = mods
    x = (np.random.default_rng(cols).standard_normal((37, cols)) * 4).astype(dt)
    a, b = np.zeros_like(x), np.zeros_like(x)
    with env(ASC_VMCHUNK=None):
        on.softmax(x, a)
    with env(ASC_VMCHUNK="0"):
        off.softmax(x, b)
    same(a, b)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(a, e / e.sum(axis=1, keepdims=True), rtol=1e-5)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
def test_sum_same_bits(mods, dt, n):
    on, off = mods
    r = np.random.default_rng(n)
    x = r.uniform(-20, 20, n).astype(dt)
    # the special values: exp(-inf) = 0, exp(nan) = nan (no error)
    if n > 10:
        x[3], x[7] = -np.inf, np.nan
    outs = []
    for mod, flag in ((on, None), (off, "0")):
        out, tot = np.full(n, 7, dt), np.zeros(1, dt)
        with env(ASC_VMCHUNK=flag):
            mod.expsum(x, out, tot)
        outs.append((out, tot))
    same(outs[0][0], outs[1][0])
    same(outs[0][1], outs[1][1])
    if n:
        # in order, like Python: the sum of the first 5 elements
        s = dt(0)
        for v in outs[0][0][:5]:
            s = dt(s + v)
        part = np.zeros(1, dt)
        on.expsum(x[:5].copy(), np.zeros(5, dt), part)
        assert part[0] == s


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n", [300, 1000, 4097])
def test_mixed_same_bits(mods, dt, n):
    on, off = mods
    r = np.random.default_rng(n + 1)
    x = r.uniform(0.01, 30, n).astype(dt)
    y = r.uniform(-5, 5, n).astype(dt)
    a, b = np.zeros(n, dt), np.zeros(n, dt)
    with env(ASC_VMCHUNK=None):
        on.mixed(x, y, a)
    with env(ASC_VMCHUNK="0"):
        off.mixed(x, y, b)
    same(a, b)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("at", [0, 1, 255, 256, 300, 511, 999])
def test_overflow_at_the_element(mods, dt, at):
    """The chunk computes exp for elements past the one that raises; the
    loop still raises there, having stored exactly the elements before."""
    on, off = mods
    n = 1000
    x = np.random.default_rng(at).uniform(-3, 3, n).astype(dt)
    x[at] = 1000.0
    x[min(at + 3, n - 1)] = 2000.0
    got = []
    for mod, flag in ((on, None), (off, "0")):
        out, tot = np.full(n, -1, dt), np.full(1, -1, dt)
        with env(ASC_VMCHUNK=flag):
            with pytest.raises(OverflowError, match="math range error"):
                mod.expsum(x, out, tot)
        got.append(out)
        assert tot[0] == -1
        assert np.all(out[at:] == -1)
        np.testing.assert_array_max_ulp(out[:at], np.exp(x[:at]), maxulp=2)
    same(got[0], got[1])


@pytest.mark.parametrize("at", [0, 257, 700])
def test_domain_error_at_the_element(mods, at):
    on, off = mods
    n = 800
    x = np.random.default_rng(at).uniform(0.5, 2, n)
    y = np.zeros(n)
    x[at] = -1.0
    got = []
    for mod, flag in ((on, None), (off, "0")):
        out = np.full(n, -1.0)
        with env(ASC_VMCHUNK=flag):
            with pytest.raises(ValueError, match="math domain error"):
                mod.mixed(x, y, out)
        assert np.all(out[at:] == -1.0)
        got.append(out)
    same(got[0], got[1])
    # what Python computes for the elements before
    s, want = 0.0, []
    for j in range(at):
        s += math.log(x[j]) * math.sin(y[j]) + x[j] ** 1.5 - math.tanh(y[j])
        want.append(s)
    np.testing.assert_allclose(got[0][:at], want, rtol=1e-12)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n", [0, 1, 100, 256, 257, 5000, 100003])
def test_prange_same_bits(mods, dt, n):
    """A parallel loop runs in chunks, each with its calls and checks
    ahead; a chunk whose checks all pass runs without them."""
    on, off = mods
    x = np.random.default_rng(n).uniform(-30, 30, n).astype(dt)
    if n > 10:
        x[5] = -np.inf      # exp(-inf) = 0: no error
    a, b = np.full(n, 3, dt), np.full(n, 3, dt)
    with env(ASC_VMCHUNK=None):
        on.pexp(x, a)
    with env(ASC_VMCHUNK="0"):
        off.pexp(x, b)
    same(a, b)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("at", [0, 700, 99999])
def test_prange_raises(mods, dt, at):
    """An overflow anywhere raises OverflowError, as with the pass off; the
    chunks before it in the same thread's share are stored."""
    on, off = mods
    n = 100000
    x = np.random.default_rng(at).uniform(-3, 3, n).astype(dt)
    x[at] = 1000.0
    for mod, flag in ((on, None), (off, "0")):
        out = np.zeros(n, dt)
        with env(ASC_VMCHUNK=flag):
            with pytest.raises(OverflowError, match="math range error"):
                mod.pexp(x, out)


def test_notes_and_switch(tmp_path):
    src = tmp_path / "k.py"
    src.write_text(SRC)
    sig = "softmax(f32[:, ::1], f32[:, ::1])"
    on = ascc_ir(src, sig)
    assert ("; vmchunk: exp (line 15) computed ahead, 256 iterations at a time, "
            "in a loop that vectorises (the loop raises and carries %s); its checks "
            "too: a chunk where none fails runs without them") in on
    pe = ascc_ir(src, "pexp(f32[::1], f32[::1])")
    assert "(the loop raises); its checks too" in pe and "pfor %j0" in pe
    assert "local_array [256]" in on
    off = ascc_ir(src, sig, {"ASC_VMCHUNK": "0"})
    assert "vmchunk" not in off and "local_array [256]" not in off
    es = ascc_ir(src, "expsum(f64[::1], f64[::1], f64[::1])")
    assert "; vmchunk: exp (line 26) computed ahead" in es
    mx = ascc_ir(src, "mixed(f32[::1], f32[::1], f32[::1])")
    assert ("; vmchunk: log (line 42), sin (line 42), ** (line 42), tanh (line 42) "
            "computed ahead") in mx
    # bounds checks may be what keeps an index in range: left alone
    bc = ascc_ir(src, "expsum(f32[::1], f32[::1], f32[::1])",
                 boundscheck=True)
    assert "; vmchunk: exp (line 26) stays: the loop raises IndexError" in bc
    assert "local_array" not in bc


def test_boundscheck_same_bits(tmp_path):
    """With bounds checks the pass leaves the loop alone: the kernel still
    raises IndexError at the element, as before."""
    src = tmp_path / "k.py"
    src.write_text('''
import asc
import math


@asc.kernel(boundscheck=True)
def gather(x, idx, out):
    s = 0.0
    for j in range(idx.shape[0]):
        s += math.exp(x[idx[j]])
        out[j] = s
''')
    mod = asc.compile(str(src))
    x = np.linspace(-1, 1, 50)
    idx = np.arange(600) % 50
    idx[400] = 50
    out = np.zeros(600)
    with pytest.raises(IndexError):
        mod.gather(x, idx, out)
    assert out[399] != 0 and np.all(out[400:] == 0)


def test_buffers_per_kernel_are_bounded(tmp_path):
    """At most 32 chunk buffers (2 KiB of float64 each) in one kernel: the
    loops after those keep their calls, with a note, and all give the bits
    of ASC_VMCHUNK=0."""
    body = "\n".join(f"    s{q} = 0.0\n    for j in range(x.shape[0]):\n"
                     f"        s{q} += math.exp(x[j] * {q + 1}.0)\n"
                     f"    out[{q}] = s{q}" for q in range(36))
    text = f"import asc\nimport math\n\n\n@asc.kernel\ndef many(x, out):\n{body}\n"
    src = tmp_path / "many.py"
    src.write_text(text)
    ir = ascc_ir(src, "many(f64[::1], f64[::1])")
    assert ir.count("256 iterations at a time") == 32
    assert ir.count("stays: the kernel has enough buffers") == 4
    x = np.random.default_rng(5).uniform(-0.1, 0.1, 700)
    got = []
    for flag in (None, "0"):
        out = np.zeros(36)
        with env(ASC_VMCHUNK=flag):
            asc.compile(text).many(x, out)
        got.append(out)
    same(got[0], got[1])


def test_fast_copy_of_a_loop_with_a_branch():
    """The chunk's copy without the checks has its own induction at every
    depth: a store inside an `if` indexes by it too."""
    text = '''
import asc
import math


@asc.kernel
def k(x, out):
    for j in range(x.shape[0]):
        e = math.exp(x[j])
        if e > 2.0:
            out[j] = e
'''
    x = np.linspace(-2, 2, 1000)
    got = []
    for flag in (None, "0"):
        out = np.zeros(1000)
        with env(ASC_VMCHUNK=flag):
            asc.compile(text).k(x, out)
        got.append(out)
    same(got[0], got[1])
    assert np.count_nonzero(got[0]) == np.count_nonzero(np.exp(x) > 2.0)


@asc.kernel
def erf_plus_constant(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += math.erf(a[i]) + math.exp(1.5)
    return s


def test_a_check_computed_before_the_loop():
    """math.exp(1.5) is hoisted out of the loop with its overflow test;
    the chunk's tests read that test as it is (it was an internal
    compiler error: 'register out of range' after vmchunk)."""
    a = np.linspace(-2.0, 2.0, 600)
    want = 0.0
    for v in a:
        want += math.erf(v) + math.exp(1.5)
    assert erf_plus_constant(a) == pytest.approx(want, rel=1e-14)
