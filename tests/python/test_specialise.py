"""Kernels typed by what is passed, and functions like Python functions
(docs/arrays.md, "Parameters typed by what is passed" and "Helpers like
Python functions"): an unannotated parameter the text reads as a number
takes an array when one is passed; @asc.func helpers, nested defs and
local lambdas return arrays; `import numpy as np` in a body; tuple
defaults."""
import numpy as np
import pytest

import asc


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# ------------------------------------------------- the argument's type wins

@asc.kernel
def gather_scale(x, idx, w):
    return x[idx] * w


def test_an_index_passed_as_an_int_array_gathers():
    """x[idx] with idx an int array is numpy's gather (idx was typed a
    number because the text never indexes it: 'expected a scalar, got a
    1-dimensional numpy.ndarray')."""
    x, w = rnd(50), rnd(20, seed=1)
    idx = np.random.default_rng(2).integers(0, 50, 20)
    np.testing.assert_array_equal(gather_scale(x, idx, w), x[idx] * w)
    # a number still works, and both specialisations stay usable
    assert gather_scale(x, 3, 2.0) == x[3] * 2.0
    np.testing.assert_array_equal(gather_scale(x, idx[:5], w[:5]),
                                  x[idx[:5]] * w[:5])


@asc.kernel
def shifted(u, s):
    v = np.zeros(u.shape)
    for i in range(u.shape[0]):
        v[i] = u[i] + 1.0
    return v + s


def test_a_number_parameter_given_an_array_is_an_array():
    u = rnd(6)
    np.testing.assert_array_equal(shifted(u, 0.5), u + 1.0 + 0.5)
    s = rnd(6, seed=3)
    np.testing.assert_array_equal(shifted(u, s), u + 1.0 + s)
    s2 = rnd(4, 6, seed=4)                   # broadcasting, as numpy's
    np.testing.assert_array_equal(shifted(u, s2), u + 1.0 + s2)


@asc.kernel
def scalar_use(out, s):
    for i in range(out.shape[0]):
        out[i] = s + 1.0


def test_an_operation_invalid_for_the_array_passed_is_a_compile_error():
    """An array for a parameter the text stores into one element is a
    compile error at that line that names the parameter's array type."""
    out = np.zeros(3)
    scalar_use(out, 2.0)
    assert list(out) == [3.0, 3.0, 3.0]
    with pytest.raises(asc.CompileError) as ei:
        scalar_use(out, np.ones(3))
    msg = str(ei.value)
    line = scalar_use.py_func.__code__.co_firstlineno + 3
    assert f"test_specialise.py:{line}:" in msg, msg
    assert "Tensor[float64, 1]" in msg, msg
    assert "compiled for the array passed for 's'" in msg, msg
    # the number specialisation is untouched by the failed one
    scalar_use(out, 4.0)
    assert list(out) == [5.0, 5.0, 5.0]


def test_annotated_scalars_keep_their_type():
    @asc.kernel
    def k(out, s: float):
        out[0] = s
    with pytest.raises(TypeError, match="expected a scalar"):
        k(np.zeros(1), np.ones(2))


# ------------------------------------------------------------- asc.Tensor

def test_a_bare_tensor_annotation_is_any_array():
    m = asc.compile("import asc\n@asc.kernel\n"
                    "def k(a: asc.Tensor, b):\n    return a * 2 + b\n")
    (p, _) = m.k.params
    assert p["kind"] == "tensor" and p["generic"] and p["ndim"] == -1
    a = rnd(3, 2)
    np.testing.assert_array_equal(m.k(a, 1.0), a * 2 + 1.0)
    ai = np.arange(4, dtype=np.int32)
    np.testing.assert_array_equal(m.k(ai, 1), ai * 2 + 1)


