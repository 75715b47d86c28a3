"""Tile sizes of the loop-nest passes (docs/optimizer.md, "Tile sizes"):
they follow the L1 data cache the code is compiled for (ascc
--l1-cache=BYTES|host, the JIT's device or ASC_L1_CACHE), 32 KiB when
unknown, and the sizes are part of the kernel cache key; results are the
same bytes whatever the tiles.  The interchange pass's accumulator tile
counts complex128 as 16 bytes (asc__dt_bytes, the element size the tile
pass uses too), so its tiles hold half as many elements as float64's."""
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


TRANSPOSE = '''
import asc


@asc.kernel
def transpose(a, b):
    n, m = a.shape
    for i in range(n):
        for j in range(m):
            b[j, i] = a[i, j]
'''


def ascc_ir(tmp_path, sig, env=None, opts=(), src=SRC):
    ascc = os.path.join(ROOT, "build", "ascc")
    if not os.path.exists(ascc):
        pytest.skip("no build/ascc")
    path = tmp_path / "k.py"
    path.write_text(src)
    r = subprocess.run([ascc, "--emit=ir", *opts, "--signature", sig, str(path)],
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
    the last bit between the two forms and from Python's, with or
    without the pass: gcc 12 vectorises `c + a * b` of complex doubles
    into vfmaddsub132pd (a fused multiply-add) despite -ffp-contract=off."""
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


# (ascc option, interchange's float32 tile, float64 tile, the tile pass's
# float32 T, float64 T): L1 / 16 bytes of accumulator; rows of the largest
# power of two R bytes with R * R <= L1 / 2
SIZES = [
    ((), 512, 256, 32, 16),                       # unknown: 32 KiB
    (("--l1-cache=32768",), 512, 256, 32, 16),
    (("--l1-cache=16K",), 256, 128, 16, 8),
    (("--l1-cache=48K",), 768, 384, 32, 16),
    (("--l1-cache=64K",), 1024, 512, 32, 16),
    (("--l1-cache=128K",), 2048, 1024, 64, 32),
    (("--l1-cache=1M",), 2048, 1024, 64, 64),     # both clamped
    (("--l1-cache=1K",), 128, 64, 16, 8),         # both clamped
]


@pytest.mark.parametrize("opts,acc32,acc64,t32,t64", SIZES)
def test_sizes_follow_l1(tmp_path, opts, acc32, acc64, t32, t64):
    for dt, acc, t in (("f32", acc32, t32), ("f64", acc64, t64)):
        out = ascc_ir(tmp_path, f"mm_r({dt}[:, ::1], {dt}[:, ::1], {dt}[:, ::1])",
                      opts=opts)
        assert f"moved inside loop %p.it in tiles of {acc}," in out, out
        out = ascc_ir(tmp_path, f"transpose({dt}[:, ::1], {dt}[:, ::1])",
                      opts=opts, src=TRANSPOSE)
        assert f"run in tiles of {t} x {t}" in out, out


def test_host_l1(tmp_path):
    """--l1-cache=host: this machine's L1 as hwloc reports it (the device's
    ascDeviceProp.l1CacheSize)."""
    l1 = asc.device_properties(0).l1_cache_size
    out = ascc_ir(tmp_path, "mm_r(f32[:, ::1], f32[:, ::1], f32[:, ::1])",
                  opts=("--l1-cache=host",))
    if l1:
        acc = min(max(l1 // 16 // 64 * 64, 512), 8192) // 4
        assert f"in tiles of {acc}," in out, out
    else:
        assert "in tiles of" in out, out


@pytest.mark.parametrize("bad", ["12", "0", "2G", "32Q", "-1", "", "hostx"])
def test_bad_l1_option(tmp_path, bad):
    ascc = os.path.join(ROOT, "build", "ascc")
    if not os.path.exists(ascc):
        pytest.skip("no build/ascc")
    path = tmp_path / "k.py"
    path.write_text(SRC)
    r = subprocess.run([ascc, "--emit=ir", f"--l1-cache={bad}", "--signature",
                        "mm_r(f32[:, ::1], f32[:, ::1], f32[:, ::1])", str(path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r
    assert "bad --l1-cache value" in r.stderr, r.stderr


def test_jit_sizes_same_results():
    """ASC_L1_CACHE (read when a kernel compiles) changes the tiles, not
    the bytes: 16 KiB, the default and 128 KiB give the same outputs."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((7, 13))
    b = rng.standard_normal((13, 1100))
    x = rng.standard_normal((150, 97)).astype(np.float32)
    outs = []
    for l1 in ("16K", None, "128K"):
        def run():
            mod = asc.compile(SRC)
            c = np.full((7, 1100), np.nan)
            mod.mm_r(a, b, c)
            t = np.full((97, 150), np.nan, np.float32)
            asc.compile(TRANSPOSE).transpose(x, t)
            return c, t
        if l1 is None:
            saved = os.environ.pop("ASC_L1_CACHE", None)
            try:
                outs.append(with_env("ASC_GEMMREC", "0", run))
            finally:
                if saved is not None:
                    os.environ["ASC_L1_CACHE"] = saved
        else:
            outs.append(with_env("ASC_GEMMREC", "0",
                                 lambda: with_env("ASC_L1_CACHE", l1, run)))
    for c, t in outs:
        assert c.tobytes() == outs[0][0].tobytes()
        assert t.tobytes() == outs[0][1].tobytes()
        assert (t == x.T).all()
        np.testing.assert_allclose(c, a @ b, rtol=1e-12, atol=1e-12)


