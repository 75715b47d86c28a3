"""Privatised reductions into arrays (the privatize pass,
docs/parallelize.md): atomic adds into a small array inside a parallel
loop run on per-worker private copies, merged after the loop.  Results are
compared with numpy.bincount / np.add.at, integers exactly, with teams of
1 and 8 workers (synthetic hwloc topologies, in subprocesses), with the
pass off (ASC_PRIVATIZE=0), with several blocks, and where the cost model
falls back to the atomics (too many bins, too few iterations)."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = r'''
import sys
sys.path.insert(0, {pkg!r})
import numpy as np
import asc

@asc.kernel
def hist_prange(x, h):
    for i in asc.prange(x.shape[0]):
        asc.atomic_add(h, x[i], 1)

@asc.kernel
def hist_range(x, h):
    for i in range(x.shape[0]):
        asc.atomic_add(h, x[i], 1)

@asc.kernel
def hist_step(x, h):
    for i in asc.prange(1, x.shape[0], 3):
        asc.atomic_add(h, x[i] % 7, x[i])

@asc.kernel
def whist(x, w, h):
    for i in asc.prange(x.shape[0]):
        asc.atomic_add(h, x[i], w[i])

@asc.kernel
def hist_inplace(x, h):
    for i in asc.prange(x.shape[0]):
        h[x[i]] += 1

@asc.kernel
def add_at(x, w, h):
    for i in asc.prange(x.shape[0]):
        h[x[i]] += w[i]

@asc.kernel
def blocks_hist(x, h):
    n = x.shape[0] // asc.get_block_num()
    base = asc.get_block_idx() * n
    for i in asc.prange(n):
        asc.atomic_add(h, x[base + i], 1)

import os
# with the pass off, h[x[i]] += ... in a prange is the race the user wrote
racy_ok = os.environ.get("ASC_PRIVATIZE") != "0"
rng = np.random.default_rng(7)
bad = []
for n in (0, 1, 100, 5000, 300_000):
    x = rng.integers(0, 256, n)
    for k, dt in ((hist_prange, np.int64), (hist_prange, np.int32),
                  (hist_range, np.int64), (hist_range, np.uint32),
                  (hist_inplace, np.int64), (hist_inplace, np.uint8)):
        if k is hist_inplace and not racy_ok:
            continue
        h = np.full(256, 5, dt)
        k(x, h)
        want = (np.bincount(x, minlength=256) + 5).astype(dt)  # wraps
        if not np.array_equal(h, want):
            bad.append((k.__name__, n, str(np.dtype(dt))))
    # more bins than the private copies may hold: the atomics
    xb = rng.integers(0, 100_000, n)
    hb = np.zeros(100_000, np.int64)
    hist_prange(xb, hb)
    if not np.array_equal(hb, np.bincount(xb, minlength=100_000)):
        bad.append(("large", n))
    h = np.zeros(7, np.int64)
    hist_step(x, h)
    want = np.zeros(7, np.int64)
    np.add.at(want, x[1::3] % 7, x[1::3])
    if not np.array_equal(h, want):
        bad.append(("step", n))
    w = rng.random(n)
    h = np.zeros(256)
    whist(x, w, h)
    want = np.zeros(256)
    np.add.at(want, x, w)
    if not np.allclose(h, want, rtol=1e-12, atol=1e-9):
        bad.append(("float", n))
    h = np.zeros(256)
    add_at(x, w, h) if racy_ok else np.add.at(h, x, w)
    if not np.allclose(h, want, rtol=1e-12, atol=1e-9):
        bad.append(("add_at", n))
x = rng.integers(0, 64, 400_000)
h = np.zeros(64, np.int64)
blocks_hist[4](x, h)
asc.synchronize()
if not np.array_equal(h, np.bincount(x, minlength=64)):
    bad.append(("blocks",))
print("bad", bad)
'''


def run(tmp_path, env_extra):
    env = dict(os.environ)
    env.update(env_extra)
    pkg = os.path.join(ROOT, "bindings", "python")
    script = tmp_path / "hist.py"
    script.write_text(SCRIPT.format(pkg=pkg))
    r = subprocess.run([sys.executable, str(script)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("cores", [1, 8])
def test_histograms_equal_numpy(tmp_path, cores):
    out = run(tmp_path, {"HWLOC_SYNTHETIC": "pack:1 core:%d pu:1" % cores})
    assert "bad []" in out, out


def test_histograms_with_pass_off(tmp_path):
    out = run(tmp_path, {"HWLOC_SYNTHETIC": "pack:1 core:8 pu:1", "ASC_PRIVATIZE": "0"})
    assert "bad []" in out, out


def test_notes_in_ir(tmp_path):
    """The decision is in the IR that ascc prints, and ASC_PRIVATIZE=0
    removes it."""
    ascc = os.path.join(ROOT, "build", "ascc")
    if not os.path.exists(ascc):
        pytest.skip("no build/ascc")
    src = tmp_path / "k.py"
    src.write_text("import asc\n\n@asc.kernel\ndef hist(x, h):\n"
                   "    for i in asc.prange(x.shape[0]):\n"
                   "        asc.atomic_add(h, x[i], 1)\n")
    sig = "hist(i64[::1], i64[::1])"
    r = subprocess.run([ascc, "--emit=ir", "--signature", sig, str(src)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "; privatize: pfor" in r.stdout and "worker_id" in r.stdout
    env = dict(os.environ, ASC_PRIVATIZE="0")
    r = subprocess.run([ascc, "--emit=ir", "--signature", sig, str(src)],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert "privatize" not in r.stdout and "worker_id" not in r.stdout
