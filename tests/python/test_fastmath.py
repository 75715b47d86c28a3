"""Per-kernel floating-point modes: @asc.kernel(fastmath=...), @asc.func
(fastmath=...), asc.compile(..., fastmath=...) (docs/fastmath.md)."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import asc

ROOT = Path(__file__).resolve().parents[2]


def _sum_kernel(fastmath):
    @asc.kernel(fastmath=fastmath)
    def fsum(x, out):
        s = asc.float32(0.0)
        for i in range(x.shape[0]):
            s += x[i]
        out[0] = s
    return fsum


def _data(n=1 << 18):
    rng = np.random.default_rng(17)
    return (rng.random(n, dtype=np.float32) * 2 - 1).astype(np.float32)


def _sequential(x):
    # np.cumsum adds in order, in float32: Python's loop, element by element
    return np.cumsum(x, dtype=np.float32)[-1]


def _has_fma():
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " fma " in line + " "
                       for line in f)
    except OSError:
        return False


# ------------------------------------------------------------- options

@pytest.mark.parametrize("value, mask", [
    (False, 0), (None, 0), (True, 0x7f), (set(), 0),
    ({"contract"}, 0x01), ({"reassoc"}, 0x02), ({"nnan"}, 0x04),
    ({"ninf"}, 0x08), ({"nsz"}, 0x10), ({"arcp"}, 0x20), ({"afn"}, 0x40),
    (["contract", "reassoc"], 0x03), (("nnan", "ninf"), 0x0c),
    (frozenset({"nsz", "arcp", "afn"}), 0x70), ("reassoc", 0x02),
])
def test_fastmath_values_accepted(value, mask):
    from asc._kernel import fastmath_mask
    assert fastmath_mask(value) == mask

    def k(x):
        x[0] = 1
    assert asc.kernel(fastmath=value)(k).options["fastmath"] == mask


@pytest.mark.parametrize("bad", [{"fast"}, {"reasoc"}, ["contract", "NNAN"], "all"])
def test_unknown_flag_is_a_value_error_naming_it(bad):
    with pytest.raises(ValueError) as e:
        asc.kernel(fastmath=bad)
    msg = str(e.value)
    name = next(n for n in ([bad] if isinstance(bad, str) else bad)
                if n not in ("contract",))
    assert repr(name) in msg
    assert "contract, reassoc, nnan, ninf, nsz, arcp, afn" in msg
    with pytest.raises(ValueError):
        asc.func(fastmath=bad)
    with pytest.raises(ValueError):
        asc.compile("import asc\n@asc.kernel\ndef k(x):\n    pass\n", fastmath=bad)


@pytest.mark.parametrize("bad", [1, 2.0, [1]])
def test_non_flag_values_are_type_errors(bad):
    with pytest.raises(TypeError):
        asc.kernel(fastmath=bad)


def test_unknown_flag_in_kernel_text_is_a_compile_error():
    text = 'import asc\n@asc.kernel(fastmath={"contract", "nan"})\ndef k(x):\n    pass\n'
    with pytest.raises(asc.CompileError) as e:
        asc.compile(text)
    assert "unknown fastmath flag 'nan'" in str(e.value)
    assert "contract, reassoc, nnan, ninf, nsz, arcp, afn" in str(e.value)
    assert e.value.lineno == 2
    with pytest.raises(asc.CompileError, match="fastmath must be True, False or a set"):
        asc.compile('import asc\n@asc.kernel(fastmath=3)\ndef k(x):\n    pass\n')
    with pytest.raises(asc.CompileError, match="unknown @asc.func option 'debug'"):
        asc.compile('import asc\n@asc.func(debug=True)\ndef h(x):\n    return x\n'
                    '@asc.kernel\ndef k(x):\n    x[0] = h(x[0])\n')


# ------------------------------------------------------------ semantics

def test_default_float_sum_is_sequential_and_fastmath_reassociates():
    x = _data()
    seq = _sequential(x)
    out = np.zeros(1, np.float32)
    _sum_kernel(False)(x, out)
    assert out[0].tobytes() == seq.tobytes()     # bit for bit Python's order
    exact = x.astype(np.float64).sum()
    results = {}
    for fm in (True, {"reassoc"}):
        o = np.zeros(1, np.float32)
        _sum_kernel(fm)(x, o)
        results[str(fm)] = o[0]
        # reassociation changes rounding, not the sum: both near the exact one
        assert abs(float(o[0]) - exact) <= 1e-5 * np.abs(x).sum()
    # vector lanes / per-thread parts: a different order, different bits
    assert results["{'reassoc'}"] != seq
    # flags that do not reassociate keep the order
    for fm in ({"contract"}, {"nnan", "ninf"}, {"arcp"}, {"afn"}):
        o = np.zeros(1, np.float32)
        _sum_kernel(fm)(x, o)
        assert o[0].tobytes() == seq.tobytes(), fm


FMA_TEXT = textwrap.dedent('''
    import asc

    @asc.kernel(fastmath={"contract"})
    def fused(a, b, c, out):
        for i in range(a.shape[0]):
            out[i] = a[i] * b[i] + c[i]

    @asc.kernel
    def plain(a, b, c, out):
        for i in range(a.shape[0]):
            out[i] = a[i] * b[i] + c[i]
''')


def test_contract_fuses_multiply_add_per_kernel():
    # (1 + 2^-27) * (1 - 2^-27) = 1 - 2^-54: rounded first it is 1.0, so
    # a * b - 1 is 0 unfused and -2^-54 as one fma
    n = 37
    a = np.full(n, 1 + 2.0**-27)
    b = np.full(n, 1 - 2.0**-27)
    c = np.full(n, -1.0)
    out = np.empty(n)
    m = asc.compile(FMA_TEXT)
    m.plain(a, b, c, out)
    assert (out == 0.0).all()                    # the default never fuses
    m.fused(a, b, c, out)
    want = -(2.0**-54) if _has_fma() else 0.0
    assert (out == want).all()
    # the module-wide option fills in what the decorator leaves unsaid
    m2 = asc.compile(FMA_TEXT, fastmath={"contract"})
    m2.plain(a, b, c, out)
    assert (out == want).all()
    # and a decorator that says fastmath=False wins over it
    m3 = asc.compile(FMA_TEXT.replace("@asc.kernel\n", "@asc.kernel(fastmath=False)\n"),
                     fastmath=True)
    m3.plain(a, b, c, out)
    assert (out == 0.0).all()


@asc.func(fastmath=False)
def _strict_helper(a, b):
    return a - b


@asc.func
def _inheriting_helper(a, b):
    return a - b


@asc.kernel(fastmath=True)
def _sum_calls_strict_helper(x, out):
    s = asc.float32(0.0)
    for i in range(x.shape[0]):
        s += x[i]
    out[0] = s
    out[1] = _strict_helper(x[0], x[1])


@asc.kernel(fastmath=True)
def _sum_calls_inheriting_helper(x, out):
    s = asc.float32(0.0)
    for i in range(x.shape[0]):
        s += x[i]
    out[0] = s
    out[1] = _inheriting_helper(x[0], x[1])


def test_a_helper_caps_the_mode_of_kernels_that_call_it():
    x = _data()
    seq = _sequential(x)
    out = np.zeros(2, np.float32)
    _sum_calls_strict_helper(x, out)
    assert out[0].tobytes() == seq.tobytes()     # capped to the default mode
    assert out[1] == x[0] - x[1]
    _sum_calls_inheriting_helper(x, out)
    assert out[0] != seq                         # the kernel's own fastmath
    assert out[1] == x[0] - x[1]


def test_helper_decorator_text_carries_its_flags():
    h = asc.func(fastmath={"nsz", "contract"})(_strict_helper.py_func)
    assert h.fastmath == 0x11
    assert "@asc.func(fastmath={'contract', 'nsz'})" in h.piece.lines
    assert _inheriting_helper.fastmath is None
    assert "@asc.func" in _inheriting_helper.piece.lines


# ---------------------------------------------------------------- cache

CACHE_SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np, asc
    text = "import asc\\n@asc.kernel\\ndef k(x, out):\\n" \\
           "    s = asc.float32(0.0)\\n" \\
           "    for i in range(x.shape[0]):\\n        s += x[i]\\n    out[0] = s\\n"
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(1, np.float32)
    for fm in sys.argv[1:]:
        asc.compile(text, fastmath=(fm == "fast")).k(x, out)
        assert out[0] == 4950.0
''')


def _entries(cache):
    return sorted(p for p in Path(cache).rglob("*.so"))


def test_fastmath_is_part_of_the_cache_key(tmp_path):
    cache = tmp_path / "cache"
    script = tmp_path / "fm_cache.py"
    script.write_text(CACHE_SCRIPT)
    env = dict(os.environ, ASC_CACHE_DIR=str(cache),
               PYTHONPATH=str(ROOT / "bindings" / "python"))

    def run(*modes):
        subprocess.run([sys.executable, str(script), *modes], check=True,
                       env=env, timeout=300)
        return _entries(cache)

    default = run("default")
    assert len(default) == 1
    both = run("fast")
    assert len(both) == 2                        # a second entry, not a hit
    assert run("default", "fast") == both        # each mode hits its own


@pytest.mark.parametrize("spelling", ['["contract"]', '("contract",)', '"contract"',
                                      '{"contract", "nsz"}', 'True'])
def test_kernel_text_spellings_of_fastmath(spelling):
    n = 5
    a = np.full(n, 1 + 2.0**-27)
    b = np.full(n, 1 - 2.0**-27)
    c = np.full(n, -1.0)
    out = np.empty(n)
    m = asc.compile(FMA_TEXT.replace('fastmath={"contract"}', f"fastmath={spelling}"))
    m.fused(a, b, c, out)
    assert (out == (-(2.0**-54) if _has_fma() else 0.0)).all()


def test_set_displays_stay_errors_outside_decorators():
    with pytest.raises(asc.CompileError, match="dict and set displays are not supported"):
        asc.compile("import asc\n@asc.kernel\ndef k(x):\n    y = {1, 2}\n")
