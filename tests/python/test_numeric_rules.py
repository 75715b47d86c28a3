"""Numeric semantics of kernel code against numpy 2 (docs/types.md,
docs/arrays.md): Python ints that meet narrower integer dtypes (a
compile error for a literal, numpy's OverflowError at run time for a
value computed then), comparisons with Python ints by value, np.clip,
var/std with a large ddof, bool arrays, uint64 with signed integers in
bit operations, np.fmod of integers, stores into 0-d arrays and complex
division."""
import re
import warnings

import numpy as np
import pytest

import asc


def kernel(body, params="a", ret=True):
    """A module with kernel k(params) whose body is the given lines."""
    lines = body.split("\n")
    if ret:
        lines[-1] = "return " + lines[-1]
    src = ("import numpy as np\nimport asc\n\n@asc.kernel\ndef k(%s):\n" %
           params + "".join("    %s\n" % ln for ln in lines))
    return asc.compile(src).k


def numpy_run(body, params, args, ret=True):
    """The same body run by Python on numpy: its value or the exception."""
    lines = body.split("\n")
    if ret:
        lines[-1] = "return " + lines[-1]
    g = {"np": np}
    exec("def k(%s):\n" % params.replace(": int", "") +
         "".join("    %s\n" % ln for ln in lines), g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return g["k"](*args)


def used(expr, names, values):
    """The parameters of names that expr uses, and their values (an
    unused parameter would be typed a scalar)."""
    keep = [k for k, n in enumerate(names.split(", "))
            if re.search(r"\b%s\b" % n, expr)]
    return (", ".join(names.split(", ")[k] for k in keep),
            [values[k] for k in keep])


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


U8 = np.array([0, 1, 2, 200, 255], np.uint8)
I8 = np.array([-128, -1, 0, 1, 127], np.int8)

# Every place a Python int meets an array's integer dtype (docs/types.md).
# numpy raises OverflowError for a Python int the dtype cannot hold.
FORMS = [
    "a + {v}", "{v} + a", "a - {v}", "a * {v}", "a // {v}", "a % {v}",
    "a ** {v}", "a & {v}", "a | {v}", "a << {v}",
    "np.maximum(a, {v})", "np.minimum({v}, a)", "np.fmod(a, {v})",
    "np.full_like(a, {v})", "np.uint8({v}) + a",
]
STMTS = ["a += {v}\na", "a[:] = {v}\na", "a[1:] -= {v}\na",
         "a[0] = {v}\na", "a.fill({v})\na"]


@pytest.mark.parametrize("form", FORMS + STMTS)
@pytest.mark.parametrize("v", [256, -1])
def test_literal_out_of_range_is_a_compile_error(form, v):
    body = form.format(v="(%d)" % v)
    with pytest.raises(OverflowError,
                       match=f"Python integer {v} out of bounds for uint8"):
        numpy_run(body, "a", [U8.copy()])
    # (a ** -1 meets the negative exponent's error first)
    with pytest.raises(asc.CompileError,
                       match=f"integer literal {v} does not fit in uint8|"
                             "integer power with a negative exponent"):
        kernel(body)(U8.copy())  # compiled at the first call


@pytest.mark.parametrize("form", FORMS + STMTS)
def test_literal_in_range_matches_numpy(form):
    body = form.format(v="3")
    same(kernel(body)(U8.copy()), numpy_run(body, "a", [U8.copy()]))


def test_module_constant_out_of_range():
    src = ("import asc\nLIMIT = 300\n\n@asc.kernel\ndef k(a):\n"
           "    a[:] = a + LIMIT\n")
    with pytest.raises(asc.CompileError,
                       match="integer constant LIMIT = 300 does not fit in "
                             "uint8"):
        asc.compile(src).k(U8.copy())


@pytest.mark.parametrize("form", FORMS + STMTS)
@pytest.mark.parametrize("n", [3, 256, -1, 2 ** 40])
def test_python_int_at_run_time(form, n):
    """A Python int parameter (or an expression of it) is checked when the
    kernel runs: numpy's OverflowError and message, or numpy's values."""
    body = form.format(v="(n - 1)" if form.startswith("np.full") else "n")
    k = kernel(body, "a, n: int")
    try:
        want = numpy_run(body, "a, n", [U8.copy(), n])
    except OverflowError as e:
        with pytest.raises(OverflowError, match=str(e)):
            k(U8.copy(), n)
        return
    same(k(U8.copy(), n), want)


@pytest.mark.parametrize("n", [5, 300, -1])
def test_python_int_in_scalar_code(n):
    """Scalar code follows the same rule (np.uint8(x) + n raises)."""
    body = ("for i in range(a.shape[0]):\n"
            "    a[i] = a[i] + (n - 1)\n"
            "a")
    k = kernel(body, "a, n: int")
    if 0 <= n - 1 <= 255:
        same(k(U8[:3].copy(), n), U8[:3] + np.uint8(n - 1))
    else:
        with pytest.raises(OverflowError,
                           match=f"Python integer {n - 1} out of bounds for "
                                 "uint8"):
            k(U8[:3].copy(), n)


def test_int_of_a_float_is_a_python_int():
    """int(x) is a Python int: past int32 it raises numpy's OverflowError
    instead of the float-to-int conversion's."""
    body = "for i in range(a.shape[0]):\n    a[i] = a[i] + int(x)\na"
    k = kernel(body, "a, x: float")
    same(k(np.array([1, 2], np.int32), 2.5), np.array([3, 4], np.int32))
    with pytest.raises(OverflowError,
                       match="Python integer 3000000000 out of bounds for "
                             "int32"):
        k(np.array([1, 2], np.int32), 3e9)


@pytest.mark.parametrize("expr", [
    "a < 300", "a <= -1", "a == -1", "a != 256", "a > -1", "a >= 2 ** 64 - 1",
    "a < 2 ** 63", "b8 < 200", "b8 > -200", "b8 == 128", "300 > a",
    "w > -1", "w == -1", "w < 2 ** 63", "q < 2 ** 63", "q == 2 ** 63",
    "w > q", "w == q", "q >= w",
])
def test_compare_with_python_ints_by_value(expr):
    """numpy 2 compares a Python int with any integer dtype by value, and
    int64 with uint64 exactly (their promoted type is a float)."""
    w = np.array([0, 2 ** 63, 2 ** 64 - 1, 5], np.uint64)
    q = np.array([0, 2 ** 63 - 1, -1, 5], np.int64)
    names, args = used(expr, "a, b8, w, q", [U8[:4], I8[:4], w, q])
    same(kernel(expr, names)(*args), numpy_run(expr, names, args))


@pytest.mark.parametrize("n", [5, 300, -1, -2 ** 63, 2 ** 63 - 1])
def test_compare_with_python_int_at_run_time(n):
    k = kernel("(a < n, a == n, w >= n, w > n, w == n, q < n)",
               "a, w, q, n: int")
    w = np.array([0, 2 ** 63, 2 ** 64 - 1, 5], np.uint64)
    q = np.array([0, 2 ** 63 - 1, -1, 5], np.int64)
    for got, want in zip(k(U8[:4], w, q, n),
                         (U8[:4] < n, U8[:4] == n, w >= n, w > n, w == n,
                          q < n)):
        same(got, want)


def test_compare_in_scalar_code():
    body = ("s = 0\n"
            "for i in range(a.shape[0]):\n"
            "    if a[i] < 300 and a[i] != -1 and w[i] > -1:\n"
            "        s += 1\n"
            "s")
    assert kernel(body, "a, w")(U8[:3], np.arange(3, dtype=np.uint64)) == 3


@pytest.mark.parametrize("lo, hi", [(-1, 10), (-5, 300), (2, 2 ** 40),
                                    (-2 ** 40, 1), (5, 1), (0, 0)])
def test_clip_bounds_outside_the_dtype(lo, hi):
    """numpy 2: a Python int bound below (or above) the dtype's range
    bounds nothing; one past the other end raises."""
    for kw in [dict(params="a"), dict(params="a, lo: int, hi: int")]:
        if kw["params"] == "a":
            body, args = "np.clip(a, %d, %d)" % (lo, hi), [U8]
        else:
            body, args = "np.clip(a, lo, hi)", [U8, lo, hi]
        same(kernel(body, kw["params"])(*args),
             numpy_run(body, kw["params"], args))


@pytest.mark.parametrize("lo, hi, bad", [(300, 400, 300), (2, -1, -1),
                                         (-5, -1, -1), (256, 1, 256)])
def test_clip_bounds_past_the_dtype_raise(lo, hi, bad):
    msg = f"Python integer {bad} out of bounds for uint8"
    with pytest.raises(OverflowError, match=msg):
        numpy_run("np.clip(a, lo, hi)", "a, lo, hi", [U8, lo, hi])
    with pytest.raises(OverflowError, match=msg):
        kernel("np.clip(a, lo, hi)", "a, lo: int, hi: int")(U8, lo, hi)
    with pytest.raises(asc.CompileError,
                       match=f"integer literal {bad} does not fit in uint8"):
        kernel("np.clip(a, %d, %d)" % (lo, hi))(U8)


def test_clip_bound_past_int64_keeps_the_dtype():
    """A literal past int64 (typed uint64 elsewhere) bounding an int64
    array bounds nothing and leaves int64, as numpy 2 (it gave float64;
    found by tests/tools/array_semantics_fuzz.py, seed 2002)."""
    a = np.array([1, -5, 7, 2**62, -2**63], dtype=np.int64)
    for body in ["np.clip(a, 5, 9223372036854775808)",
                 "np.clip(a, -3, 18446744073709551615)",
                 "np.clip(a, 5, 9223372036854775808).max(axis=0, keepdims=True)"]:
        same(kernel(body)(a), numpy_run(body, "a", [a]))


@pytest.mark.parametrize("body, msg", [
    ("a * 9223372036854775808", "integer literal 9223372036854775808 does not fit in int64"),
    ("9223372036854775808 - a", "integer literal 9223372036854775808 does not fit in int64"),
    ("np.clip(a, -9223372036854775809, 5)", "integer literal too large"),
    ("a < -9223372036854775809", "integer literal too large"),
    ("a + (-9223372036854775809)", "integer literal too large"),
])
def test_literals_past_int64_with_signed_arrays_are_errors(body, msg):
    """numpy raises OverflowError for a Python int past int64 meeting an
    int64 array; kernels made it float64 (a * 2**63) or wrapped
    -9223372036854775809 to 2**63 - 1 (np.clip(a, -2**63 - 1, 5) was 5
    everywhere, a < -2**63 - 1 True): found by array_semantics_fuzz
    seeds 70001 and 70002."""
    a = np.array([1, -5, 7], dtype=np.int64)
    if "too large" not in msg:
        with pytest.raises(OverflowError):
            numpy_run(body, "a", [a])
    # else numpy takes it (np.clip ignores the bound, a < it is False):
    # a kernel holds no integer outside int64 and uint64, and says so
    # rather than computing with a wrapped value
    with pytest.raises(asc.CompileError, match=msg):
        kernel(body)(a)


def test_literal_past_int64_with_uint64_and_float_arrays():
    u = np.array([1, 2], dtype=np.uint64)
    for body, x in [("a + 9223372036854775808", u), ("a * 9223372036854775808", u.astype(float))]:
        same(kernel(body)(x), numpy_run(body, "a", [x]))


def test_clip_is_minimum_of_maximum():
    """np.clip(a, lo, hi) with lo > hi is hi everywhere; a NaN value or
    bound gives NaN (numpy's minimum(maximum(a, lo), hi))."""
    a = np.array([0.0, 3.0, 7.0, np.nan, -np.inf])
    for lo, hi in [(5.0, 1.0), (1.0, 5.0), (np.nan, 5.0), (1.0, np.nan)]:
        k = kernel("np.clip(a, lo, hi)", "a, lo: float, hi: float")
        same(k(a, lo, hi), np.clip(a, lo, hi))
    body = ("out = np.empty_like(a)\n"
            "for i in range(a.shape[0]):\n"
            "    out[i] = np.clip(a[i], 5.0, 1.0)\n"
            "out")
    same(kernel(body)(a), np.clip(a, 5.0, 1.0))


@pytest.mark.parametrize("x", [True, 2.5, np.inf, np.nan, 3, 1 + 2j])
def test_var_std_of_one_number(x):
    """var and std of a 0-d argument (read as its number) are numpy's:
    0 with ddof=0 (nan for nan or inf), nan with ddof >= 1 (0 / 0); they
    were 0.0 always (found by array_semantics_fuzz seed 80001)."""
    a = np.array(x)
    body = "(a.var(ddof=1), np.var(a), np.std(a, ddof=1), np.std(a), a.var(ddof=2))"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for g, w in zip(kernel(body)(a), numpy_run(body, "a", [a])):
            same(g, w)


@pytest.mark.parametrize("ddof", [0, 2, 3, 4, 10])
def test_var_std_with_ddof_past_the_size(ddof):
    """numpy divides by max(n - ddof, 0): inf, or nan for a zero sum of
    squares, where kernels divided by a negative count."""
    x = np.array([1.0, 2.0, 4.0])
    c = np.full(3, 2.0)
    m = np.arange(6.0).reshape(2, 3)
    k = kernel("(np.var(x, ddof=%d), np.std(x, ddof=%d), np.var(c, ddof=%d),"
               " x.std(ddof=%d))" % ((ddof,) * 4), "x, c")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = (np.var(x, ddof=ddof), np.std(x, ddof=ddof),
                np.var(c, ddof=ddof), x.std(ddof=ddof))
        want_axis = np.var(m, axis=1, ddof=ddof)
    for got, w in zip(k(x, c), want):
        np.testing.assert_allclose(got, w, rtol=1e-15)
    out = np.zeros(2)
    kernel("out[:] = np.var(m, axis=1, ddof=%d)" % ddof, "m, out",
           ret=False)(m, out)
    np.testing.assert_allclose(out, want_axis, rtol=1e-15)


B = np.array([True, False, True, False])
C = np.array([True, True, False, False])
T = np.array([True, True, True, True])


@pytest.mark.parametrize("expr", [
    "b + c", "b * c", "b / t", "b // t", "b % t", "b ** c", "b << c",
    "b >> c", "b & c", "b | c", "b ^ c", "~b", "abs(b)", "np.abs(b)",
    "np.absolute(b)", "np.floor(b)", "np.ceil(b)", "np.trunc(b)",
    "np.fmod(b, t)", "b + True", "c * True", "b + 1", "b * 2.5",
    "np.where(c, b, t)", "np.maximum(b, c)", "np.minimum(b, c)",
    "np.sum(b)", "np.prod(c)", "b.mean()", "(a > 1) + (a < 3)",
    "np.add(b, c)", "np.multiply(b, c)", "b + c + c",
])
def test_bool_arrays_follow_numpy(expr):
    a = np.array([0.0, 2.0, 4.0, 1.0])
    names, args = used(expr, "b, c, t, a", [B, C, T, a])
    same(kernel(expr, names)(*args), numpy_run(expr, names, args))


def test_bool_arrays_in_place():
    b, c, d = B.copy(), C.copy(), B.copy()
    kernel("b += c\nd *= c", "b, c, d", ret=False)(b, c, d)
    same(b, B + C)
    same(d, B * C)


def test_bool_scalars_keep_pythons_arithmetic():
    body = ("s = b[0] + b[2]\n"
            "t = -b[0]\n"
            "(s, t, abs(b[0]))")
    assert kernel(body, "b")(B) == (2, -1, 1)


def test_numpys_functions_of_a_bool_scalar_keep_bool():
    """np.abs, np.floor, np.ceil, np.trunc of a bool scalar (a 0-d array
    argument reads as one) are numpy's: bool; Python's abs and math.floor
    keep int (found by array_semantics_fuzz seed 3001: np.abs of a
    comparison of 0-d float16 arrays was int64)."""
    x = np.array(1.0, dtype=np.float16)
    for expr in ["np.abs(np.fmod(x, 2.0) != x)", "np.absolute(x > 0.5)",
                 "np.floor(x > 0.5)", "np.ceil(x > 2.0)", "np.trunc(x > 0.5)"]:
        got = kernel(expr, "x")(x)
        assert type(got) is np.bool_, (expr, type(got))
        assert got == numpy_run(expr, "x", [x])
    assert kernel("(abs(x > 0.5), math.floor(x > 0.5))", "x")(x) == (1, 1)


@pytest.mark.parametrize("expr, numpy_error", [
    ("b - c", "numpy boolean subtract, the `-` operator, is not supported"),
    ("-b", "The numpy boolean negative, the `-` operator, is not supported"),
    ("-(a > 1)", "The numpy boolean negative, the `-` operator, is not "
                 "supported"),
    ("np.negative(b)", "The numpy boolean negative"),
    ("np.subtract(b, True)", "numpy boolean subtract"),
    ("+b", "ufunc 'positive' did not contain a loop"),
])
def test_bool_array_errors(expr, numpy_error):
    names, args = used(expr, "b, c, a",
                       [B, C, np.array([0.0, 2.0, 4.0, 1.0])])
    with pytest.raises(TypeError, match=numpy_error.replace("(", r"\(")):
        numpy_run(expr, names, args)
    with pytest.raises(asc.CompileError,
                       match="numpy boolean|no unary \\+") as e:
        kernel(expr, names)(*args)
    assert ":6:" in str(e.value)  # the line of the expression


@pytest.mark.parametrize("stmt", ["b -= c", "b += 1", "b *= 2"])
def test_bool_array_in_place_errors(stmt):
    names, args = used(stmt, "b, c", [B.copy(), C])
    with pytest.raises(TypeError):
        numpy_run(stmt, names, args, ret=False)
    with pytest.raises(asc.CompileError,
                       match="numpy boolean subtract|same_kind"):
        kernel(stmt, names, ret=False)(*args)


@pytest.mark.parametrize("op", ["&", "|", "^", "<<", ">>"])
@pytest.mark.parametrize("scalar", [False, True])
def test_uint64_with_signed_in_bit_operations(op, scalar):
    """No integer type holds uint64 and int64: numpy raises TypeError;
    kernels gave an internal compiler error."""
    w = np.array([1, 2], np.uint64)
    q = np.array([1, 1], np.int64)
    with pytest.raises(TypeError, match="not supported for the input types"):
        numpy_run("w %s q" % op, "w, q", [w, q])
    expr = "w[0] %s q[0]" % op if scalar else "w %s q" % op
    with pytest.raises(asc.CompileError,
                       match=re.escape("unsupported operand types for %s: "
                                       "uint64 and int64 (no integer type "
                                       "holds both" % op)):
        kernel(expr, "w, q")(w, q)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8,
                                   np.uint32])
