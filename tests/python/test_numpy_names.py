"""numpy and math names in kernels (issue 16, docs/arrays.md): `import numpy
as np` in the kernel's module, np dtypes as casts and dtype arguments,
np constants, numpy's math functions with numpy's scalar semantics."""
import math

import numpy as np
import pytest

import asc

TEXT = """
import math
import numpy as np
import asc

TWO_PI = 2 * np.pi

@asc.kernel
def ufuncs(a, b, out):
    for i in range(a.shape[0]):
        x = a[i]
        y = b[i]
        out[i, 0] = np.sqrt(np.abs(x))
        out[i, 1] = np.exp(x) + np.log1p(np.fabs(y))
        out[i, 2] = np.floor(x) + np.ceil(y) + np.trunc(x)
        out[i, 3] = np.minimum(x, y) + np.maximum(x, y)
        out[i, 4] = np.arctan2(x, y) + np.arcsin(np.tanh(y))
        out[i, 5] = np.power(x, 2) + np.hypot(x, y)
        out[i, 6] = np.sin(x) * np.cos(y) + np.log(np.float64(2.0))
        out[i, 7] = TWO_PI + np.e + math.pi + math.e
        out[i, 8] = np.float32(x / 3.0)
        out[i, 9] = np.isnan(x) + np.isinf(y) + np.isfinite(x)
        out[i, 10] = math.sqrt(abs(x)) + math.floor(x) if np.isfinite(x) else 0.0

@asc.kernel
def casts(a, out):
    t = asc.local_array(4, np.float32)
    for i in range(a.shape[0]):
        t[i % 4] = np.float32(a[i])
        out[i] = np.int64(t[i % 4]) + np.int32(2)

@asc.kernel
def consts(out):
    out[0] = np.inf
    out[1] = -np.inf
    out[2] = np.nan
    out[3] = math.inf
"""


def test_numpy_math_matches_numpy():
    m = asc.compile(TEXT)
    rng = np.random.default_rng(3)
    a = rng.uniform(-3, 3, 50)
    b = rng.uniform(-3, 3, 50)
    a[0] = np.nan
    b[1] = np.inf
    out = np.zeros((50, 11))
    with np.errstate(all="ignore"):
        m.ufuncs(a, b, out)
        want = np.stack([
            np.sqrt(np.abs(a)),
            np.exp(a) + np.log1p(np.fabs(b)),
            np.floor(a) + np.ceil(b) + np.trunc(a),
            np.fmin(a, b) + np.fmax(a, b),
            np.arctan2(a, b) + np.arcsin(np.tanh(b)),
            np.power(a, 2) + np.hypot(a, b),
            np.sin(a) * np.cos(b) + np.log(2.0),
            np.full(50, 2 * np.pi + np.e + math.pi + math.e),
            (a / 3.0).astype(np.float32).astype(np.float64),
            (np.isnan(a).astype(int) + np.isinf(b) + np.isfinite(a)).astype(float),
        ], axis=1)
    # NaN rows are compared on the columns whose NaN handling is the same
    np.testing.assert_allclose(out[2:, :10], want[2:], rtol=1e-12)
    assert out[0, 9] == 1 + 0 + 0 and out[1, 9] == 0 + 1 + 1
    np.testing.assert_allclose(out[2:, 10], [math.sqrt(abs(x)) + math.floor(x) for x in a[2:]])


def test_numpy_dtypes_as_casts_and_dtype_arguments():
    m = asc.compile(TEXT)
    a = np.array([1.7, -2.5, 3.2, 100.9])
    out = np.zeros(4, np.int64)
    m.casts(a, out)
    np.testing.assert_array_equal(out, np.trunc(a.astype(np.float32)).astype(np.int64) + 2)


def test_numpy_constants():
    m = asc.compile(TEXT)
    out = np.zeros(4)
    m.consts(out)
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2]) and out[3] == np.inf


def test_unsupported_numpy_function_is_named_at_its_line():
    src = "import numpy as np\nimport asc\n\n@asc.kernel\ndef k(a, out):\n    out[0] = np.unwrap(a)[0]\n"
    with pytest.raises(asc.CompileError) as ei:
        asc.compile(src).k(np.zeros(3), np.zeros(1))
    msg = str(ei.value)
    assert ":6:" in msg and "np.unwrap is not supported in kernels yet" in msg
    assert "numpy names kernels accept: sin" in msg
    assert "not defined" not in msg and "method calls" not in msg


def test_plain_import_numpy():
    src = "import numpy\nimport asc\n\n@asc.kernel\ndef k(out):\n    out[0] = numpy.float32(numpy.pi)\n"
    out = np.zeros(1)
    asc.compile(src).k(out)
    assert out[0] == np.float64(np.float32(np.pi))


# the decorator path: this module did `import numpy as np` above
@asc.kernel
def deco_kernel(a, out):
    for i in range(a.shape[0]):
        out[i] = np.sqrt(np.float32(a[i])) + np.pi


def test_decorated_kernel_uses_module_numpy_alias():
    a = np.arange(5.0)
    out = np.zeros(5)
    deco_kernel(a, out)
    np.testing.assert_allclose(out, np.sqrt(a.astype(np.float32)).astype(np.float64) + np.pi,
                               rtol=1e-7)


def test_numpy_dtypes_in_annotations():
    src = ("import numpy as np\nimport asc\n\n@asc.kernel\n"
           "def k(a: asc.Tensor[np.float32, 1], x: np.float32):\n"
           "    y: np.float64 = x\n    a[0] = y * 2\n")
    m = asc.compile(src)
    a = np.zeros(1, np.float32)
    m.k(a, 1.5)
    assert a[0] == 3.0
    with pytest.raises(TypeError):
        m.k(np.zeros(1, np.float64), 1.5)
