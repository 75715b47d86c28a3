"""The launch path against the runtime's hand-written test module
(tests/c/modules/testkernels.c, built by CMake into
BUILD/test_modules/testkernels.so): marshalling, asynchronous launches,
streams, and kernel exceptions, without the Python kernel compiler."""
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import asc

ROOT = Path(__file__).resolve().parents[2]
MODULE = Path(os.environ.get("ASC_TEST_MODULE_DIR", ROOT / "build" / "test_modules")) / "testkernels.so"

# ASC_KEXC_* kinds of the kernel ABI and the classes they surface as.
KINDS = {1: Exception, 2: ValueError, 3: IndexError, 4: ZeroDivisionError,
         5: AssertionError, 6: RuntimeError, 7: OverflowError,
         8: ArithmeticError, 9: TypeError}


@pytest.fixture(scope="module")
def tk():
    assert MODULE.exists(), f"{MODULE} is built by `cmake --build build` (BUILD_TESTING)"
    return asc.load_module(MODULE)


def test_vadd_sync_and_params(tk):
    a = np.arange(1000, dtype=np.float32)
    b = np.ones(1000, np.float32)
    c = np.zeros(1000, np.float32)
    tk.vadd(a, b, c)
    assert np.array_equal(c, a + 1)
    assert [p["name"] for p in tk.vadd.params] == ["a", "b", "c"]
    assert tk.vadd.params[0]["dtype"] == "float32" and tk.vadd.params[0]["ndim"] == 1


def test_vadd_blocks_streams_pooled_and_temporaries(tk):
    s = asc.Stream()
    c = asc.zeros(4096, asc.float32)
    for _ in range(10):
        tk.vadd[4, s](np.full(4096, 2, np.float32), asc.asarray(np.ones(4096, np.float32)), c)
    assert s._pending >= 1
    s.synchronize()
    assert s._pending == 0
    assert (c.numpy() == 3).all()


def test_vadd_argument_errors(tk):
    a = np.zeros(8, np.float32)
    with pytest.raises(TypeError, match="'vadd': parameter 'b' is Tensor\\[float32"):
        tk.vadd(a, np.zeros(8), a)
    with pytest.raises(TypeError, match="parameter 'c' has 1 dimension"):
        tk.vadd(a, a, np.zeros((2, 4), np.float32))
    with pytest.raises(TypeError, match="missing argument for parameter 'c'"):
        tk.vadd(a, a)
    with pytest.raises(TypeError, match="parameter 'a' expects an array"):
        tk.vadd([1.0] * 8, a, a)


def test_scalar_conversions(tk):
    x = np.zeros(4, np.int64)
    tk.affine(x, 3, 5)            # x = x * mul + add, by the test module
    x0 = x.copy()
    tk.affine(x, mul=np.int8(1), add=True)
    assert np.array_equal(x, x0 * 1 + 1)
    with pytest.raises(TypeError, match="parameter 'mul' is int64; got a float"):
        tk.affine(x, 1.5, 0)
    with pytest.raises(OverflowError, match="parameter 'add'"):
        tk.affine(x, 1, 2**63)


def test_generic_scalar_is_weak_descriptor(tk):
    t = np.zeros(2, np.int64)
    tk.generic(t, 42)
    assert t[0] == 42
    tk.generic(t, np.int32(-7))
    assert t[0] == -7


@pytest.mark.parametrize("kind,cls", sorted(KINDS.items()))
def test_kernel_exceptions_surface_as_their_class(tk, kind, cls):
    with pytest.raises(cls) as info:
        tk.raise_block[4](kind, 0b0100)
        asc.synchronize()
    err = info.value
    assert type(err) is cls
    assert "kernel 'raise_block'" in str(err) and "block 2 failed" in str(err)
    assert err.kernel == "raise_block" and err.lineno == 102
    assert err.filename.endswith("testkernels.py")
    tk.raise_block[4](kind, 0)          # the default stream works again
    asc.synchronize()


def test_parallel_loop_exception_names_line(tk):
    x = np.zeros(1000, np.int32)
    with pytest.raises(ValueError) as info:
        tk.raise_at(x, 500)
    assert "testkernels.py:42: kernel 'raise_at' raised ValueError: bad value at 500" in str(info.value)
    # at < 0: every iteration i % 7 == 3 raises; the lowest one is reported
    with pytest.raises(ValueError, match="bad value at 3$"):
        tk.raise_at(x, -1)
    tk.raise_at(np.zeros(3, np.int32), 5)   # no iteration raises


def test_exception_on_a_stream_is_raised_by_its_synchronize(tk):
    s = asc.Stream()
    tk.raise_block[2, s](2, 0b1)
    with pytest.raises(ValueError):
        s.synchronize()
    tk.raise_block[2, s](2, 0)
    s.synchronize()
    assert s.query()


def test_query_and_events_around_a_sleeping_kernel(tk):
    s = asc.Stream()
    start, end = asc.Event(), asc.Event()
    start.record(s)
    tk.sleepy[1, s](200_000)            # 200 ms
    end.record(s)
    assert s.query() is False and end.query() is False
    end.synchronize()
    assert s.query() is True
    assert start.elapsed_time(end) >= 150.0