def test_compiled_text_is_typed_by_what_is_passed(tmp_path):
    """asc.compile text (and a kernel file) get the decorated kernels'
    rule: an array for a parameter the text reads as a number runs a
    variant compiled from the text with it taken as an array (it was the
    TypeError 'expected a scalar, got a 1-dimensional numpy.ndarray')."""
    src = ("import asc\n"
           "@asc.kernel\n"
           "def k(x, idx, w):\n"
           "    return x[idx] * w\n"
           "@asc.kernel\n"
           "def store(out, s):\n"
           "    for i in range(out.shape[0]):\n"
           "        out[i] = s + 1.0\n")
    x, w = rnd(30), rnd(8, seed=1)
    idx = np.random.default_rng(2).integers(0, 30, 8)
    f = tmp_path / "kern.py"
    f.write_text(src)
    for m in (asc.compile(src), asc.compile(str(f))):
        assert m.k(x, 3, 2.0) == x[3] * 2.0
        np.testing.assert_array_equal(m.k(x, idx, w), x[idx] * w)
        np.testing.assert_array_equal(m.k(x, idx, 2.0), x[idx] * 2.0)
        assert m.k(x, 4, 0.5) == x[4] * 0.5     # the base is untouched
        # an operation the array does not allow: its line, in the text
        out = np.zeros(3)
        with pytest.raises(asc.CompileError) as ei:
            m.store(out, np.ones(3))
        assert ":8:" in str(ei.value) and "Tensor[float64, 1]" in str(ei.value)
        m.store(out, 1.0)
        assert list(out) == [2.0, 2.0, 2.0]
    # the variant outlives the module object that made it
    k = asc.compile(src).k
    np.testing.assert_array_equal(k(x, idx, w), x[idx] * w)


# ------------------------------------------- locals of another layout

@asc.kernel
def rebind_layout(a, n):
    datacol = a[:, 0]
    s = datacol.sum()
    datacol = np.zeros(n)
    datacol[0] = s
    return datacol


def test_a_local_rebound_from_a_view_to_a_new_array():
    a = rnd(5, 3)
    ref = np.zeros(4)
    ref[0] = a[:, 0].sum()
    np.testing.assert_array_equal(rebind_layout(a, 4), ref)


@asc.kernel
def rebind_dtype(a):
    x = a * 2.0
    x = x.astype(np.float32)
    s = x.sum()
    x = 3
    return s + x


def test_a_local_rebound_to_another_dtype():
    """x = x.astype(np.float32) rebinds x to a float32 array ('cannot
    assign Tensor[float32, 1] to 'x', which has type Tensor[float64, 1]'),
    and then to an int, as Python allows."""
    a = rnd(8)
    x = (a * 2.0).astype(np.float32)
    ref = x.sum() + 3
    got = rebind_dtype(a)
    assert got == ref and np.asarray(got).dtype == np.asarray(ref).dtype


def test_a_rebinding_inside_a_loop_keeps_one_type():
    """Only the function's own straight-line statements start a new
    variable; in a loop the name keeps one dtype and rank (a view and a
    new array of them merge: test_rebind.py), and another rank is an
    error naming both types and both lines."""
    src = ("import numpy as np\nimport asc\n@asc.kernel\ndef k(a, n):\n"
           "    x = a[:, 0]\n    for i in range(n):\n"
           "        x = np.zeros((3, 3))\n    return x\n")
    with pytest.raises(asc.CompileError, match=r"<string>:7:"):
        asc.compile(src).k(np.ones((3, 2)), 2)


# ------------------------------------------------ helpers returning arrays

@asc.func
def relu(x):
    return np.maximum(x, 0)


@asc.kernel
def mlp(a, w):
    return relu(a @ w)


@asc.kernel
def mlp_sum(a, w, b):
    h = relu(a @ w) + b
    return h.sum() + relu(b).sum()


def test_a_helper_returns_an_array():
    a, w, b = rnd(4, 3), rnd(3, 5, seed=1), rnd(5, seed=2)
    np.testing.assert_allclose(mlp(a, w), np.maximum(a @ w, 0), rtol=1e-12)
    ref = (np.maximum(a @ w, 0) + b).sum() + np.maximum(b, 0).sum()
    np.testing.assert_allclose(mlp_sum(a, w, b), ref, rtol=1e-12)


@asc.func
def scaled_copy(x, s):
    y = x * s
    y[0] = -1.0
    return y


@asc.kernel
def keeps_argument(a):
    b = scaled_copy(a, 2.0)
    c = scaled_copy(a, 3.0)
    return b + c


def test_a_helper_array_is_its_own():
    """Each call gives a new array, and the array passed is not touched."""
    a = rnd(6)
    keep = a.copy()
    ref_b, ref_c = a * 2.0, a * 3.0
    ref_b[0] = ref_c[0] = -1.0
    np.testing.assert_array_equal(keeps_argument(a), ref_b + ref_c)
    np.testing.assert_array_equal(a, keep)


# ------------------------------------------- nested defs and local lambdas

@asc.kernel
def nested(a):
    def act(x):
        return np.tanh(x) * 2.0

    dact = lambda x: 1 - np.tanh(x) ** 2      # noqa: E731
    return act(a) + dact(a)


