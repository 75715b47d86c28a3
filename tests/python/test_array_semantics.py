"""Reductions of broadcast expressions, slice steps near 2**63, np.cumsum's
signed zeros and the other array semantics found by
tests/tools/array_semantics_fuzz.py, each compared with numpy; and a
bounded, seeded run of that generator (docs/arrays.md)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import asc

KINDS = ["sum", "prod", "mean", "min", "max", "argmin", "argmax", "any", "all",
         "var", "std"]


def comp(text):
    """-O1: these tests check what libasc's passes make, not gcc's -O3."""
    return asc.compile(text, opt_level=1)


def _kernels():
    """Per reduction kind: 2-D along each axis (as a method, and as np.X
    with keepdims) and with no axis; 4-D along every axis."""
    out = ["import numpy as np", "import asc", ""]
    for r in KINDS:
        keep = "" if r.startswith("arg") else ", keepdims=True"
        out += [
            "@asc.kernel",
            f"def r2_{r}(a, b):",
            f"    return ((a + b).{r}(axis=0), (a + b).{r}(axis=1),",
            f"            np.{r}(a * b, axis=-1{keep}), np.{r}(b - a, axis=-2{keep}),",
            f"            np.{r}(a + b), (b * a).{r}())",
            "",
            "@asc.kernel",
            f"def r4_{r}(a, b):",
            "    return (" + ", ".join(
                f"np.{r}(a - b, axis={k}{keep if k % 2 else ''})" for k in range(-4, 4)) + ")",
            "",
        ]
    return "\n".join(out)


@pytest.fixture(scope="module")
def red():
    return comp(_kernels())


def _ref(r, x, **kw):
    return getattr(np, r)(x, **kw)


def _check(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(got, want)


# (a, b): the operand that broadcasts on either side, and both at once
PAIRS_2D = [((3, 1), (3, 3)), ((1, 3), (3, 3)), ((3, 3), (3, 1)), ((3, 3), (1, 3)),
            ((3, 1), (1, 4)), ((1, 4), (3, 1)), ((4,), (3, 4)), ((3, 4), (4,))]


@pytest.mark.parametrize("r", KINDS)
def test_reduction_along_an_axis_of_a_broadcast_expression(red, r):
    g = np.random.default_rng(7)
    for sa, sb in PAIRS_2D:
        a = g.integers(-9, 10, sa).astype(np.float64) * 10.0 ** np.arange(sa[-1])
        b = g.integers(-9, 10, sb).astype(np.float64)
        got = getattr(red, f"r2_{r}")(a, b)
        keep = {} if r.startswith("arg") else {"keepdims": True}
        want = (_ref(r, a + b, axis=0), _ref(r, a + b, axis=1),
                _ref(r, a * b, axis=-1, **keep), _ref(r, b - a, axis=-2, **keep))
        for x, y in zip(got[:4], want):
            _check(x, y)


@pytest.mark.parametrize("r", KINDS)
def test_reduction_of_rank_4_broadcasts_along_every_axis(red, r):
    g = np.random.default_rng(8)
    for sa, sb in [((3, 1, 4, 1), (1, 2, 1, 5)), ((1, 2, 1, 5), (3, 1, 4, 1)),
                   ((2, 1, 3), (4, 1, 1, 3))]:
        a = g.integers(-5, 6, sa).astype(np.float64)
        b = g.integers(-5, 6, sb).astype(np.float64)
        keep = {} if r.startswith("arg") else {"keepdims": True}
        got = getattr(red, f"r4_{r}")(a, b)
        for k, x in zip(range(-4, 4), got):
            _check(x, _ref(r, a - b, axis=k, **(keep if k % 2 else {})))


@pytest.mark.parametrize("r", KINDS)
def test_full_reduction_of_a_broadcast_expression(red, r):
    a = np.array([[1.0], [10.0], [100.0]])
    b = np.arange(9.0).reshape(3, 3) - 4
    for x, y in [(a, b), (b, a), (a.T, b), (b, a.T)]:
        got = getattr(red, f"r2_{r}")(x, y)
        _check(got[4], _ref(r, x + y))
        _check(got[5], _ref(r, y * x))


def test_the_issue_example():
    k = comp("import asc\n\n@asc.kernel\ndef f(a, b):\n"
                    "    return (a + b).sum(axis=1)\n").f
    a = np.array([[1.0], [10.0], [100.0]])
    b = np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(k(a, b), [6.0, 42.0, 321.0])
    np.testing.assert_array_equal(k(a.T, b), (a.T + b).sum(axis=1))


def test_large_broadcast_reduction_reads_inside_its_operands():
    """The (1, 3) operand was read with its own row stride: row i at
    element 3 * i, megabytes past its three elements (a crash)."""
    k = comp("import numpy as np\nimport asc\n\n@asc.kernel\ndef f(a, b):\n"
                    "    return (a + b).sum(axis=1), np.max(a * b, axis=0)\n").f
    n = 2_000_000
    a = np.array([[1.0, 2.0, 4.0]])
    b = np.ones((n, 3))
    b[n // 2] = 3.0
    s, m = k(a, b)
    np.testing.assert_array_equal(s, (a + b).sum(axis=1))
    np.testing.assert_array_equal(m, np.max(a * b, axis=0))


def test_dot_of_views_does_not_broadcast():
    k = comp("import numpy as np\nimport asc\n\n@asc.kernel\ndef d(x, y):\n"
             "    return np.dot(x[::-2], y[1::2])\n").d
    x, y = np.arange(7.0), np.arange(8.0) - 2.5
    assert k(x, y) == np.dot(x[::-2], y[1::2])
    with pytest.raises(ValueError, match=r"shapes \(1,\) and \(4,\) not aligned"):
        k(x[:1], y)


def test_reduction_inside_a_statement_and_a_mask_broadcast():
    m = comp("""