def test_synchronous_launch_releases_the_gil(tk):
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=tick)
    t.start()
    try:
        n0 = len(ticks)
        tk.sleepy(200_000)
        assert len(ticks) - n0 >= 20
    finally:
        stop.set()
        t.join()


def test_synchronous_call_runs_on_the_calling_thread():
    """kern(*args) on the idle default stream: the calling thread runs the
    block itself (ascLaunchKernelAndSynchronize), every time."""
    plug = asc.load_module(MODULE.parent / "plugkernels.so")
    out = np.zeros(4, np.int64)
    me = threading.get_native_id()
    for _ in range(100):
        out[0] = 0
        plug.tids(out)
        assert out[0] == me


def test_synchronous_call_waits_for_queued_work(tk):
    """With asynchronous work queued on the default stream (its records
    pending), kern(*args) runs after it and the records are dropped once
    the stream is waited for; also with a blocking stream busy."""
    log = np.zeros(8, np.int32)
    tk.sleepy[1, None](100_000)
    tk.append[1, None](log, 1)
    assert asc.default_stream._pending >= 1
    tk.append(log, 2)
    assert log[:3].tolist() == [2, 1, 2]
    assert asc.default_stream._pending == 0
    s = asc.Stream()
    tk.sleepy[1, s](100_000)
    tk.append[1, s](log, 3)
    tk.append(log, 4)          # the default stream waits for s (legacy)
    assert log[:5].tolist() == [4, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="raise_block"):
        tk.raise_block(2, 1)
    tk.append(log, 5)
    assert log[0] == 5


def test_wait_event_orders_streams(tk):
    s1, s2 = asc.Stream(), asc.Stream()
    ev = asc.Event()
    x = np.zeros(4, np.int64)
    tk.sleepy[1, s1](100_000)
    tk.affine[1, s1](x, 1, 1)
    ev.record(s1)
    s2.wait_event(ev)
    tk.affine[1, s2](x, 10, 0)
    s2.synchronize()
    assert x.tolist() == [10, 10, 10, 10]


def test_destroyed_stream_cannot_launch(tk):
    s = asc.Stream()
    s.destroy()
    with pytest.raises(asc.InvalidHandleError):
        tk.vadd[1, s](np.zeros(1, np.float32), np.zeros(1, np.float32), np.zeros(1, np.float32))


def test_unknown_kernel_and_bad_module(tk, tmp_path):
    with pytest.raises(AttributeError):
        tk.no_such_kernel
    bad = tmp_path / "bad.so"
    bad.write_bytes(b"not an elf")
    with pytest.raises(asc.Error):
        asc.load_module(bad)
    with pytest.raises(asc.Error):
        asc.load_module(tmp_path / "missing.so")


def test_many_async_launches_stay_bounded_and_report_errors(tk):
    s = asc.Stream()
    a = np.ones(16, np.float32)
    for _ in range(2000):
        tk.vadd[1, s](a, a, np.empty(16, np.float32))
    assert s._pending <= 2000
    s.synchronize()
    assert s._pending == 0
    # an error found while reaping is raised by the next launch, not lost
    tk.raise_block[1, s](2, 1)
    with pytest.raises(ValueError, match="raise_block"):
        for _ in range(2000):
            tk.vadd[1, s](a, a, np.empty(16, np.float32))
        s.synchronize()
    s.synchronize()


def test_ahead_of_time_module_runs_without_a_compiler(tmp_path):
    """A module from `ascc --emit=so` (tests/c/aot/aot_kernels.py) loads and
    runs from Python in a process whose C compiler is /bin/false; a call
    that fits no compiled signature lists the signatures."""
    build = Path(os.environ.get("ASC_BUILD_DIR", ROOT / "build"))
    so = tmp_path / "aot.so"
    subprocess.run([str(build / "ascc"), "--signature", "axpy(float, f64[:], f64[:])",
                    "-o", str(so), str(ROOT / "tests" / "c" / "aot" / "aot_kernels.py")],
                   check=True)
    script = (
        "import asc, numpy as np\n"
        f"m = asc.load_module({str(so)!r})\n"
        "x = np.arange(4, dtype=np.float32); o = np.zeros(4, np.float32)\n"
        "m.vadd(x, x.copy(), o); assert o.tolist() == [0, 2, 4, 6], o\n"
        "y = np.ones(3); m.axpy(2.0, np.arange(3.0), y); assert y.tolist() == [1, 3, 5], y\n"
        "try:\n"
        "    m.vadd(np.arange(3), np.arange(3), np.zeros(3, np.int64))\n"
        "except asc.InvalidValueError as e:\n"
        "    assert 'vadd(f64[1], f64[1], f64[1])' in str(e), e\n"
        "else:\n"
        "    raise AssertionError('no error')\n")
    env = dict(os.environ, ASC_CC="/bin/false")
    r = subprocess.run([sys.executable, "-c", script], env=env,
                       cwd=ROOT / "bindings" / "python", capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
