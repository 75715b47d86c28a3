import subprocess
import sys
import threading
import time

import pytest

import asc


def test_default_stream():
    s = asc.default_stream
    assert s.is_default and s.handle == 0 and s.priority == 0
    assert s.query() is True
    s.synchronize()
    with pytest.raises(ValueError):
        s.destroy()
    assert "default" in repr(s)


def test_stream_lifecycle():
    s = asc.Stream()
    assert not s.is_default and s.handle != 0
    assert s.query() is True
    s.synchronize()
    s.destroy()
    assert s.destroyed and "destroyed" in repr(s)


def test_destroyed_stream_raises_asc_error():
    s = asc.Stream()
    s.destroy()
    for call in (s.synchronize, s.query, s.destroy, lambda: s.wait_event(asc.Event()),
                 lambda: asc.Event().record(s)):
        with pytest.raises(asc.Error) as info:
            call()
        assert isinstance(info.value, asc.InvalidHandleError)
        assert "destroyed" in str(info.value)


def test_priorities():
    least, greatest = asc.stream_priority_range()
    assert greatest <= least
    for p in (least, greatest):
        s = asc.Stream(priority=p)
        assert s.priority == p
        s.synchronize()


def test_out_of_range_priority_is_clamped_or_rejected():
    least, greatest = asc.stream_priority_range()
    try:
        s = asc.Stream(priority=greatest - 100)
    except asc.Error as exc:
        assert isinstance(exc, ValueError)
    else:
        s.synchronize()


def test_stream_argument_types():
    with pytest.raises(TypeError):
        asc.Stream(priority="high")
    with pytest.raises(TypeError):
        asc.Stream().wait_event("not an event")


def test_non_blocking_stream():
    s = asc.Stream(non_blocking=True)
    s.synchronize()


def test_event_record_and_elapsed_time():
    s = asc.Stream()
    start, end = asc.Event(), asc.Event()
    assert start.record(s) is start
    time.sleep(0.01)
    end.record(s)
    end.synchronize()
    assert start.query() and end.query()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and ms >= 0.0


def test_event_on_default_stream():
    e = asc.Event()
    e.record()
    e.record(None)
    e.synchronize()
    assert e.query() is True and e.recorded


def test_elapsed_time_invalid_use():
    a, b = asc.Event(), asc.Event()
    with pytest.raises(asc.Error):
        a.elapsed_time(b)                      # neither recorded
    a.record()
    with pytest.raises(asc.Error):
        a.elapsed_time(b)                      # end not recorded
    c, d = asc.Event(timing=False), asc.Event(timing=False)
    c.record()
    d.record()
    d.synchronize()
    with pytest.raises(asc.Error):
        c.elapsed_time(d)                      # timing disabled
    with pytest.raises(TypeError):
        a.elapsed_time(1.0)


def test_destroyed_event():
    e = asc.Event()
    e.destroy()
    for call in (e.record, e.synchronize, e.query, e.destroy,
                 lambda: asc.Event().elapsed_time(e),
                 lambda: asc.default_stream.wait_event(e)):
        with pytest.raises(asc.InvalidHandleError):
            call()


def test_wait_event_across_streams():
    s1, s2 = asc.Stream(), asc.Stream()
    e = asc.Event()
    e.record(s1)
    s2.wait_event(e)
    s2.synchronize()
    assert s2.query()


def test_record_rejects_non_streams():
    with pytest.raises(TypeError):
        asc.Event().record(stream=3)


def test_device_synchronize_and_properties():
    asc.synchronize()
    p = asc.device_properties()
    assert p.cores >= 1 and p.numa_nodes >= 1 and p.name
    assert p.total_memory > 0
    assert asc.device_properties(0) == p
    assert asc.device_count() >= 1
    assert asc.get_device() == 0
    with pytest.raises(asc.Error):
        asc.device_properties(99)
    with pytest.raises(asc.Error):
        asc.set_device(99)
    free, total = asc.mem_get_info()
    assert 0 <= free <= total


def test_synchronize_releases_the_gil():
    # Another Python thread keeps running while one thread synchronises.
    done = []
    t = threading.Thread(target=lambda: [asc.synchronize() for _ in range(200)] and done.append(1))
    t.start()
    t.join(30)
    assert done


def test_version():
    assert asc.__version__.count(".") == 2
    assert asc.version_info[0] >= 0


FORK_SCRIPT = r'''
import os, sys, time
sys.path.insert(0, {pkg!r})
import numpy as np
import asc

@asc.kernel
def spin(flag):
    asc.atomic_add(flag, 0, 1)
    n = 0
    while True:
        n += 1
        if n < 0:
            flag[1] = n

@asc.kernel
def add1(a):
    for i in range(a.shape[0]):
        a[i] = a[i] + 1

flag = np.zeros(4, np.int64)
a = np.zeros(16, np.int64)
add1(a)
s = asc.Stream()
spin[1, s](flag)
t0 = time.monotonic()
while flag[0] == 0 and time.monotonic() - t0 < 60:
    time.sleep(0.001)
assert flag[0] == 1, "the kernel never started"
pid = os.fork()
if pid == 0:
    code = 3
    try:
        add1(a)
        print("child default stream", list(a) == [2] * 16, flush=True)
        try:
            s.synchronize()
            print("child stream s: no error", flush=True)
        except asc.CancelledError as exc:
            print("child stream s: cancelled:", exc, flush=True)
        add1[1, s](a)
        s.synchronize()
        print("child stream s again", list(a) == [3] * 16, flush=True)
        code = 0
    finally:
        os._exit(code)
t0 = time.monotonic()
while True:
    r, status = os.waitpid(pid, os.WNOHANG)
    if r == pid:
        print("child exit", os.waitstatus_to_exitcode(status), flush=True)
        break
    if time.monotonic() - t0 > 60:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        print("child hang", flush=True)
        break
    time.sleep(0.01)
s.cancel()
try:
    s.synchronize()
except asc.CancelledError:
    pass
add1(a)
print("parent", list(a) == [2] * 16, flush=True)
'''


def test_fork_while_kernel_runs(tmp_path, root):
    """os.fork while a kernel runs on a stream: the child launches and
    synchronises on the default stream and on that stream (which reports
    the inherited work cancelled once), and exits 0; the parent goes on."""
    script = tmp_path / "fork.py"
    script.write_text(FORK_SCRIPT.format(pkg=str(root / "bindings" / "python")))
    r = subprocess.run([sys.executable, "-W", "ignore::DeprecationWarning",
                        str(script)], capture_output=True, text=True,
                       timeout=240)
    lines = r.stdout.splitlines()
    assert "child exit 0" in lines, (r.stdout, r.stderr)
    assert "child default stream True" in lines, (r.stdout, r.stderr)
    assert any(l.startswith("child stream s: cancelled: ") and "fork()" in l
               for l in lines), (r.stdout, r.stderr)
    assert "child stream s again True" in lines, (r.stdout, r.stderr)
    assert "parent True" in lines, (r.stdout, r.stderr)
    assert r.returncode == 0, (r.stdout, r.stderr)