def test_nested_defs_and_lambdas_are_helpers():
    a = rnd(7)
    np.testing.assert_allclose(nested(a),
                               np.tanh(a) * 2.0 + (1 - np.tanh(a) ** 2),
                               rtol=1e-13)


def test_a_nested_def_that_reads_an_outer_local_is_a_closure():
    """It was "nested function 'f' reads 'n' of the function around it";
    closures: test_rebind.py::test_closures_read_the_locals_around_them."""
    src = ("import asc\n@asc.kernel\ndef k(a, out):\n    n = 2.0\n"
           "    def f(x):\n        return x * n\n"
           "    for i in range(a.shape[0]):\n        out[i] = f(a[i])\n")
    out = np.ones(2)
    asc.compile(src).k(np.arange(2.0), out)
    np.testing.assert_array_equal(out, [0.0, 2.0])


# -------------------------------------------------------- import in a body

@asc.kernel
def imports_inside(a):
    import numpy as xp
    import math
    return xp.sqrt(a) + math.pi


def test_import_numpy_inside_a_body():
    a = np.arange(5.0)
    np.testing.assert_array_equal(imports_inside(a), np.sqrt(a) + np.pi)


# ---------------------------------------------------------- tuple defaults

@asc.kernel
def masked(a, mask=(1, 0, 1)):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * mask[i]
    return s


def test_a_tuple_default():
    a = np.array([1.0, 2.0, 4.0])
    assert masked(a) == 5.0
    assert masked(a, np.array([0, 1, 0])) == 2.0


@asc.kernel
def writes_default(a, mask=(1, 0, 1)):
    mask[0] = 2
    return a[0]


def test_a_tuple_default_is_read_only():
    with pytest.raises(ValueError, match="parameter .mask. is written.*read-only"):
        writes_default(np.ones(3))


# ---------------------------------------------- parameters never read

@asc.kernel
def sum_ignoring(a, unused, n_unused=0):
    return a.sum()


@asc.kernel
def scale_in_lambda(a, s, ignored):
    f = lambda v: v * s
    return f(a[0])


def test_a_parameter_the_kernel_never_reads_takes_anything():
    """As numba does, a parameter the kernel never reads takes any object
    (an array was 'expected a scalar, got a 1-dimensional
    numpy.ndarray'); a number keeps its type (an ahead-of-time
    signature names it), anything else is passed as the integer 0."""
    a = rnd(8)
    for v in (rnd(3), rnd(2, 2).astype(np.float32), 7, 2.5, True, None,
              "text", [1, 2], {"k": 1}, object()):
        assert sum_ignoring(a, v) == a.sum()
        assert sum_ignoring(a, v, n_unused=v) == a.sum()
    # a parameter read only inside a lambda is read: it keeps its value
    for v in (rnd(4), None):
        assert scale_in_lambda(a, 3.0, v) == a[0] * 3.0
    with pytest.raises(TypeError, match="parameter 's'"):
        scale_in_lambda(a, None, 1)


def test_compiled_text_ignores_a_parameter_it_never_reads():
    m = asc.compile("import asc\n\n@asc.kernel\ndef g(a, unused):\n"
                    "    return a.sum()\n")
    a = rnd(5)
    for v in (rnd(3), None, 4):
        assert m.g(a, v) == a.sum()


def test_an_unread_parameter_keeps_an_ahead_of_time_signature(tmp_path):
    """A module compiled ahead of time keeps its signatures' types: with
    ascc's k(f64[1], f64), a float for the unread parameter finds that
    specialisation and an array there stays a TypeError."""
    import subprocess
    import sys
    src = tmp_path / "unread.py"
    src.write_text("import asc\n\n@asc.kernel\ndef k(a, unused):\n"
                   "    return a.sum()\n")
    so = tmp_path / "unread.so"
    import os
    env = dict(os.environ, PYTHONPATH=os.path.dirname(
        os.path.dirname(asc.__file__)))
    subprocess.run([sys.executable, "-m", "asc.ascc", "--signature",
                    "k(f64[1], f64)", str(src), "-o", str(so)], check=True,
                   env=env)
    k = asc.load_module(str(so)).k
    a = rnd(5)
    assert k(a, np.float64(2.5)) == a.sum()
    with pytest.raises(TypeError, match="parameter 'unused'"):
        k(a, rnd(3))
