"""Tile sizes of the loop-nest passes (docs/optimizer.md, "Tile sizes"):
the interchange pass's accumulator tile counts complex128 as 16 bytes
(asc__dt_bytes, the element size the tile pass uses too), so its tiles
hold half as many elements as float64's; results stay those of the
untransformed loops."""
import os
import subprocess

import numpy as np
import pytest

asc = pytest.importorskip("asc")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# j-p nests the interchange pass takes (gemmrec turned off: it would take
# the real ones first); a complex sum starts from 0j, a real one from 0.0
SRC = '''
import asc


@asc.kernel
def mm_c(a, b, c):
    n, k = a.shape
    m = b.shape[1]
    for i in range(n):
        for j in range(m):
            s = 0j
            for p in range(k):
                s += a[i, p] * b[p, j]
            c[i, j] = s


@asc.kernel
def mm_r(a, b, c):
    n, k = a.shape
    m = b.shape[1]
    for i in range(n):
        for j in range(m):
            s = 0.0
            for p in range(k):
                s += a[i, p] * b[p, j]
            c[i, j] = s
'''


def ascc_ir(tmp_path, sig, env=None):
    ascc = os.path.join(ROOT, "build", "ascc")
    if not os.path.exists(ascc):
        pytest.skip("no build/ascc")
    src = tmp_path / "k.py"
    src.write_text(SRC)
    r = subprocess.run([ascc, "--emit=ir", "--signature", sig, str(src)],
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, ASC_GEMMREC="0", **(env or {})))
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("kernel,dt,tile", [
    ("mm_r", "f32", 512),
    ("mm_r", "f64", 256),
    ("mm_c", "c64", 256),
    ("mm_c", "c128", 128),
])
def test_interchange_tile_bytes(tmp_path, kernel, dt, tile):
    """2 KiB of accumulator: complex128 elements are 16 bytes."""
    out = ascc_ir(tmp_path, f"{kernel}({dt}[:, ::1], {dt}[:, ::1], {dt}[:, ::1])")
    assert f"moved inside loop %p.it in tiles of {tile}," in out, out


def with_env(name, value, fn):
    saved = os.environ.get(name)
    os.environ[name] = value
    try:
        return fn()
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved


def test_results_across_tiles():
    """Widths around the tiles (128 complex128, 256 float64 elements):
    float64 gives the bytes of the loops (ASC_INTERCHANGE=0); complex128
    is compared with numpy only, because its products already differ in
    the last bit between the two forms and from Python's (the C
    compiler's complex multiply, with or without the pass)."""
    rng = np.random.default_rng(7)
    for m in (1, 127, 128, 129, 255, 256, 257, 300):
        for kernel, cplx in (("mm_c", True), ("mm_r", False)):
            a = rng.standard_normal((5, 9))
            b = rng.standard_normal((9, m))
            if cplx:
                a = a + 1j * rng.standard_normal((5, 9))
                b = b + 1j * rng.standard_normal((9, m))
            outs = []
            for v in ("1", "0"):
                def run():
                    mod = asc.compile(SRC)
                    c = np.full((5, m), np.nan, a.dtype)
                    getattr(mod, kernel)(a, b, c)
                    return c
                outs.append(with_env("ASC_GEMMREC", "0",
                                     lambda: with_env("ASC_INTERCHANGE", v, run)))
            if not cplx:
                assert outs[0].tobytes() == outs[1].tobytes(), m
            for c in outs:
                np.testing.assert_allclose(c, a @ b, rtol=1e-12, atol=1e-12)
