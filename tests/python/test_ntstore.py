"""Streaming stores (docs/arrays.md, "Streaming stores"): a parallel loop
that writes a large contiguous destination computes it 64 bytes at a time
and stores each line with a non-temporal store.  Only the store changes:
every result here must equal numpy's bit for bit, on both sides of the
run-time tests (contiguous or not, aligned or not, large or small,
broadcast, overlapping), with streaming on (ASC_NTSTORE=64: any loop of
64 bytes or more streams; and the default threshold with a destination
above it) and off (ASC_NTSTORE=0).  tests/scripts/ascc_ntstore.sh checks
the generated C and machine code."""
import os
import subprocess
import sys

import numpy as np
import pytest

import asc

# numpy's own warnings about the NaNs and infinities in the data
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

TEXT = """
import asc

@asc.kernel
def fused(a, b, c, d):
    a[:] = b * c + d

@asc.kernel
def add3(a, b, c, d):
    a[:] = b + c + d

@asc.kernel
def lin(a, b, x):
    a[:] = x * b - b / x

@asc.kernel
def ilin(a, b, c):
    a[:] = -(b * c) + b - 7

@asc.kernel
def shift(a, b):
    a[1:] = b[:-1] * 2

@asc.kernel
def overlap(a):
    a[1:] = a[:-1] + a[1:]

@asc.kernel
def inplace(a, b):
    a[:] = a * b + a

@asc.kernel
def axpy(a, b, alpha):
    for i in asc.prange(a.shape[0]):
        a[i] = alpha * b[i] + a[i]

@asc.kernel
def grid(a, b, c):
    a[:, :] = b * c
"""

FLOATS = [np.float32, np.float64]
INTS = [np.int32, np.int64, np.uint32, np.uint64]


@pytest.fixture(params=["64", "0"], ids=["stream", "off"])
def mod(request, monkeypatch):
    # the switch is read when a kernel is compiled, and keys the cache
    monkeypatch.setenv("ASC_NTSTORE", request.param)
    return asc.compile(TEXT)


def same(x, y):
    """Equal bit for bit (NaNs, signed zeros included)."""
    x, y = np.ascontiguousarray(x), np.ascontiguousarray(y)
    assert x.dtype == y.dtype and x.shape == y.shape
    assert np.array_equal(x.view(np.uint8), y.view(np.uint8))


def data(rng, n, dt):
    dt = np.dtype(dt)
    if dt.kind == "f":
        x = (rng.standard_normal(n) * 1e3).astype(dt)
        x[::97] = np.nan
        x[1::89] = -0.0
        x[2::83] = np.inf
        return x
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind == "c":
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)


def offset_view(rng, n, dt, off):
    """n elements starting off elements into a fresh buffer: a destination
    whose 64-byte alignment differs from its sources'."""
    base = data(rng, n + off + 3, dt)
    return base[off:off + n]


# sizes around the 64-byte line: below one line, exact lines, ragged tails
SIZES = [1, 7, 16, 17, 63, 64, 65, 1000, 4099]


@pytest.mark.parametrize("dt", FLOATS + INTS + [np.float16, np.complex64,
                                                np.complex128, np.bool_])
@pytest.mark.parametrize("n", SIZES)
def test_fused(mod, dt, n):
    rng = np.random.default_rng(n)
    # complex: + only (complex * rounds as C99 does, not always as numpy)
    cx = np.dtype(dt).kind in "cb"
    for off in (0, 1, 3):
        b, c, d = (offset_view(rng, n, dt, o) for o in (0, 2, 5))
        a = offset_view(rng, n, dt, off)
        with np.errstate(all="ignore"):
            ref = b + c + d if cx else b * c + d
        (mod.add3 if cx else mod.fused)(a, b, c, d)
        same(a, ref)


@pytest.mark.parametrize("dt", FLOATS)
def test_scalar_and_division(mod, dt):
    rng = np.random.default_rng(1)
    for n in (5, 100, 3001):
        b = data(rng, n, dt)
        a = np.empty_like(b)
        with np.errstate(all="ignore"):
            ref = dt(0.3) * b - b / dt(0.3)
        mod.lin(a, b, dt(0.3))
        same(a, ref)


@pytest.mark.parametrize("dt", [np.int32, np.int64])
def test_int_wraps(mod, dt):
    rng = np.random.default_rng(2)
    b, c = data(rng, 2049, dt), data(rng, 2049, dt)
    a = np.empty_like(b)
    with np.errstate(all="ignore"):
        ref = -(b * c) + b - 7
    mod.ilin(a, b, c)
    same(a, ref)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int64])
def test_destination_not_element_aligned(mod, dt):
    """A destination one byte off its element alignment never reaches a
    64-byte boundary: the whole loop runs as plain code."""
    rng = np.random.default_rng(11)
    n = 1000
    raw = np.zeros(n * np.dtype(dt).itemsize + 8, np.uint8)
    a = np.ndarray((n,), dt, buffer=raw, offset=1)
    assert not a.flags.aligned
    b, c, d = (data(rng, n, dt) for _ in range(3))
    with np.errstate(all="ignore"):
        ref = b * c + d
    mod.fused(a, b, c, d)
    same(a, ref)