import numpy as np
import asc

@asc.kernel
def stmt(a, b, out):
    out[:] = (a + b).mean(axis=1) - (b * a).min(axis=-1)

@asc.kernel
def mask(x, a, b):
    return x[(a > 0) & (b > 0)]
""")
    a = np.array([[1.0], [-2.0], [3.0]])
    b = np.arange(12.0).reshape(3, 4) - 5
    out = np.zeros(3)
    m.stmt(a, b, out)
    np.testing.assert_allclose(out, (a + b).mean(axis=1) - (b * a).min(axis=-1), rtol=1e-14)
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(m.mask(x, a, b), x[(a > 0) & (b > 0)])
    np.testing.assert_array_equal(m.mask(x, b, a), x[(b > 0) & (a > 0)])


NESTED = """
import numpy as np
import asc

@asc.kernel
def center(a):
    a[:] = a - a.mean(axis=0)

@asc.kernel
def center_rows(a):
    a -= a.max(axis=1, keepdims=True)

@asc.kernel
def softmax(x):
    m = np.max(x, axis=1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=1, keepdims=True)

@asc.kernel
def zscore(a):
    return (a - a.mean(axis=0)) / a.std(axis=0)

@asc.kernel
def nested(x):
    return (x - x.sum(axis=1).max(axis=0)) * x.min(axis=0)
"""


@pytest.mark.parametrize("shape", [(5, 7), (1, 9), (9, 1), (300, 200)])
def test_reductions_inside_expressions_are_made_first(shape):
    """A reduction along an axis inside a larger expression is computed
    once, before the statement, and then read (numpy's order: the operand
    is read before an in-place statement writes it); inline, each of its
    elements was a loop run again for every element it broadcasts to.
    tests/golden/ir/reductions_nested.ir shows the loops."""
    m = comp(NESTED)
    a = np.random.default_rng(1).standard_normal(shape)
    b = a.copy()
    m.center(b)
    np.testing.assert_allclose(b, a - a.mean(axis=0), rtol=0, atol=1e-12)
    b = a.copy()
    m.center_rows(b)
    np.testing.assert_array_equal(b, a - a.max(axis=1, keepdims=True))
    e = np.exp(a - np.max(a, axis=1, keepdims=True))
    np.testing.assert_allclose(m.softmax(a), e / e.sum(axis=1, keepdims=True), rtol=1e-14)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_allclose(m.zscore(a), (a - a.mean(axis=0)) / a.std(axis=0),
                                   rtol=1e-12)
    np.testing.assert_allclose(m.nested(a), (a - a.sum(axis=1).max(axis=0)) * a.min(axis=0),
                               rtol=1e-13)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_min_max_keep_numpys_nan_rule_in_vector_lanes(dt):
    """np.min/np.max of floats are one pmin/pmax that redlanes spreads over
    vector lanes (long rows): a NaN anywhere wins, infinities and ties
    stay numpy's."""
    m = comp("""
import numpy as np
import asc

@asc.kernel
def mm(x):
    return np.min(x), np.max(x), x.min(axis=1), x.max(axis=0), np.max(x, axis=1)
""")
    base = np.arange(1000.0) - 300
    for a in [base, np.r_[base, np.nan, base], np.r_[np.nan, base],
              np.r_[base, -np.inf, np.inf], np.full(300, np.inf), np.full(300, -np.inf),
              np.full(300, np.nan), np.r_[base[:500], np.nan]]:
        for x in (a.astype(dt).reshape(1, -1), np.tile(a.astype(dt), (3, 1))):
            got = m.mm(x)
            want = (np.min(x), np.max(x), x.min(axis=1), x.max(axis=0), np.max(x, axis=1))
            for g, w in zip(got, want):
                g, w = np.asarray(g), np.asarray(w)
                assert g.dtype == w.dtype and g.shape == w.shape
                np.testing.assert_array_equal(g, w)


