"""vmchunk's indices ahead (docs/optimizer.md, "vmchunk"): the index of a
store or atomic add computed with Python's int() of a float (a
histogram's bin) runs ahead, a chunk at a time, in a loop that
vectorises, with the conversions' range tests; a chunk in which no test
fails reads the indices from the buffer and converts without the check.
Results must equal ASC_VMCHUNK=0's (the pass left out) and numpy's, and a
conversion that fails must raise at the same element, with the same
updates made before it, wherever it falls in a chunk."""
import re

import numpy as np
import pytest
from envvars import ascc_ir, compile_on_off, env

asc = pytest.importorskip("asc")

SRC = '''
import asc
import math


@asc.kernel
def hist_p(x, hist):
    for i in asc.prange(x.shape[0]):
        b = min(int(x[i] * 256.0), 255)
        asc.atomic_add(hist, b, 1)


@asc.kernel
def hist_s(x, hist):
    for i in range(x.shape[0]):
        b = min(int(x[i] * 256.0), 255)
        hist[b] += 1


@asc.kernel
def hist_w(x, w, hist):
    for i in asc.prange(x.shape[0]):
        b = int(x[i] * 16.0) - 8
        asc.atomic_add(hist, b, w[i])


@asc.kernel
def scatter_last(x, out):
    for i in range(x.shape[0]):
        out[int(x[i])] = i


@asc.kernel
def via_table(x, table, hist):
    for i in range(x.shape[0]):
        hist[table[int(x[i])]] += 1


@asc.kernel
def low_bits(x, hist):
    for i in range(x.shape[0]):
        b = int(x[i])
        hist[b & 7] += 1


@asc.kernel
def narrow32(x, hist):
    for i in range(x.shape[0]):
        b = asc.int32(x[i])
        hist[b & 7] += 1


@asc.kernel
def int_of_exp(x, out):
    for i in range(x.shape[0]):
        out[i] = int(math.exp(x[i]))


@asc.kernel
def quant(x, out):
    for i in range(x.shape[0]):
        out[i] = asc.int32(x[i] * 10.0)


@asc.kernel
def interp(t, a, out):
    for i in range(t.shape[0]):
        j = int(t[i])
        f = t[i] - j
        out[i] = a[j] * (1.0 - f) + a[j + 1] * f


@asc.kernel
def narrow_u8(x, hist):
    for i in range(x.shape[0]):
        b = asc.uint8(x[i])
        hist[b & 7] += 1
'''

SIZES = [0, 1, 31, 255, 256, 257, 1000, 4099, 100003]


@pytest.fixture(scope="module")
def mods():
    return compile_on_off(asc, SRC, "ASC_VMCHUNK")


def both(mods, name, *args, copy=()):
    """Runs kernel name with the pass on and off; returns each run's
    outcome: (exception type and text or None, the arrays in copy)."""
    outs = []
    for mod, flag in zip(mods, (None, "0")):
        a = [np.array(v, copy=True) if k in copy else v for k, v in enumerate(args)]
        err = None
        with env(ASC_VMCHUNK=flag):
            try:
                getattr(mod, name)(*a)
            except (ValueError, OverflowError) as e:
                err = (type(e), str(e))
        outs.append((err, [a[k] for k in copy]))
    return outs


def bins(x, scale, top):
    b = np.minimum(np.trunc(x.astype(np.float64) * scale).astype(np.int64), top)
    return np.bincount(b, minlength=top + 1)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", ["hist_p", "hist_s"])
def test_histogram_counts(mods, dt, n, name):
    x = np.random.default_rng(n).random(n).astype(dt)
    want = bins(x, 256.0, 255)
    (e1, (h1,)), (e2, (h2,)) = both(mods, name, x, np.zeros(256, np.int64),
                                    copy=(1,))
    assert e1 is None and e2 is None
    assert np.array_equal(h1, want)
    assert np.array_equal(h2, want)


@pytest.mark.parametrize("n", [1000, 70001])
def test_negative_bins_wrap(mods, n):
    """int(x * 16) - 8 is negative for half the values: hist[-3] is
    hist[13] (Python's wrap), computed ahead as in the loop."""
    r = np.random.default_rng(n)
    x = r.random(n)
    w = r.integers(-5, 100, n)
    b = np.trunc(x * 16.0).astype(np.int64) - 8
    want = np.bincount(b % 16, weights=w, minlength=16).astype(np.int64)
    (e1, (h1,)), (e2, (h2,)) = both(mods, "hist_w", x, w,
                                    np.zeros(16, np.int64), copy=(2,))
    assert e1 is None and e2 is None
    assert np.array_equal(h1, want) and np.array_equal(h2, want)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("at", [0, 1, 255, 256, 300, 511, 999])
