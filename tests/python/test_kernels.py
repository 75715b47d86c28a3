"""Kernels compiled and run end to end.  These need the whole pipeline
(front end, types, back end, cache, scheduler)."""
import gc
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import asc

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "examples" / "python" / "seed_kernels.asc"


@asc.kernel
def vector_add(a, b, c):
    for i in asc.prange(a.shape[0]):
        c[i] = a[i] + b[i]


@asc.kernel
def saxpy(alpha, x, y, out):
    for i in asc.prange(x.shape[0]):
        out[i] = alpha * x[i] + y[i]


@asc.kernel
def saxpy32(alpha: asc.float32, x: asc.Tensor[asc.float32, 1],
            y: asc.Tensor[asc.float32, 1], out: asc.Tensor[asc.float32, 1]):
    for i in asc.prange(x.shape[0]):
        out[i] = alpha * x[i] + y[i]


@asc.kernel
def add2d(a, b, c):
    n, m = a.shape
    for i in asc.prange(n):
        for j in range(m):
            c[i, j] = a[i, j] + b[i, j]


@asc.kernel
def raises_value_error(a, limit):
    for i in range(a.shape[0]):
        if a[i] > limit:
            raise ValueError("element above the limit")


@asc.kernel
def int_divide(a, b, out):
    for i in range(a.shape[0]):
        out[i] = a[i] // b[i]


@asc.kernel(boundscheck=True)
def out_of_bounds(a):
    a[a.shape[0]] = 1.0


@asc.kernel(debug=True)
def asserts_positive(a):
    for i in range(a.shape[0]):
        assert a[i] > 0, "not positive"


@asc.kernel
def block_ids(out):
    out[asc.get_block_idx()] = asc.get_block_num()


@asc.kernel
def accumulate(a, out):
    for i in asc.prange(a.shape[0]):
        out[i] += a[i]


@asc.kernel
def scale(a, factor):
    for i in asc.prange(a.shape[0]):
        a[i] = a[i] * factor


# ---------------------------------------------------------------- basics

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_vector_add(dtype):
    a = np.arange(1000, dtype=dtype)
    b = np.full(1000, 3, dtype=dtype)
    c = np.zeros(1000, dtype=dtype)
    vector_add(a, b, c)
    assert np.array_equal(c, a + b)


def test_vector_add_keywords_strides_and_pooled_arrays():
    a = asc.asarray(np.arange(20, dtype=np.float32))
    b = np.ones(40, np.float32)[::2]
    c = asc.zeros(20, asc.float32)
    vector_add(a, b=b, c=c)
    assert np.array_equal(c.numpy(), np.arange(20) + 1)
    out = np.zeros(40, np.float32)
    vector_add(a, b, out[::-2])
    assert np.array_equal(out[::-2], np.arange(20) + 1)


def test_2d_and_views():
    a = np.arange(64, dtype=np.float64).reshape(8, 8)
    b = np.ones((8, 8))
    c = np.zeros((8, 8))
    add2d(a.T, b, c)
    assert np.array_equal(c, a.T + 1)


def test_saxpy_python_float_is_weak_float32():
    x = np.linspace(0, 1, 1001, dtype=np.float32)
    y = np.ones(1001, np.float32)
    out = np.zeros(1001, np.float32)
    saxpy(0.1, x, y, out)
    ref = np.float32(0.1) * x + y          # computed in float32
    assert np.array_equal(out, ref)


def test_saxpy_python_float_in_float64():
    x = np.linspace(0, 1, 1001)
    y = np.ones(1001)
    out = np.zeros(1001)
    saxpy(0.1, x, y, out)
    assert np.array_equal(out, 0.1 * x + y)


def test_saxpy_annotated_scalar_and_numpy_scalar():
    x = np.arange(10, dtype=np.float32)
    y = np.zeros(10, np.float32)
    out = np.zeros(10, np.float32)
    saxpy32(2, x, y, out)
    assert np.array_equal(out, 2 * x)
    saxpy(np.float32(3), x, y, out)
    assert np.array_equal(out, 3 * x)


def test_float16_arrays():
    a = np.arange(8, dtype=np.float16)
    c = np.zeros(8, np.float16)
    vector_add(a, a, c)
    assert np.array_equal(c, a + a)


def test_bfloat16_uint16_view():
    bits = asc.to_bfloat16_bits(np.arange(8, dtype=np.float32))
    a = bits.view(asc.bfloat16)
    c = np.zeros(8, np.uint16).view(asc.bfloat16)
    vector_add(a, a, c)
    assert asc.from_bfloat16_bits(c).tolist() == [2.0 * i for i in range(8)]