def test_min_along_an_empty_axis_raises_even_with_no_result_element():
    m = comp("""
import numpy as np
import asc

@asc.kernel
def mn(b):
    return np.min(b, axis=-2, keepdims=True)

@asc.kernel
def am(b):
    return b.argmax(axis=0)
""")
    with pytest.raises(ValueError, match="zero-size array to reduction operation minimum"):
        m.mn(np.zeros((4, 0, 0)))
    with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
        m.am(np.zeros((0, 0)))
    np.testing.assert_array_equal(m.mn(np.zeros((2, 3, 0))), np.min(np.zeros((2, 3, 0)), axis=-2,
                                                                   keepdims=True))


BIG = ["9223372036854775807", "-9223372036854775807", "-9223372036854775808",
       "2**63 - 1", "-(2**63 - 1)", "-2**63"]


def test_slice_steps_near_two_to_the_63():
    lines = ["import numpy as np", "import asc", ""]
    cases = []
    for j, st in enumerate(BIG):
        for lo, hi in [("", ""), ("1", ""), ("-2", ""), ("", "0"), ("-1", "0"), ("3", "-5")]:
            cases.append((j, lo, hi, st))
            lines += ["@asc.kernel", f"def s{len(cases)}(a, m):",
                      f"    return a[{lo}:{hi}:{st}] * 1, m[{lo}:{hi}:{st}, ::{st}] + 0", ""]
    lines += ["@asc.kernel", "def rt(a, st):", "    return a[::st] * 1", ""]
    m = comp("\n".join(lines))
    a = np.arange(7.0)
    mm = np.arange(35).reshape(7, 5)
    for i, (_j, lo, hi, st) in enumerate(cases, 1):
        sl = eval(f"np.s_[{lo}:{hi}:{st}]")                 # noqa: S307
        v, w = getattr(m, f"s{i}")(a, mm)
        np.testing.assert_array_equal(v, a[sl], err_msg=f"a[{lo}:{hi}:{st}]")
        np.testing.assert_array_equal(w, mm[sl, ::eval(st)], err_msg=f"m[{lo}:{hi}:{st}]")  # noqa: S307
    for st in [2**63 - 1, -(2**63 - 1), -2**63, 2**62 + 1, -2**62]:
        np.testing.assert_array_equal(m.rt(a, st), a[::st])


def test_cumsum_keeps_a_leading_negative_zero():
    m = comp("""
import numpy as np
import asc

@asc.kernel
def flat(a):
    return np.cumsum(a)

@asc.kernel
def ax1(a):
    return a.cumsum(axis=1)

@asc.kernel
def ax0(a):
    return np.cumsum(a, axis=0)
""")
    for dt in (np.float64, np.float32, np.float16, np.complex64, np.complex128):
        x = np.array([[-0.0, -0.0, 1.0], [-0.0, 2.0, -0.0]], dt)
        if x.dtype.kind == "c":
            x = x + np.array(-0.0j, dt)
        for got, want in [(m.flat(x), np.cumsum(x)), (m.ax1(x), np.cumsum(x, axis=1)),
                          (m.ax0(x), np.cumsum(x, axis=0))]:
            assert got.dtype == want.dtype
            parts = [(got, want)] if x.dtype.kind == "f" else \
                [(got.real, want.real), (got.imag, want.imag)]
            for g, w in parts:
                np.testing.assert_array_equal(g, w)
                np.testing.assert_array_equal(np.signbit(g), np.signbit(w), err_msg=str(dt))


