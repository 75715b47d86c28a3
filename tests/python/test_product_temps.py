"""Operands of `@` that are expressions (np.conj(h[a]), x * 2.0, a.T + b)
are arrays the product lowers first; they go once the product is made.

Before, such an operand inside a loop stayed held until the launch ended:
one more buffer per iteration, and the team's list of temporaries, which
each allocation searched, grew with them (a loop of 12,000 small complex
products took 300 ms, numpy 49 ms).  The results here are checked
against numpy, and the IR has a free_array for each made operand."""
import os
import subprocess
import sys

import numpy as np
import pytest

from envvars import ROOT, ascc_ir

asc = pytest.importorskip("asc")

SRC = '''
import numpy as np
import asc


@asc.kernel
def conj_products(g, h, idx, out):
    for k in range(g.shape[0]):
        for a in range(h.shape[0]):
            gh = g[k, idx[a]] @ h[a]
            out[k] += gh @ np.conj(h[a])
    return out


@asc.kernel
def scaled_products(a, b, out):
    for i in range(a.shape[0]):
        out[i] = (a[i] * 2.0) @ (b[i] + 1.0)


@asc.kernel
def stacked(a, b):
    return (a + 1.0) @ np.transpose(b * 0.5, (0, 2, 1))


@asc.kernel
def sort_rows(a, out):
    for i in range(a.shape[0]):
        out[i] = np.sort(a[i]) + 1.0


@asc.kernel
def named_operands(a, b):
    c = a @ b
    return c + a
'''


@pytest.fixture(scope="module")
def mod():
    return asc.compile(SRC)


def cvec(r, s):
    return r.standard_normal(s) + 1j * r.standard_normal(s)


def test_conj_products_in_a_loop(mod):
    r = np.random.default_rng(3)
    g, h = cvec(r, (5, 6, 4, 4)), cvec(r, (40, 4, 4))
    idx = r.integers(0, 6, 40)
    want = np.zeros((5, 4, 4), complex)
    for k in range(5):
        for a in range(40):
            want[k] += (g[k, idx[a]] @ h[a]) @ np.conj(h[a])
    got = mod.conj_products(g, h, idx, np.zeros((5, 4, 4), complex))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex128])
def test_expression_operands(mod, dt):
    r = np.random.default_rng(4)
    a = r.standard_normal((30, 3, 5)).astype(dt)
    b = r.standard_normal((30, 5, 2)).astype(dt)
    out = np.zeros((30, 3, 2), dt)
    mod.scaled_products(a, b, out)
    want = np.stack([(a[i] * 2.0) @ (b[i] + 1.0) for i in range(30)])
    tol = 1e-5 if dt == np.float32 else 1e-12
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol)
    b3 = r.standard_normal((30, 2, 5)).astype(dt)
    np.testing.assert_allclose(mod.stacked(a, b3),
                               (a + 1.0) @ np.transpose(b3 * 0.5, (0, 2, 1)),
                               rtol=tol, atol=tol)


def test_named_operands_stay(mod):
    a = np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(mod.named_operands(a, a), a @ a + a)


def test_sort_rows(mod):
    a = np.random.default_rng(5).standard_normal((20, 33))
    out = np.empty_like(a)
    mod.sort_rows(a, out)
    np.testing.assert_array_equal(out, np.sort(a, axis=1) + 1.0)


def test_made_operands_are_freed_in_the_ir(tmp_path):
    f = tmp_path / "p.py"
    f.write_text(SRC)
    ir = ascc_ir(f, "conj_products(c128[4], c128[3], i64[1], c128[3])")
    # np.conj(h[a]) (an operand of @) and gh @ conj (an operand of +=)
    # are freed in the loop; gh when it is bound again
    assert ir.count("free_array") >= 2, ir
    # np.sort(a[i]) in an expression: each copy of the loop frees its own
    ir = ascc_ir(f, "sort_rows(f64[2], f64[2])")
    assert ir.count("new_array") == ir.count("free_array") >= 1, ir
    ir = ascc_ir(f, "named_operands(f64[2], f64[2])")
    # c is a name and a and b are parameters: nothing of theirs is freed
    assert "free_array" not in ir, ir


LOOP = """
import resource
import numpy as np
import asc
m = asc.compile('''
import numpy as np
import asc
@asc.kernel
def k(a, out, n):
    for i in range(n):
        out[:] = np.cumsum(a) * 0.5 + out
''')
a = np.ones(1 << 20)
out = np.zeros(1 << 20)
m.k(a, out, 2)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
m.k(a, out, 300)
grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
assert out[-1] == 302 * 0.5 * (1 << 20), out[-1]
print(grew // 1024)
"""


def test_a_loop_of_made_arrays_holds_one(tmp_path):
    """300 iterations of an 8 MB np.cumsum inside an expression: each is
    given back after its statement, so the launch holds one or two, not
    300 (2.4 GB)."""
    r = subprocess.run([sys.executable, "-c", LOOP], capture_output=True,
                       text=True, timeout=600,
                       env=dict(os.environ, ASC_CACHE_DIR=str(tmp_path),
                                PYTHONPATH=os.path.join(ROOT, "bindings", "python")))
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.split()[-1]) < 200, r.stdout   # MB of peak growth