def test_bfloat16_ml_dtypes():
    ml = pytest.importorskip("ml_dtypes")
    a = np.arange(8).astype(ml.bfloat16)
    c = np.zeros(8, ml.bfloat16)
    vector_add(a, a, c)
    assert c.astype(np.float32).tolist() == [2.0 * i for i in range(8)]


def test_dlpack_and_array_interface_arguments():
    class OnlyDLPack:
        def __init__(self, x):
            self.x = x

        def __dlpack__(self, **kw):
            return self.x.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.x.__dlpack_device__()

    class OnlyInterface:
        def __init__(self, x):
            self.x = x
            self.__array_interface__ = x.__array_interface__

    a = np.arange(16, dtype=np.float32)
    c = np.zeros(16, np.float32)
    vector_add(OnlyDLPack(a), OnlyInterface(a), OnlyDLPack(c))
    assert np.array_equal(c, 2 * a)


def test_params_introspection():
    p = saxpy32.params
    assert [q["name"] for q in p] == ["alpha", "x", "y", "out"]
    assert p[0]["kind"] == "scalar" and p[0]["dtype"] == "float32"
    assert p[1]["kind"] == "tensor" and p[1]["ndim"] == 1
    assert vector_add.params[0]["generic"]


# ------------------------------------------------------ argument errors

def test_wrong_argument_count_and_types():
    a = np.zeros(4, np.float32)
    with pytest.raises(TypeError, match="'vector_add'.*'c'"):
        vector_add(a, a)
    with pytest.raises(TypeError, match="takes 3"):
        vector_add(a, a, a, a)
    with pytest.raises(TypeError, match="parameter 'b'"):
        vector_add(a, 1.0, a)
    # an unannotated parameter takes the type of its argument: an array
    # for alpha compiles saxpy for one, and the line that cannot take it
    # is the error (docs/arrays.md, "Parameters typed by what is passed")
    with pytest.raises(asc.CompileError,
                       match=r"test_kernels.py:29:.*Tensor\[float32, 1\]"
                             r"(.|\n)*array passed for 'alpha'"):
        saxpy(a, a, a, a)
    with pytest.raises(TypeError, match="parameter 'x'"):
        saxpy32(1.0, np.zeros(4), a, a)
    with pytest.raises(TypeError, match="parameter 'x'"):
        saxpy32(1.0, np.zeros((2, 2), np.float32), a, a)
    with pytest.raises(TypeError, match="parameter 'alpha'"):
        saxpy32("2", a, a, a)
    with pytest.raises(TypeError, match="parameter 'a'"):
        vector_add(np.zeros(4, np.clongdouble), a, a)


def test_mismatched_generic_arguments_are_value_errors_not_crashes():
    a = np.zeros(4, np.float32)
    with pytest.raises((TypeError, ValueError, asc.CompileError)):
        vector_add(a, np.zeros((2, 2), np.float32), a)


# ------------------------------------------------------ exceptions

def test_kernel_value_error_is_reraised():
    a = np.array([1.0, 5.0, 2.0])
    raises_value_error(a, 10.0)
    with pytest.raises(ValueError) as info:
        raises_value_error(a, 3.0)
    err = info.value
    assert type(err) is ValueError
    msg = str(err)
    assert "raises_value_error" in msg and "element above the limit" in msg
    assert os.path.basename(__file__) in msg
    line = raises_value_error.py_func.__code__.co_firstlineno + 4   # the raise
    assert f":{line}:" in msg and err.lineno == line
    # the stream works again afterwards
    raises_value_error(a, 10.0)


def test_zero_division_error():
    a = np.array([7, 8], np.int64)
    b = np.array([2, 0], np.int64)
    with pytest.raises(ZeroDivisionError, match="int_divide"):
        int_divide(a, b, np.zeros(2, np.int64))


def test_python_floor_division_semantics():
    a = np.array([7, -7, 7, -7], np.int64)
    b = np.array([2, 2, -2, -2], np.int64)
    out = np.zeros(4, np.int64)
    int_divide(a, b, out)
    assert out.tolist() == [3, -4, -4, 3]


def test_index_error_with_boundscheck():
    with pytest.raises(IndexError, match="out_of_bounds"):
        out_of_bounds(np.zeros(4))


def test_assertion_error_in_debug():
    asserts_positive(np.ones(3))
    with pytest.raises(AssertionError, match="asserts_positive"):
        asserts_positive(np.array([1.0, -1.0]))


def test_async_error_raised_by_synchronize():
    s = asc.Stream()
    raises_value_error[1, s](np.array([5.0]), 1.0)
    with pytest.raises(ValueError):
        s.synchronize()
    raises_value_error[1, s](np.array([5.0]), 10.0)
    s.synchronize()


# ------------------------------------------------------ async launches