@pytest.mark.parametrize("bad,kind", [(np.nan, ValueError),
                                      (np.inf, OverflowError),
                                      (-np.inf, OverflowError),
                                      (1e30, OverflowError)])
def test_failed_conversion_at_the_element(mods, dt, at, bad, kind):
    """The chunk converts values past the one that fails; the loop still
    raises there, having counted exactly the values before it."""
    x = np.random.default_rng(at).random(1000).astype(dt)
    x[at] = bad
    x[at + 1:at + 3] = np.nan     # later failures must not win
    (e1, (h1,)), (e2, (h2,)) = both(mods, "hist_s", x,
                                    np.zeros(256, np.int64), copy=(1,))
    assert e1 is not None and e1[0] is kind
    assert e1 == e2
    assert np.array_equal(h1, h2)
    assert np.array_equal(h1, bins(x[:at], 256.0, 255))


@pytest.mark.parametrize("at", [0, 300, 999])
def test_parallel_loop_raises(mods, at):
    x = np.random.default_rng(at).random(1000).astype(np.float32)
    x[at] = np.nan
    (e1, _), (e2, _) = both(mods, "hist_p", x, np.zeros(256, np.int64),
                            copy=(1,))
    assert e1 is not None and e1[0] is ValueError and e1 == e2


def test_scatter_keeps_the_last_writer(mods):
    """out[int(x[i])] = i with repeated indices: the last i wins, as in
    the loop."""
    r = np.random.default_rng(5)
    x = r.uniform(0, 50, 5000)
    want = np.zeros(50, np.int64)
    for i, v in enumerate(x):
        want[int(v)] = i
    (e1, (o1,)), (e2, (o2,)) = both(mods, "scatter_last", x,
                                    np.zeros(50, np.int64), copy=(1,))
    assert e1 is None and e2 is None
    assert np.array_equal(o1, want) and np.array_equal(o2, want)


# Values at the edges of each integer type, in float64: some convert,
# some raise; the tests ahead are stricter than the checks at the lower
# edge (-2**31 itself fails the test, passes the check), so such a chunk
# runs the loop as written.
EDGES = {
    "low_bits": [2.0**63 - 1024, 2.0**63, -2.0**63, -2.0**63 + 1024, 9.2e18,
                 -9.2e18, 0.5, -0.5],
    "narrow32": [2147483647.5, 2147483648.0, -2147483648.0, -2147483648.9,
                 -2147483649.0, -2147483647.0, 1e10],
    "narrow_u8": [-0.5, -0.999, -1.0, 255.9, 256.0, 0.0, 17.25],
}


@pytest.mark.parametrize("name", sorted(EDGES))
@pytest.mark.parametrize("at", [0, 255, 256, 700])
def test_edges_of_the_integer_types(mods, name, at):
    for v in EDGES[name]:
        x = np.random.default_rng(at).uniform(0, 200, 1000)
        x[at] = v
        (e1, (h1,)), (e2, (h2,)) = both(mods, name, x, np.zeros(8, np.int64),
                                        copy=(1,))
        assert e1 == e2, (v, e1, e2)
        assert np.array_equal(h1, h2), v
        if e1 is None:
            assert h1.sum() == 1000, v


@pytest.mark.parametrize("at", [0, 255, 256, 700, 999])
@pytest.mark.parametrize("bad", [44.0, 1000.0, np.nan, 43.5])
def test_conversion_of_a_call_computed_ahead(mods, at, bad):
    """int(math.exp(x)): exp ahead (vector math), the conversion's test
    ahead too; exp(44) does not fit int64 (OverflowError from int()),
    exp(1000) overflows in exp itself (math range error), exp(nan) is NaN
    (ValueError from int()), exp(43.5) fits.  parallelize makes the loop
    a pfor (disjoint stores): the error is the lowest element's, and
    elements above it may have been stored (docs/parallelize.md), so only
    those before it are compared."""
    x = np.random.default_rng(at).uniform(-3, 30, 1000)
    x[at] = bad
    (e1, (o1,)), (e2, (o2,)) = both(mods, "int_of_exp", x,
                                    np.zeros(1000, np.int64), copy=(1,))
    assert e1 == e2
    assert np.array_equal(o1[:at], o2[:at])
    # asc's exp is within 1 ulp of numpy's: the truncations within 1
    want = np.trunc(np.exp(x[:at])).astype(np.int64)
    assert np.all(np.abs(o1[:at] - want) <= 1)
    if bad == 43.5:
        assert e1 is None and abs(o1[at] - int(np.exp(43.5))) <= 1 << 12
    else:
        assert e1 is not None and o1[at] == 0


