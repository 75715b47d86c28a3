"""Every numpy ufunc kernels have a scalar for works on arrays as numpy's
does (docs/arrays.md "ufunc methods", the table of ufuncs): one kernel
per ufunc, applied to a 2-D array (and, in its first dtype, a strided
view of it), its result's dtype, shape and values compared with
numpy's, in float32, float64, an integer dtype and complex128 where
numpy has the loop."""
import numpy as np
import pytest

import asc

F = ["float32", "float64"]
FI = F + ["int64"]
FC = F + ["complex128"]
FIC = FI + ["complex128"]

# name, number of operands, dtypes, the operands' range
TABLE = [
    ("sin", 1, FC, (-3, 3)), ("cos", 1, FC, (-3, 3)), ("tan", 1, F, (-1, 1)),
    ("arcsin", 1, F, (-1, 1)), ("arccos", 1, F, (-1, 1)),
    ("arctan", 1, F, (-3, 3)), ("sinh", 1, F, (-2, 2)),
    ("cosh", 1, F, (-2, 2)), ("tanh", 1, F, (-2, 2)),
    ("exp", 1, FC, (-2, 2)), ("exp2", 1, F, (-2, 2)),
    ("expm1", 1, F, (-1, 1)), ("log", 1, FC, (0.1, 3)),
    ("log2", 1, F, (0.1, 3)), ("log10", 1, F, (0.1, 3)),
    ("log1p", 1, F, (-0.5, 3)), ("sqrt", 1, FC, (0, 4)),
    ("floor", 1, F, (-3, 3)), ("ceil", 1, F, (-3, 3)),
    ("trunc", 1, F, (-3, 3)), ("fabs", 1, F, (-3, 3)),
    ("absolute", 1, FIC, (-3, 3)), ("abs", 1, FIC, (-3, 3)),
    ("negative", 1, FIC, (-3, 3)), ("positive", 1, FIC, (-3, 3)),
    ("square", 1, FIC, (-3, 3)), ("isnan", 1, F, (-3, 3)),
    ("isinf", 1, F, (-3, 3)), ("isfinite", 1, F, (-3, 3)),
    ("logical_not", 1, FI, (-2, 2)), ("conj", 1, FC, (-3, 3)),
    ("real", 1, FC, (-3, 3)), ("imag", 1, FC, (-3, 3)),
    ("angle", 1, FC, (-3, 3)), ("deg2rad", 1, FI, (-360, 360)),
    ("radians", 1, F, (-360, 360)), ("rad2deg", 1, FI, (-4, 4)),
    ("degrees", 1, F, (-4, 4)),
    ("arctan2", 2, F, (-3, 3)), ("hypot", 2, F, (-3, 3)),
    ("copysign", 2, F, (-3, 3)), ("fmod", 2, FI, (1, 5)),
    ("power", 2, F, (0.5, 2)), ("maximum", 2, FI, (-3, 3)),
    ("minimum", 2, FI, (-3, 3)), ("add", 2, FIC, (-3, 3)),
    ("subtract", 2, FIC, (-3, 3)), ("multiply", 2, FIC, (-3, 3)),
    ("divide", 2, FI, (1, 5)), ("true_divide", 2, FI, (1, 5)),
    ("floor_divide", 2, FI, (1, 5)), ("remainder", 2, FI, (1, 5)),
    ("mod", 2, FI, (1, 5)), ("less", 2, FI, (-3, 3)),
    ("greater_equal", 2, FI, (-3, 3)), ("equal", 2, FI, (-2, 2)),
    ("logical_and", 2, FI, (-1, 2)), ("logical_xor", 2, FI, (-1, 2)),
    ("cbrt", 1, FI, (-8, 8)), ("arcsinh", 1, F, (-3, 3)),
    ("arccosh", 1, F, (1, 4)), ("arctanh", 1, F, (-0.9, 0.9)),
    ("sign", 1, FI, (-3, 3)), ("fmax", 2, FI, (-3, 3)),
    ("fmin", 2, FI, (-3, 3)), ("heaviside", 2, F, (-1, 1)),
    ("logaddexp", 2, F, (-30, 30)), ("reciprocal", 1, F, (0.5, 3)),
]


@pytest.fixture(scope="module")
def mod():
    text = "import numpy as np\nimport asc\n"
    for name, n, _, _ in TABLE:
        args = "a" if n == 1 else "a, b"
        text += ("\n@asc.kernel\ndef k_%s(%s):\n    return np.%s(%s)\n"
                 % (name, args, name, args))
        text += ("\n@asc.kernel\ndef v_%s(%s):\n    return np.%s(%s)\n"
                 % (name, args, name,
                    "a[::2, ::-1]" if n == 1 else "a[::2, ::-1], b[::2, ::-1]"))
    return asc.compile(text)


def operand(rng, dt, lo, hi):
    x = rng.uniform(lo, hi, size=(6, 5))
    if dt == "int64":
        return np.round(x).astype(np.int64)
    if dt == "complex128":
        return x + 1j * rng.uniform(lo, hi, size=(6, 5))
    return x.astype(dt)


@pytest.mark.parametrize("name, n, dts, rng_",
                         TABLE, ids=[t[0] for t in TABLE])
def test_ufunc_on_arrays(mod, name, n, dts, rng_):
    rng = np.random.default_rng(len(name))
    for dt in dts:
        ops = [operand(rng, dt, *rng_) for _ in range(n)]
        for kern, view in (("k_", lambda x: x),
                           ("v_", lambda x: x[::2, ::-1])):
            if kern == "v_" and dt != dts[0]:
                continue    # views in one dtype: each pair is a compile
            got = np.asarray(getattr(mod, kern + name)(*ops))
            want = np.asarray(getattr(np, name)(*[view(o) for o in ops]))
            assert got.shape == want.shape, (name, dt)
            assert got.dtype == want.dtype, (name, dt, got.dtype, want.dtype)
            if want.dtype.kind in "biu":
                np.testing.assert_array_equal(got, want, err_msg=name)
            else:
                np.testing.assert_allclose(
                    got, want, rtol=2e-6 if want.dtype.itemsize <= 8 and
                    want.dtype.kind == "f" and want.dtype == np.float32
                    else 1e-13, atol=1e-6, equal_nan=True, err_msg=name)