def test_blocks_and_streams():
    out = np.zeros(8, np.int64)
    s = asc.Stream()
    block_ids[8, s](out)
    s.synchronize()
    assert out.tolist() == [8] * 8
    out[:] = 0
    block_ids[4](out)
    asc.synchronize()
    assert out.tolist() == [4] * 4 + [0] * 4


def test_a_kernel_without_block_index_gives_one_blocks_answer():
    # It never reads asc.get_block_idx()/get_block_num(): k[4](...) runs it
    # once, on the cores 4 blocks would have had, not once per block.
    a = (np.arange(65536) % 97).astype(np.float32)
    for blocks in (1, 4, 16):
        out = np.ones_like(a)
        accumulate[blocks](a, out)
        asc.synchronize()
        wrong = int(np.count_nonzero(out != 1 + a))
        assert wrong == 0, f"{blocks} blocks: {wrong} of {a.size} elements wrong"
    out = np.ones_like(a)
    accumulate[4, asc.Stream()](a, out)
    asc.synchronize()
    assert np.array_equal(out, 1 + a)
    out = np.ones_like(a)
    accumulate(a, out)
    assert np.array_equal(out, 1 + a)


def test_async_launch_keeps_arguments_alive():
    s = asc.Stream()
    out = np.zeros(100000, np.float32)
    for _ in range(20):
        vector_add[1, s](np.ones(100000, np.float32), np.ones(100000, np.float32), out)
    gc.collect()
    s.synchronize()
    assert (out == 2).all()
    assert s._pending == 0


def test_events_time_kernels():
    s = asc.Stream()
    a = np.ones(1 << 20, np.float32)
    start, end = asc.Event(), asc.Event()
    start.record(s)
    scale[1, s](a, 2.0)
    end.record(s)
    end.synchronize()
    assert start.elapsed_time(end) >= 0
    assert a[0] == 2.0


# ------------------------------------------------------ asc.compile

def test_seed_kernels_compile_from_file():
    seed = asc.compile(SEED)
    assert set(seed.kernel_names) == {"conv2d", "parallel_add"}
    a = np.arange(100, dtype=np.float32)
    c = np.zeros(100, np.float32)
    seed.parallel_add(a, a, c)
    assert np.array_equal(c, 2 * a)
    rng = np.random.default_rng(0)
    x = rng.random((1, 2, 6, 6), dtype=np.float32)
    w = rng.random((3, 2, 3, 3), dtype=np.float32)
    out = np.zeros((1, 3, 4, 4), np.float32)
    seed.conv2d(x, w, out)
    ref = np.zeros_like(out)
    for oc in range(3):
        for oh in range(4):
            for ow in range(4):
                ref[0, oc, oh, ow] = (x[0, :, oh:oh + 3, ow:ow + 3] * w[oc]).sum()
    assert np.allclose(out, ref, rtol=1e-5)


def test_compile_text_with_globals():
    m = asc.compile(textwrap.dedent("""
        import asc

        @asc.kernel
        def fill(a):
            for i in range(a.shape[0]):
                a[i] = VALUE
        """), globals={"VALUE": 7})
    a = np.zeros(3, np.int64)
    m.fill(a)
    assert a.tolist() == [7, 7, 7]
    with pytest.raises(AttributeError):
        m.no_such_kernel


def test_compile_error_points_at_the_real_file(tmp_path):
    src = tmp_path / "broken.py"
    src.write_text("import asc\n\n\n@asc.kernel\ndef k(a):\n    a[0] = undefined_name + 1\n")
    with pytest.raises(asc.CompileError) as info:
        asc.compile(src)
    err = info.value
    assert err.filename == str(src) and err.lineno == 6 and err.offset >= 5
    assert "^" in str(err) and isinstance(err, SyntaxError)


