"""The tile pass (docs/optimizer.md, "tile.c"): the naive transpose, range
and prange forms, gives numpy's a.T bit for bit with the pass on and off
(ASC_TILE=0, read when a kernel compiles, at its first launch), on empty,
tiny, odd and tile-crossing shapes, non-contiguous views, and several
dtypes; ascc's IR shows the tiling, and ASC_TILE=0 removes it."""
import os
import subprocess

import numpy as np
import pytest

asc = pytest.importorskip("asc")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SRC = '''
import asc


@asc.kernel
def transpose(a, b):
    n, m = a.shape
    for i in range(n):
        for j in range(m):
            b[j, i] = a[i, j]


@asc.kernel
def transpose_p(a, b):
    n, m = a.shape
    for i in asc.prange(n):
        for j in range(m):
            b[j, i] = a[i, j]


@asc.kernel
def transpose_scale(a, b, s):
    n, m = a.shape
    for i in asc.prange(n):
        for j in range(m):
            b[j, i] = a[i, j] * s + a[i, j]
'''

SHAPES = [(0, 0), (0, 5), (5, 0), (1, 1), (1, 7), (7, 1), (7, 7), (33, 33),
          (100, 257), (257, 100), (16, 16), (17, 15)]
DTYPES = [np.float32, np.float64, np.int8, np.complex128]


def data(shape, dt, seed=0):
    r = np.random.default_rng(seed)
    if np.issubdtype(dt, np.integer):
        return r.integers(-128, 128, shape).astype(dt)
    x = r.standard_normal(shape)
    if np.issubdtype(dt, np.complexfloating):
        x = x + 1j * r.standard_normal(shape)
    x = x.astype(dt)
    if x.size:
        x.flat[0] = -0.0 if not np.issubdtype(dt, np.complexfloating) else x.flat[0]
    return x


@pytest.fixture(params=["on", "off"])
def mod(request):
    """The module compiled and its kernels launched with ASC_TILE as the
    parameter says: kernels compile at their first launch, so the switch
    stays set while the test runs."""
    saved = os.environ.get("ASC_TILE")
    os.environ["ASC_TILE"] = "1" if request.param == "on" else "0"
    try:
        yield asc.compile(SRC)
    finally:
        if saved is None:
            os.environ.pop("ASC_TILE", None)
        else:
            os.environ["ASC_TILE"] = saved


def bitwise(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("name", ["transpose", "transpose_p"])
def test_shapes(mod, name, dt):
    k = getattr(mod, name)
    for shape in SHAPES:
        a = data(shape, dt)
        b = np.full(shape[::-1], 3, dt)
        k(a, b)
        bitwise(b, a.T)


@pytest.mark.parametrize("name", ["transpose", "transpose_p"])
def test_views(mod, name):
    """Non-contiguous inputs and outputs: strided, transposed, reversed."""
    k = getattr(mod, name)
    big = data((90, 140), np.float32, 1)
    views = [big[::2, ::3], big.T[::-1], big[5:70, 7:120], big[:, ::-1]]
    for a in views:
        out = np.zeros((a.shape[1] * 2, a.shape[0]), np.float32)
        b = out[::2]
        k(a, b)
        bitwise(b, a.T)
        assert not out[1::2].any()
        # the output a transposed view: the loops then walk it contiguously
        c = np.zeros(a.shape, np.float32)
        k(a, c.T)
        bitwise(c, a)


def test_float_ops_per_element(mod):
    """Each element keeps its operations: a * s + a rounded as numpy does."""
    a = data((100, 257), np.float32, 2)
    b = np.empty((257, 100), np.float32)
    mod.transpose_scale(a, b, np.float32(1.1))
    bitwise(b, (a * np.float32(1.1) + a).T)


def test_on_off_equal():
    """The same launch with the pass on and off: the same bytes."""
    a = data((130, 77), np.float64, 3)
    outs = []
    for v in ("1", "0"):
        saved = os.environ.get("ASC_TILE")
        os.environ["ASC_TILE"] = v
        try:
            m = asc.compile(SRC)
            b = np.empty((77, 130), np.float64)
            m.transpose(a, b)
            outs.append(b)
        finally:
            if saved is None:
                os.environ.pop("ASC_TILE", None)
            else:
                os.environ["ASC_TILE"] = saved
    assert outs[0].tobytes() == outs[1].tobytes()


def ascc_ir(tmp_path, sig, env=None):
    ascc = os.path.join(ROOT, "build", "ascc")
    if not os.path.exists(ascc):
        pytest.skip("no build/ascc")
    src = tmp_path / "k.py"
    src.write_text(SRC)
    r = subprocess.run([ascc, "--emit=ir", "--signature", sig, str(src)],
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, **(env or {})))
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("sig,tile", [
    ("transpose(f32[:, ::1], f32[:, ::1])", 32),
    ("transpose_p(f32[:, ::1], f32[:, ::1])", 32),
    ("transpose_p(f64[:, ::1], f64[:, ::1])", 16),
    ("transpose_p(i8[:, ::1], i8[:, ::1])", 64),
    ("transpose_p(c128[:, ::1], c128[:, ::1])", 8),
])
def test_notes_in_ir(tmp_path, sig, tile):
    out = ascc_ir(tmp_path, sig)
    assert f"run in tiles of {tile} x {tile}" in out, out
    assert "pfor %ib" in out, out
    out = ascc_ir(tmp_path, sig, {"ASC_TILE": "0"})
    assert "tile:" not in out and "%ib" not in out, out