def ir_of(tmp_path, sig, extra_env=None):
    """`ascc --emit=ir` of SRC for signature sig."""
    src = tmp_path / "k.py"
    src.write_text(SRC)
    return ascc_ir(src, sig, extra_env)


def test_notes_and_switch(tmp_path):
    ir = ir_of(tmp_path, "hist_p(float32[::1], int64[::1])")
    assert re.search(r"vmchunk: the index %\w+ \(line 10\) computed ahead", ir)
    assert "its checks too" in ir
    assert "cvt" in ir
    ir = ir_of(tmp_path, "hist_p(float32[::1], int64[::1])",
                 {"ASC_VMCHUNK": "0"})
    assert "vmchunk" not in ir and "cvt" not in ir


def test_load_at_a_converted_index_stays(tmp_path, mods):
    """hist[table[int(x[i])]]: ahead, a failed conversion would read
    table at an index the loop never reads, so the index stays."""
    ir = ir_of(tmp_path, "via_table(float64[::1], int64[::1], int64[::1])")
    assert "stays: a load of it reads at a converted index" in ir
    r = np.random.default_rng(3)
    x = r.uniform(0, 10, 3000)
    table = r.integers(0, 4, 10)
    want = np.bincount(table[np.trunc(x).astype(np.int64)], minlength=4)
    (e1, (h1,)), _ = both(mods, "via_table", x, table, np.zeros(4, np.int64),
                          copy=(2,))
    assert e1 is None and np.array_equal(h1, want)


def random_kernels(seed, count):
    """count histogram kernels with a random bin: a conversion (int(),
    asc.int32, asc.int16, asc.uint8) of x[i] * a + b, then % 64 (Python's
    modulo: in range) or a clamp and a wrap, then `+=` in a range loop or
    atomic_add in a prange."""
    r = np.random.default_rng(seed)
    lines = ["import asc", ""]
    for k in range(count):
        conv = ["int", "asc.int32", "asc.int16", "asc.uint8"][r.integers(4)]
        a = float(r.choice([1.0, 3.5, 64.0, 1e3, -7.25]))
        b = float(r.choice([0.0, -0.5, 31.0, -1e4]))
        wrap = r.integers(3)
        loop = "asc.prange" if r.integers(2) else "range"
        lines += ["", "@asc.kernel", f"def k{k}(x, h):",
                  f"    for i in {loop}(x.shape[0]):",
                  f"        b = {conv}(x[i] * {a!r} + {b!r})"]
        if wrap == 0:
            lines.append("        b = b % 64")
        elif wrap == 1:
            low = 0 if conv == "asc.uint8" else -64
            lines.append(f"        b = max(min(b, 63), {low})")
        else:
            lines.append("        b = (b & 63) if b >= 0 else 0")
        if loop == "range":
            lines.append("        h[b] += 1")
        else:
            lines.append("        asc.atomic_add(h, b, 1)")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", [11, 12])
def test_random_bins(seed):
    """Random bins on data with values that convert and values that fail
    (NaN, infinities, beyond each type), byte-equal to ASC_VMCHUNK=0:
    the same exception, and in range loops the same counts before it."""
    count = 24
    src = random_kernels(seed, count)
    pair = compile_on_off(asc, src, "ASC_VMCHUNK")
    r = np.random.default_rng(seed)
    for k in range(count):
        for trial in range(4):
            n = int(r.choice([300, 1000, 5000]))
            x = r.uniform(-40, 40, n)
            if trial > 0:
                at = int(r.integers(n))
                x[at] = r.choice([np.nan, np.inf, -np.inf, 1e12, -1e9, 4e4])
            (e1, (h1,)), (e2, (h2,)) = both(pair, f"k{k}", x,
                                            np.zeros(64, np.int64), copy=(1,))
            assert e1 == e2, (k, trial)
            parallel = f"def k{k}(x, h):\n    for i in asc.prange" in src
            if e1 is None or not parallel:
                assert np.array_equal(h1, h2), (k, trial)
            if e1 is None:
                assert h1.sum() == n


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
def test_conversions_alone(mods, dt, n):
    """out[i] = asc.int32(x[i] * 10.0) and a linear interpolation, whose
    only raises are int()'s: the tests ahead, a chunk that passes runs
    the copy with cvt (vectorised); the same values as ASC_VMCHUNK=0 and
    numpy."""
    r = np.random.default_rng(n)
    x = (r.random(n) * 2e8 - 1e8).astype(dt)
    (e1, (q1,)), (e2, (q2,)) = both(mods, "quant", x, np.zeros(n, np.int32),
                                    copy=(1,))
    assert e1 is None and e2 is None
    want = np.trunc(x * dt(10.0)).astype(np.int64).astype(np.int32)
    assert np.array_equal(q1, q2) and np.array_equal(q1, want)
    t = r.random(n) * 99.0
    a = r.random(101)
    (e1, (o1,)), (e2, (o2,)) = both(mods, "interp", t, a, np.zeros(n),
                                    copy=(2,))
    assert e1 is None and e2 is None
    assert np.array_equal(o1, o2)
    j = np.trunc(t).astype(np.int64)
    f = t - j
    assert np.array_equal(o1, a[j] * (1.0 - f) + a[j + 1] * f)