CACHE_SCRIPT = '''
import os, sys
import numpy as np
import asc
text = """
import asc


@asc.kernel
def k(a, b, c):
    n, k = a.shape
    m = b.shape[1]
    for i in range(n):
        for j in range(m):
            s = 0.0
            for p in range(k):
                s += a[i, p] * b[p, j]
            c[i, j] = s
"""
a = np.arange(6.0).reshape(2, 3)
b = np.arange(12.0).reshape(3, 4)
for l1 in sys.argv[1:]:
    if l1 == "-":
        os.environ.pop("ASC_L1_CACHE", None)
    else:
        os.environ["ASC_L1_CACHE"] = l1
    c = np.zeros((2, 4))
    asc.compile(text).k(a, b, c)
    assert (c == a @ b).all()
'''


def test_sizes_are_part_of_the_cache_key(tmp_path):
    """Two L1 sizes that give different tiles are two cache entries, each
    hit again; a size that gives the default's tiles (32 KiB, the device's
    here or unknown) shares the default's entry."""
    import sys
    from pathlib import Path
    cache = tmp_path / "cache"
    script = tmp_path / "l1.py"
    script.write_text(CACHE_SCRIPT)
    env = dict(os.environ, ASC_CACHE_DIR=str(cache), ASC_GEMMREC="0",
               PYTHONPATH=str(Path(__file__).resolve().parents[2] / "bindings" / "python"))
    env.pop("ASC_L1_CACHE", None)

    def entries(*sizes):
        subprocess.run([sys.executable, str(script), *sizes], check=True,
                       env=env, timeout=300)
        return sorted(cache.rglob("*.so"))
    one = entries("16K")
    assert len(one) == 1
    two = entries("128K")
    assert len(two) == 2
    assert entries("16K", "128K") == two
    # 32 KiB and a 16-byte-different size with the same tiles: one more
    three = entries("32K")
    assert len(three) == 3
    assert entries("32K", "32800", "16K", "128K") == three
    # unset: the device's L1, which shares 32 KiB's entry when it gives
    # the same tiles (it is 32 KiB on the machines measured)
    l1 = asc.device_properties(0).l1_cache_size
    same = l1 == 0 or (min(max(l1 // 16 // 64 * 64, 512), 8192) == 2048 and
                       128 * 128 <= l1 // 2 < 256 * 256)
    assert len(entries("-")) == (3 if same else 4)