def test_where_of_two_bools_is_bool():
    k = comp("import numpy as np\nimport asc\n\n@asc.kernel\ndef w(c, a, b):\n"
                    "    return np.where(c, a, b)\n").w
    c = np.array([True, False, True])
    a, b = np.array([True, True, False]), np.array([False, True, True])
    got = k(c, a, b)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, np.where(c, a, b))


def test_array_semantics_fuzz_matches_numpy(tmp_path):
    """A bounded, seeded run of tests/tools/array_semantics_fuzz.py: every
    generated kernel matches numpy, or raises what numpy raises, or is one
    of the generator's listed known differences; the long runs are by hand
    (docs/arrays.md)."""
    root = Path(__file__).resolve().parents[2]
    build = Path(os.environ.get("ASC_BUILD_DIR", root / "build"))
    p = subprocess.run([sys.executable, str(root / "tests/tools/array_semantics_fuzz.py"),
                        "--seed", "11", "--count", "300", "--batch", "150",
                        "--ascc", str(build / "ascc")],
                       capture_output=True, text=True, timeout=1200,
                       env={**os.environ, "ASC_CACHE_DIR": str(tmp_path / "cache")})
    counts = {k.strip(): int(v) for k, v in re.findall(r"^  ([a-z][a-z ,]*?)\s+(\d+)$",
                                                       p.stdout, re.M)}
    assert p.returncode == 0, p.stdout[-6000:] + p.stderr[-3000:]
    assert counts["cases"] == 300, p.stdout
    assert counts["mismatched"] == 0 and counts["crashed"] == 0, p.stdout
    assert counts["internal error"] == 0 and counts["generator errors"] == 0, p.stdout
    assert counts["matched"] >= 250, p.stdout


TUPLE_AXES = """
import numpy as np
import asc

@asc.kernel
def f(a):
    return (np.sum(a, axis=(1, 2)), a.max(axis=(0, 2)), np.mean(a, axis=(-1, -3)),
            a.sum(axis=(0, 2), keepdims=True), np.any(a > 0.5, axis=(1, 0)),
            np.prod(a, (2, 1)), np.min(a[:, ::-1, 1:] * 2.0, axis=(1, 2)),
            a.all(axis=(2,)), np.sum(a, axis=(0, 1, 2)))
"""


def test_reductions_over_a_tuple_of_axes():
    """np.sum(a, axis=(1, 2)) and the like (they were 'axis must be an
    integer constant'): one axis after the other, keepdims kept."""
    a = np.random.default_rng(0).random((3, 4, 5))
    want = (np.sum(a, axis=(1, 2)), a.max(axis=(0, 2)), np.mean(a, axis=(-1, -3)),
            a.sum(axis=(0, 2), keepdims=True), np.any(a > 0.5, axis=(1, 0)),
            np.prod(a, (2, 1)), np.min(a[:, ::-1, 1:] * 2.0, axis=(1, 2)),
            a.all(axis=(2,)), np.sum(a, axis=(0, 1, 2)))
    for g, w in zip(comp(TUPLE_AXES).f(a), want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-13)


@pytest.mark.parametrize("expr, msg", [
    ("np.prod(a, axis=(1, -1))", "axes of one sign"),
    ("np.prod(a, axis=(1, 1))", "axis 1 is repeated"),
    # sum and mean take their tuple as var and std do: numpy's rules
    ("np.sum(a, axis=(1, 1))", "duplicate value in 'axis'"),
    ("np.mean(a, axis=(-1, 2))", "duplicate value in 'axis'"),
    ("np.argmax(a, axis=(0, 1))", "a tuple of axes is supported for sum"),
    ("np.sum(a, axis=(0, 5))", "out of bounds"),
])
def test_tuple_of_axes_errors(expr, msg):
    with pytest.raises(asc.CompileError, match=msg):
        comp("import numpy as np\nimport asc\n\n@asc.kernel\ndef g(a):\n"
             "    return %s\n" % expr).g(np.zeros((2, 3, 4)))