def test_fmod_of_integers(dtype):
    """np.fmod of integers: their dtype, the dividend's sign, 0 for a zero
    divisor (numpy warns), MIN % -1 == 0."""
    info = np.iinfo(dtype)
    x = np.array([7, info.max, info.min, 0, 5, 9, info.min, 6], dtype)
    if info.min < 0:
        y = np.array([2, 3, -1, 4, -3, 0, 7, -4], dtype)
        x[0] = -7
    else:
        y = np.array([2, 3, 1, 4, 3, 0, 7, 4], dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.fmod(x, y)
        want_lit = np.fmod(x, 3)
    same(kernel("np.fmod(x, y)", "x, y")(x, y), want)
    same(kernel("np.fmod(x, 3)", "x")(x), want_lit)
    body = ("out = np.empty_like(x)\n"
            "for i in range(x.shape[0]):\n"
            "    out[i] = np.fmod(x[i], y[i])\n"
            "out")
    same(kernel(body, "x, y")(x, y), want)


def test_math_fmod_stays_pythons():
    """math.fmod takes floats, as in Python (ValueError for 0)."""
    src = ("import math\nimport asc\n\n@asc.kernel\ndef k(x, y):\n"
           "    return math.fmod(x[0], y[0])\n")
    k = asc.compile(src).k
    r = k(np.array([7], np.int32), np.array([-2], np.int32))
    assert r == 1.0 and isinstance(r, np.float64)
    with pytest.raises(ValueError, match="math domain error"):
        k(np.array([7], np.int32), np.array([0], np.int32))


def test_store_into_a_zero_d_array():
    """A 0-d array parameter is stored into, as numpy does."""
    out = np.array(7.0)
    kernel("out[()] = x\nout[...] += x * 2\nout[()] *= 3",
           "out, x: float", ret=False)(out, 2.5)
    assert out == ((2.5 + 5.0) * 3)
    out = np.array(7, np.int32)
    r = kernel("out[...] = out[()] + 1\nout[()]", "out")(out)
    assert out == 8 and r == 8
    out = np.array(1.0)
    kernel("out[...] = a.sum()", "out, a", ret=False)(out, np.arange(4.0))
    assert out == 6.0


SPECIAL = [0.0, -0.0, 1.0, -2.5, 1e-310, 1e308, np.inf, -np.inf, np.nan]


def parts_equal(x, y):
    x, y = np.asarray(x), np.asarray(y)
    return (((x.real == y.real) | (np.isnan(x.real) & np.isnan(y.real))) &
            ((x.imag == y.imag) | (np.isnan(x.imag) & np.isnan(y.imag))))


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_division_of_arrays_is_numpys(dtype):
    """Whole-array division gives numpy's values, special ones included
    ((1+1j) / complex(inf, inf) is nan+nanj, not C99's 0), and numpy's bits
    for ordinary ones."""
    zs = [complex(x, y) for x in SPECIAL for y in SPECIAL]
    with warnings.catch_warnings():  # 1e308 is inf in complex64
        warnings.simplefilter("ignore")
        a = np.array([p for p in zs for _ in zs]).astype(dtype)
        b = np.array([q for _ in zs for q in zs]).astype(dtype)
    rng = np.random.default_rng(3)
    n = 5000
    a = np.concatenate([a, (rng.standard_normal(n) +
                            1j * rng.standard_normal(n)).astype(dtype)])
    b = np.concatenate([b, (rng.standard_normal(n) +
                            1j * rng.standard_normal(n)).astype(dtype)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = a / b
    out = np.zeros_like(a)
    kernel("out[:] = a / b", "a, b, out", ret=False)(a, b, out)
    assert parts_equal(out, want).all()
    ok = ~np.isnan(want)
    assert out[ok].tobytes() == want[ok].tobytes()
    c = a.copy()  # in place too (it divided the real parts only)
    kernel("c /= b", "c, b", ret=False)(c, b)
    assert parts_equal(c, want).all()
    c, m = a.copy(), np.ones(len(a), bool)
    kernel("c[m] /= b[m]", "c, b, m: asc.Tensor[asc.bool_, 1]",
           ret=False)(c, b, m)
    assert parts_equal(c, want).all()


def test_complex_division_of_scalars_is_pythons():
    """Scalar code divides as CPython does (its bits), with nan+nanj for an
    infinite divisor; a zero divisor gives numpy's infinities (Python
    raises ZeroDivisionError)."""
    zs = [complex(x, y) for x in SPECIAL for y in SPECIAL]
    rng = np.random.default_rng(4)
    extra = list(rng.standard_normal(2000) + 1j * rng.standard_normal(2000))
    a = np.array([p for p in zs for _ in zs] + extra)
    b = np.array([q for _ in zs for q in zs] + extra[::-1])
    body = ("out = np.empty_like(a)\n"
            "for i in range(a.shape[0]):\n"
            "    out[i] = a[i] / b[i]\n"
            "out")
    got = kernel(body, "a, b")(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_numpy = a / b
    for k in range(len(a)):
        if b[k] == 0:
            assert parts_equal(got[k], by_numpy[k]), (a[k], b[k])
            continue
        want = complex(a[k]) / complex(b[k])
        assert parts_equal(got[k], want), (a[k], b[k], got[k], want)
        if not np.isnan(want):
            assert np.complex128(want).tobytes() == got[k].tobytes()
    assert np.isnan(kernel("(1 + 1j) / complex(x, x)", "x: float")(np.inf))
    body = ("out = a.copy()\n"
            "for i in range(a.shape[0]):\n"
            "    z = out[i]\n"
            "    z /= b[i]\n"
            "    out[i] = z\n"
            "out")
    got = kernel(body, "a, b")(a[-2000:], b[-2000:])
    assert got.tobytes() == np.array(
        [complex(x) / complex(y) for x, y in zip(a[-2000:], b[-2000:])]
    ).tobytes()


def test_complex_in_place_division():
    """z /= w divides complex numbers (it was typed float64, dividing the
    real parts only), in scalar code and in whole-array code."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal(8) + 1j * rng.standard_normal(8)
    b = rng.standard_normal(8) + 1j * rng.standard_normal(8)
    body = ("for i in range(c.shape[0]):\n"
            "    c[i] /= b[i]\n"
            "z = d[0]\n"
            "z /= b[0]\n"
            "d[0] = z\n"
            "e /= b")
    c, d, e = a.copy(), a.copy(), a.copy()
    kernel(body, "c, d, e, b", ret=False)(c, d, e, b)
    np.testing.assert_allclose(c, a / b, rtol=1e-15)
    np.testing.assert_allclose(d[0], a[0] / b[0], rtol=1e-15)
    same(e, a / b)
