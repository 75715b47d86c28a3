"""Complex arithmetic in kernels gives Python's bits: no multiply and add
fused into one rounding (gcc's vectoriser fused c + a * b into vfmaddsub
despite -ffp-contract=off; emit_c.c turns that vectoriser off in modules
with complex values).  Each result is compared with Python's complex
arithmetic on the same doubles, element by element."""
import numpy as np
import pytest

asc = pytest.importorskip("asc")

SRC = '''
import asc


@asc.kernel
def muladd(a, b, c, out):
    for i in range(out.shape[0]):
        out[i] = c[i] + a[i] * b[i]


@asc.kernel
def mulsub(a, b, c, out):
    for i in asc.prange(out.shape[0]):
        out[i] = a[i] * b[i] - c[i]


@asc.kernel
def dot(a, b, out):
    s = 0j
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    out[0] = s


@asc.kernel
def arrays(a, b, c, out):
    out[:] = c + a * b
'''


def data(n, seed):
    r = np.random.default_rng(seed)
    return (r.standard_normal(n) + 1j * r.standard_normal(n)).astype(np.complex128)


@pytest.fixture(scope="module")
def mod():
    return asc.compile(SRC)


def same(got, want):
    assert np.asarray(got).tobytes() == np.asarray(want, np.complex128).tobytes()


@pytest.mark.parametrize("n", [1, 7, 1000, 20000])
def test_muladd(mod, n):
    a, b, c = data(n, 1), data(n, 2), data(n, 3)
    out = np.zeros(n, np.complex128)
    mod.muladd(a, b, c, out)
    same(out, [complex(z) + complex(x) * complex(y) for x, y, z in zip(a, b, c)])
    mod.arrays(a, b, c, out)
    same(out, [complex(z) + complex(x) * complex(y) for x, y, z in zip(a, b, c)])
    mod.mulsub(a, b, c, out)
    same(out, [complex(x) * complex(y) - complex(z) for x, y, z in zip(a, b, c)])


@pytest.mark.parametrize("n", [3, 2000])
def test_dot(mod, n):
    a, b = data(n, 4), data(n, 5)
    out = np.zeros(1, np.complex128)
    mod.dot(a, b, out)
    s = 0j
    for x, y in zip(a, b):
        s += complex(x) * complex(y)
    same(out, [s])