def test_compile_error_of_a_decorated_kernel(tmp_path):
    mod = tmp_path / "badkernel.py"
    mod.write_text("import asc\n\n@asc.kernel\ndef bad(a):\n    a[0] = nothing_here\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import badkernel
    finally:
        sys.path.remove(str(tmp_path))
    with pytest.raises(asc.CompileError) as info:
        badkernel.bad(np.zeros(2))
    assert info.value.filename == str(mod) and info.value.lineno == 5


def test_compile_syntax_error_text():
    with pytest.raises(asc.CompileError) as info:
        asc.compile("import asc\n@asc.kernel\ndef k(a):\n    a[0] = = 1\n", filename="text.py")
    assert info.value.lineno == 4 and info.value.filename == "text.py"


def test_compile_text_without_a_kernel_is_an_error():
    with pytest.raises(asc.CompileError) as info:
        asc.compile("import asc\n\ndef helper(x):\n    return x\n", filename="plain.py")
    assert "no @asc.kernel function in plain.py" in str(info.value)
    assert info.value.filename == "plain.py" and info.value.lineno == 1


def test_annotated_kernel_type_error_at_compile():
    text = ("import asc\n\n@asc.kernel\n"
            "def k(x: asc.Tensor[asc.float32, 1]):\n"
            "    n = x.shape[0]\n    n = x[0]\n")
    with pytest.raises(asc.CompileError) as info:
        asc.compile(text, filename="ann.py")
    assert info.value.lineno == 6 and "cannot assign float32" in str(info.value)
    # unannotated: its types depend on the call, so it compiles now
    asc.compile(text.replace(": asc.Tensor[asc.float32, 1]", ""), filename="gen.py")


def test_missing_kernel_file():
    with pytest.raises(FileNotFoundError):
        asc.compile("/nonexistent/kernels.py")


def test_kernel_file_not_regular(tmp_path):
    """A FIFO (opening it would wait for a writer: the alarm is the hang
    guard), a device or a directory is refused, not read (docs/files.md)."""
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    signal.alarm(60)
    try:
        for path in (fifo, Path("/dev/zero"), tmp_path):
            with pytest.raises(ValueError, match="cannot read .*: (not a regular file|it is a directory)"):
                asc.compile(path)
    finally:
        signal.alarm(0)


# ------------------------------------------------------ frozen globals / cache

MODULE_TEXT = """\
import asc

CONST = {value}


@asc.kernel
def put_const(a):
    for i in range(a.shape[0]):
        a[i] = CONST
"""


def _load(path, name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_module_constants_are_part_of_the_key(tmp_path):
    p1 = tmp_path / "consts.py"
    p1.write_text(MODULE_TEXT.format(value=1))
    m1 = _load(p1, "consts_one")
    a = np.zeros(2, np.int64)
    m1.put_const(a)
    assert a.tolist() == [1, 1]
    p1.write_text(MODULE_TEXT.format(value=2))
    m2 = _load(p1, "consts_two")
    m2.put_const(a)
    assert a.tolist() == [2, 2]


def _entries(cache):
    return sorted(str(p.relative_to(cache)) for p in Path(cache).rglob("*") if p.is_file())


def test_new_process_hits_the_cache(tmp_path):
    cache = tmp_path / "cache"
    script = tmp_path / "run_const.py"
    (tmp_path / "constmod.py").write_text(MODULE_TEXT.format(value=5))
    script.write_text("import numpy as np, constmod\n"
                      "a = np.zeros(3, np.int64)\nconstmod.put_const(a)\n"
                      "assert a.tolist() == [5, 5, 5]\n")
    env = dict(os.environ, ASC_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join([str(ROOT / "bindings" / "python"), str(tmp_path)]))
    subprocess.run([sys.executable, str(script)], check=True, env=env, timeout=300)
    first = _entries(cache)
    assert first
    subprocess.run([sys.executable, str(script)], check=True, env=env, timeout=300)
    assert _entries(cache) == first          # nothing new compiled
    (tmp_path / "constmod.py").write_text(MODULE_TEXT.format(value=6))
    script.write_text(script.read_text().replace("5, 5, 5", "6, 6, 6"))
    subprocess.run([sys.executable, str(script)], check=True, env=env, timeout=300)
    assert len(_entries(cache)) > len(first)  # a new value compiled anew


# ------------------------------------------------------ decorator forms

def test_helpers_and_frozen_constants_of_a_module():
    import sample_kernels as sk
    a = np.arange(4, dtype=np.float32)
    out = np.zeros(4, np.float32)
    sk.scale_add(a, out)                       # out = a * SCALE + OFFSET
    assert out.tolist() == [0.5, 3.5, 6.5, 9.5]
    x = np.zeros(2, np.int64)
    sk.uses_later_helper(x)                    # helper defined after the kernel
    assert x[0] == 2
    sk.aliased(x)                              # @kernel imported under an alias
    assert x[0] == 3
    sk.Holder.method_kernel(x)                 # a kernel inside a class
    assert x[0] == 2
    sk.checked(x)                              # @asc.jit(debug=..., boundscheck=...)
    assert x[0] == 1


def test_constexpr_parameter():
    m = asc.compile(textwrap.dedent("""
        import asc

        @asc.kernel
        def fill_n(a, n: asc.ConstExpr[int]):
            for i in asc.static_range(n):
                a[i] = i
        """))
    a = np.zeros(4, np.int64)
    m.fill_n(a, 3)
    assert a.tolist() == [0, 1, 2, 0]
    m.fill_n(a, 4)
    assert a.tolist() == [0, 1, 2, 3]