@pytest.mark.parametrize("at", [0, 255, 256, 700, 999])
@pytest.mark.parametrize("bad,kind", [(np.nan, ValueError),
                                      (3e8, OverflowError),
                                      (-214748364.81, None),
                                      (-214748364.9, OverflowError)])
def test_conversion_alone_fails_at_the_element(mods, at, bad, kind):
    """asc.int32(x * 10): 3e8 * 10 is past int32; -214748364.81 * 10 is
    -2147483648.1 (truncates to -2^31: fits, though the test ahead
    rejects it, so its chunk runs as written); -214748364.9 * 10 is
    -2147483649: does not fit."""
    x = np.random.default_rng(at).uniform(-1e3, 1e3, 1000)
    x[at] = bad
    (e1, (q1,)), (e2, (q2,)) = both(mods, "quant", x,
                                    np.zeros(1000, np.int32), copy=(1,))
    assert e1 == e2
    assert (e1 is None) == (kind is None) and (e1 is None or e1[0] is kind)
    assert np.array_equal(q1[:at], q2[:at])
    if kind is None:
        assert np.array_equal(q1, q2) and q1[at] == -2**31


RANGES = {"int": (-2.0**63, 2.0**63), "asc.int32": (-2**31, 2**31 - 1),
          "asc.int16": (-2**15, 2**15 - 1), "asc.uint8": (0, 255)}


def first_failing(v, conv):
    """The index of the first element of v whose conversion raises (NaN,
    an infinity, or truncated outside conv's range), or len(v)."""
    lo, hi = RANGES[conv]
    with np.errstate(invalid="ignore"):
        t = np.trunc(v)
        bad = ~((t >= lo) & (t <= hi)) if conv != "int" else ~((t >= lo) & (t < hi))
    return int(np.argmax(bad)) if bad.any() else len(v)


@pytest.mark.parametrize("seed", [21, 22])
def test_random_conversions_on_store(seed):
    """out[i] = <conversion>(x[i] * a + b) for random conversions, scales
    and loops, on data with values that fail: the same exception as
    ASC_VMCHUNK=0 and the same elements stored below the lowest raising
    one, which is not always the planted value (uint8 of a negative
    value raises).  Parallelize makes these loops pfors: elements above
    it may differ from run to run (docs/abi.md, the determinism rule)."""
    r = np.random.default_rng(seed)
    lines = ["import asc", ""]
    count = 16
    convs = []
    for k in range(count):
        conv = ["int", "asc.int32", "asc.int16", "asc.uint8"][r.integers(4)]
        a = float(r.choice([1.0, 0.5, 300.0, -2.0]))
        b = float(r.choice([0.0, 0.25, -100.0]))
        loop = "asc.prange" if r.integers(2) else "range"
        convs.append((conv, a, b))
        lines += ["", "@asc.kernel", f"def k{k}(x, out):",
                  f"    for i in {loop}(x.shape[0]):",
                  f"        out[i] = {conv}(x[i] * {a!r} + {b!r})"]
    src = "\n".join(lines) + "\n"
    pair = compile_on_off(asc, src, "ASC_VMCHUNK")
    for k in range(count):
        for trial in range(4):
            n = int(r.choice([300, 1000, 5000]))
            x = r.uniform(-60, 60, n)
            at = n
            if trial > 0:
                at = int(r.integers(n))
                x[at] = r.choice([np.nan, np.inf, 1e12, -1e9, 4e4, -3e4])
            (e1, (o1,)), (e2, (o2,)) = both(pair, f"k{k}", x,
                                            np.zeros(n, np.int64), copy=(1,))
            assert e1 == e2, (k, trial)
            # the lowest raising element, which may lie below at (uint8
            # of a negative value): only the elements below it are
            # stored in every run
            conv, a, b = convs[k]
            v = x * a + b
            upto = first_failing(v, conv)
            assert (e1 is None) == (upto == n), (k, trial)
            assert np.array_equal(o1[:upto], o2[:upto]), (k, trial)
            assert np.array_equal(o1[:upto], np.trunc(v[:upto])), (k, trial)
