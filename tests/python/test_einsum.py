"""np.einsum with a constant subscripts string (docs/arrays.md
"np.einsum"): the contractions that are matrix products (BLAS calls for
float32/float64), elementwise and outer products, the diagonal, its sum,
transposes and sums, explicit and implicit outputs, compared with numpy
in four dtypes and on views; numpy's errors for bad subscripts and
operands."""
import numpy as np
import pytest

import asc
from envvars import ascc_ir

FORMS = ["ij,jk->ik", "ij,j->i", "bij,bjk->bik", "ji,jk->ik", "ij,kj->ik",
         "ji,kj->ik", "ij,jk->ki", "j,ij->i", "j,jk->k", "ii->", "ii->i",
         "ij->ji", "ij->", "ij->i", "ij->j", "ijk->ki", "ijk->kji", "i,i->",
         "i,j->ij", "i,j->ji", "ij,ij->ij", "ij,ji->ij", "ij,ij->",
         "ij,ij->i", "ij,jk", "ij,ij", "ii", "ij", "ji", "i,i", " ij , jk -> ik "]
SIZES = {"i": 3, "j": 4, "k": 5, "b": 2}


def operands(form, rng, dt):
    ops = form.split("->")[0].replace(" ", "").split(",")
    out = []
    for o in ops:
        shape = (3, 3) if o == "ii" else tuple(SIZES[c] for c in o)
        if np.dtype(dt).kind == "i":
            x = rng.integers(-5, 6, size=shape).astype(dt)
        else:
            x = rng.standard_normal(shape)
            if np.dtype(dt).kind == "c":
                x = x + 1j * rng.standard_normal(shape)
            x = x.astype(dt)
        out.append(x)
    return out


@pytest.fixture(scope="module")
def mod():
    text = "import numpy as np\nimport asc\n"
    for n, f in enumerate(FORMS):
        nops = len(f.split("->")[0].split(","))
        args = ", ".join("x%d" % i for i in range(nops))
        text += ("\n@asc.kernel\ndef k%d(%s):\n    return np.einsum('%s', %s)\n"
                 % (n, args, f, args))
    text += """
@asc.kernel
def views(a, b):
    return np.einsum('ij,jk->ik', a[::2, ::-1], b.T), np.einsum('ii->i', a[1:4, 2:5])
"""
    return asc.compile(text)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int64,
                                np.complex128])
def test_forms_match_numpy(mod, dt):
    rng = np.random.default_rng(1)
    for n, f in enumerate(FORMS):
        ops = operands(f, rng, dt)
        got = np.asarray(getattr(mod, "k%d" % n)(*ops))
        want = np.asarray(np.einsum(f, *ops))
        assert got.shape == want.shape, f
        assert got.dtype.kind == want.dtype.kind, (f, got.dtype, want.dtype)
        if dt == np.int64:
            np.testing.assert_array_equal(got, want, err_msg=f)
        else:
            np.testing.assert_allclose(
                got, want, rtol=1e-4 if dt == np.float32 else 1e-12,
                atol=1e-4 if dt == np.float32 else 1e-12, err_msg=f)


def test_views(mod):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((8, 6))
    b = rng.standard_normal((5, 6))
    g1, g2 = mod.views(a, b)
    np.testing.assert_allclose(g1, np.einsum('ij,jk->ik', a[::2, ::-1], b.T))
    np.testing.assert_allclose(g2, np.einsum('ii->i', a[1:4, 2:5]))


def test_products_are_blas_calls(tmp_path):
    f = tmp_path / "k.py"
    f.write_text("import numpy as np\nimport asc\n\n@asc.kernel\n"
                 "def k(a, b):\n    return np.einsum('ji,kj->ik', a, b)\n")
    ir = ascc_ir(f, "k(f64[:, :], f64[:, :])")
    assert ir.count("= gemm ") == 1, ir


def compile_error(body):
    with pytest.raises(asc.CompileError) as e:
        asc.compile("import numpy as np\nimport asc\n\n@asc.kernel\n"
                    "def k(a, b):\n    return %s\n" % body)
    return str(e.value)


@pytest.mark.parametrize("body, msg", [
    ("np.einsum('i1,jk->ik', a, b)",
     "invalid subscript '1' in einstein sum subscripts string, subscripts "
     "must be letters"),
    ("np.einsum('ij,jk->iq', a, b)",
     "einstein sum subscripts string included output subscript 'q' which "
     "never appeared in an input"),
    ("np.einsum('ij,jk->ii', a, b)",
     "einstein sum subscripts string includes output subscript 'i' multiple "
     "times"),
    ("np.einsum('ij,jk,kl->il', a, b)",
     "fewer operands provided to einstein sum function than specified in "
     "the subscripts string"),
    ("np.einsum('ij->ij', a, b)",
     "more operands provided to einstein sum function than specified in "
     "the subscripts string"),
    ("np.einsum('...ij,jk->ik', a, b)", "ellipsis"),
    ("np.einsum('ij,jk->ijk', a, b)",
     "np.einsum('ij,jk->ijk') is not supported in kernels: kernels take one "
     "or two operands"),
])
def test_errors_are_numpys(body, msg):
    assert msg in compile_error(body)


def test_operand_axes_are_checked():
    m = asc.compile("import numpy as np\nimport asc\n\n@asc.kernel\n"
                    "def k(a, b):\n    return np.einsum('ij,jk->ik', a, b)\n")
    with pytest.raises(asc.CompileError) as e:
        m.k(np.ones(3), np.ones((3, 4)))
    assert "einstein sum subscripts string contains too many subscripts " \
        "for operand 0" in str(e.value)
    with pytest.raises(asc.CompileError) as e:
        m.k(np.ones((2, 3)), np.ones((2, 3, 4)))
    assert "operand has more dimensions than subscripts given in einstein " \
        "sum" in str(e.value)
    with pytest.raises(ValueError):
        np.einsum('ij,jk->ik', np.ones(3), np.ones((3, 4)))


def test_shape_errors():
    m = asc.compile("import numpy as np\nimport asc\n\n@asc.kernel\n"
                    "def tr(a):\n    return np.einsum('ii', a)\n\n"
                    "@asc.kernel\ndef mm(a, b):\n"
                    "    return np.einsum('ij,jk->ik', a, b)\n")
    with pytest.raises(ValueError) as e:
        m.tr(np.ones((3, 4)))
    assert "dimensions in operand 0 for collapsing index 'i' don't match " \
        "(3 != 4)" in str(e.value)
    with pytest.raises(ValueError):
        np.einsum('ii', np.ones((3, 4)))
    with pytest.raises(ValueError):
        m.mm(np.ones((3, 4)), np.ones((5, 2)))
