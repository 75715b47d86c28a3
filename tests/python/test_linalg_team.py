"""np.linalg.solve and inv of a system large enough for the team
(runtime/lapack.c, gesv_team; docs/arrays.md "np.linalg"): the LU factors
once, then each thread solves a slab of the right-hand sides' columns.
Checked against numpy on each dtype, for right-hand sides that do not
divide evenly, a singular matrix, views, and a loop of solves like
NPBench's contour integral; and with ASC_VISIBLE_CORES of one core (one
gesv call) the same answers."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import asc

TEXT = """
import numpy as np
import asc

@asc.kernel
def solve(a, b):
    return np.linalg.solve(a, b)

@asc.kernel
def inv(a):
    return np.linalg.inv(a)

@asc.kernel
def contour(ham, pts, y):
    p0 = np.zeros((ham.shape[1], y.shape[1]), dtype=np.complex128)
    for z in pts:
        tz = np.zeros((ham.shape[1], ham.shape[1]), dtype=np.complex128)
        for n in range(ham.shape[0]):
            tz += np.power(z, 1.0 - n) * ham[n]
        x = np.linalg.solve(tz, y)
        if abs(z) < 1.0:
            x = -x
        p0 += x
    return p0
"""


@pytest.fixture(scope="module")
def mod():
    return asc.compile(TEXT)


def rand(r, shape, dt):
    a = r.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        a = a + 1j * r.standard_normal(shape)
    return a.astype(dt)


def tol(dt):
    return 2e-3 if np.dtype(dt) in (np.float32, np.complex64) else 1e-9


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("n,k", [(100, 300), (131, 257), (64, 1001)])
def test_solve_against_numpy(mod, dt, n, k):
    r = np.random.default_rng(n + k)
    a = rand(r, (n, n), dt) + n * np.eye(n, dtype=dt)
    b = rand(r, (n, k), dt)
    got, want = mod.solve(a, b), np.linalg.solve(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=tol(dt), atol=tol(dt))


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_inv_and_views(mod, dt):
    r = np.random.default_rng(3)
    a = rand(r, (260, 260), dt) + 260 * np.eye(260, dtype=dt)
    np.testing.assert_allclose(mod.inv(a), np.linalg.inv(a), rtol=1e-9, atol=1e-12)
    v = a[::2, ::2]  # not contiguous
    b = rand(r, (130, 400), dt)[:, ::-1]
    np.testing.assert_allclose(mod.solve(v, b), np.linalg.solve(v, b), rtol=1e-9, atol=1e-12)


def test_singular(mod):
    a = np.ones((120, 120))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        mod.solve(a, np.ones((120, 200)))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        mod.inv(np.zeros((150, 150)))


def test_contour_loop(mod):
    r = np.random.default_rng(5)
    nr, nm = 60, 90
    ham = rand(r, (3, nr, nr), np.complex128)
    pts = np.exp(2j * np.pi * np.arange(8) / 8) * np.array([0.5, 1.5] * 4)
    y = rand(r, (nr, nm), np.complex128)
    want = np.zeros((nr, nm), np.complex128)
    for z in pts:
        tz = np.zeros((nr, nr), np.complex128)
        for n in range(3):
            tz += np.power(z, 1.0 - n) * ham[n]
        x = np.linalg.solve(tz, y)
        want += -x if abs(z) < 1.0 else x
    np.testing.assert_allclose(mod.contour(ham, pts, y), want, rtol=1e-9, atol=1e-9)


def test_one_core_gives_the_same(tmp_path):
    # one thread: one gesv call; the team's slabs solve the same system
    child = textwrap.dedent("""
        import sys, numpy as np, asc
        m = asc.compile(sys.argv[1])
        r = np.random.default_rng(9)
        a = r.standard_normal((150, 150)) + 150 * np.eye(150)
        b = r.standard_normal((150, 333))
        sys.stdout.write(m.solve(a, b).tobytes().hex())
    """)
    src = tmp_path / "k.py"
    src.write_text(TEXT)
    outs = []
    for cores in ("0", None):
        env = dict(os.environ, ASC_CACHE_DIR=str(tmp_path / "cache"),
                   PYTHONPATH=os.pathsep.join(sys.path))
        if cores is not None:
            env["ASC_VISIBLE_CORES"] = cores
        p = subprocess.run([sys.executable, "-c", child, str(src)], env=env,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        outs.append(np.frombuffer(bytes.fromhex(p.stdout), np.float64))
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12, atol=1e-12)