def test_non_contiguous(mod):
    rng = np.random.default_rng(3)
    b, c, d = (data(rng, 3000, np.float32) for _ in range(3))
    a = data(rng, 3000, np.float32)
    keep = a.copy()
    mod.fused(a[::2], b[::2], c[1::2], d[::-2])
    ref = keep.copy()
    ref[::2] = b[::2] * c[1::2] + d[::-2]
    same(a, ref)
    # a contiguous destination, strided sources
    a = np.empty(1500, np.float32)
    mod.fused(a, b[::2], c[::2], d[1::2])
    same(a, b[::2] * c[::2] + d[1::2])


def test_broadcast(mod):
    rng = np.random.default_rng(4)
    b = data(rng, 2000, np.float64)
    c = data(rng, 1, np.float64)
    d = data(rng, 2000, np.float64)
    a = np.empty_like(b)
    mod.fused(a, b, c, d)
    same(a, b * c + d)
    mod.fused(a, c, b, c)
    same(a, c * b + c)


def test_offset_store_and_overlap(mod):
    rng = np.random.default_rng(5)
    for dt in (np.float32, np.int64):
        b = data(rng, 2051, dt)
        a = data(rng, 2051, dt)
        ref = a.copy()
        with np.errstate(all="ignore"):
            ref[1:] = b[:-1] * 2
        mod.shift(a, b)
        same(a, ref)
        # destination and source are views of one array: a temporary
        a = data(rng, 2051, dt)
        ref = a.copy()
        with np.errstate(all="ignore"):
            ref[1:] = ref[:-1] + ref[1:]
        mod.overlap(a)
        same(a, ref)


def test_same_array_twice(mod):
    rng = np.random.default_rng(6)
    a = data(rng, 4099, np.float32)
    b = data(rng, 4099, np.float32)
    ref = a * b + a
    mod.inplace(a, b)
    same(a, ref)
    # b is a: the kernel is compiled for overlapping tensors
    a = data(rng, 4099, np.float32)
    ref = a * a + a
    mod.inplace(a, a)
    same(a, ref)


def test_overlapping_parameters(monkeypatch):
    """Overlapping views of one array as two parameters give loop-order
    results (docs/arrays.md, "Overlap"); such a launch runs code compiled
    for overlapping tensors, which never streams: the same result with
    streaming on as off."""
    out = []
    for v in ("64", "0"):
        monkeypatch.setenv("ASC_NTSTORE", v)
        m = asc.compile(TEXT)
        buf = data(np.random.default_rng(10), 4100, np.float32)
        with np.errstate(all="ignore"):
            m.inplace(buf[1:], buf[:-1])
        out.append(buf)
    same(out[0], out[1])


def test_prange_loop(mod):
    rng = np.random.default_rng(7)
    b = data(rng, 3333, np.float64)
    a = data(rng, 3333, np.float64)
    ref = 1.5 * b + a
    mod.axpy(a, b, 1.5)
    same(a, ref)


def test_two_dims(mod):
    rng = np.random.default_rng(8)
    b = data(rng, 300 * 70, np.float32).reshape(300, 70)
    c = data(rng, 70, np.float32)
    a = np.empty_like(b)
    mod.grid(a, b, c)
    same(a, b * c)
    a = np.empty((70, 300), np.float32)
    mod.grid(a, b.T, c[:, None])
    same(a, b.T * c[:, None])


def test_default_threshold(monkeypatch):
    """Unset ASC_NTSTORE: 16 MiB of float32 is above the default threshold
    (8 MiB) and streams, 1 MiB does not; both are exact."""
    monkeypatch.delenv("ASC_NTSTORE", raising=False)
    m = asc.compile(TEXT)
    rng = np.random.default_rng(9)
    for n in (1 << 18, (1 << 22) + 5):
        b, c, d = (data(rng, n, np.float32) for _ in range(3))
        a = np.empty(n + 1, np.float32)[1:]
        with np.errstate(all="ignore"):
            ref = b * c + d
        m.fused(a, b, c, d)
        same(a, ref)


def test_switch_keys_the_cache(tmp_path):
    """ASC_NTSTORE is part of the kernel cache key: each setting compiles
    its own module, and setting one again finds it.  (A fresh process:
    the cache folder is chosen once per process.)"""
    script = "\n".join([
        "import os, sys",
        "import numpy as np",
        "import asc",
        "src = '@asc.kernel\\ndef fused(a, b, c, d):\\n    a[:] = b * c + d\\n'",
        "a, b = np.zeros(64, np.float32), np.ones(64, np.float32)",
        "for v in sys.argv[1:]:",
        "    os.environ['ASC_NTSTORE'] = v",
        "    asc.compile('import asc\\n' + src).fused(a, b, b, b)",
        "    assert np.array_equal(a, b * b + b)",
        "    print(sum(f.endswith('.so') for _, _, fs in",
        "              os.walk(os.environ['ASC_CACHE_DIR']) for f in fs))",
    ])
    env = dict(os.environ, ASC_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", script, "64", "0", "128",
                          "64"], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["1", "2", "3", "3"]
