"""Ctrl-C stops a kernel: during a synchronous launch or
Stream.synchronize(), SIGINT cancels the launch being waited for and
KeyboardInterrupt is raised promptly; the stream works again afterwards
and the interpreter exits normally.  Also Stream.cancel() from another
thread and the Python exception classes of a cancellation."""
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import asc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# they bound the time from SIGINT to KeyboardInterrupt (conftest.py)
pytestmark = pytest.mark.serial

# The child scripts' watcher: prints "running" once the kernel has set
# flag[0], which tells the parent when to send SIGINT.
WATCH = '''
def watch():
    while flag[0] == 0:
        time.sleep(0.001)
    print("running", flush=True)

threading.Thread(target=watch, daemon=True).start()'''

SCRIPT = r'''
import signal, sys, threading, time
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
def mark(flag):
    flag[0] = flag[0] + 1

flag = np.zeros(4, np.int64)
handled = []
if {mode!r} == "replaced":
    # libasc's SIGINT handler goes in at a wait; Python's replaces it;
    # the wait below comes later than the 10 ms libasc trusts its look
    mark(np.zeros(1, np.int64))
    def mine(signum, frame):
        handled.append(signum)
        raise KeyboardInterrupt
    signal.signal(signal.SIGINT, mine)
    time.sleep(0.05)
{watch}
try:
    if {mode!r} != "stream":
        spin(flag)
    else:
        s = asc.Stream()
        spin[1, s](flag)
        s.synchronize()
except KeyboardInterrupt:
    print("interrupted", time.monotonic(), len(handled), flush=True)
else:
    print("returned", flush=True)
    sys.exit(3)
m = np.zeros(1, np.int64)
mark(m)
assert m[0] == 1, m
print("usable", flush=True)
'''


def interrupt(path, text, delay=0.5):
    """Runs script text (saved at path) in a child, sends it SIGINT delay
    seconds after it prints "running", and returns the seconds until it
    printed "interrupted <time>", its output lines, stderr and exit
    status."""
    path.write_text(text)
    # the child starts with SIGINT at its default, as in a terminal: a
    # parent started in the background by a shell ignores SIGINT, the
    # child would inherit that, and Python would then install no
    # KeyboardInterrupt handler
    p = subprocess.Popen([sys.executable, str(path)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                          signal.SIG_DFL))
    try:
        line = p.stdout.readline()
        assert line.strip() == "running", (line, p.stderr.read())
        time.sleep(delay)
        t_sig = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    lines = out.split("\n")
    assert lines[0].startswith("interrupted"), (out, err)
    return float(lines[0].split()[1]) - t_sig, lines, err, p.returncode


@pytest.mark.parametrize("mode", ["sync", "stream", "replaced"])
def test_sigint_interrupts_endless_kernel(tmp_path, mode):
    """replaced: a SIGINT handler that the program installs after
    libasc's went in (signal.signal) is noticed, libasc's goes in front
    of it again, and the program's handler runs."""
    latency, lines, err, rc = interrupt(
        tmp_path / "endless.py",
        SCRIPT.format(pkg=os.path.join(ROOT, "bindings", "python"), mode=mode,
                      watch=WATCH))
    assert lines[0].split()[2] == ("1" if mode == "replaced" else "0"), (lines, err)
    print(f"{mode}: KeyboardInterrupt raised {latency * 1000:.1f} ms after SIGINT")
    assert latency < 2.0
    assert "usable" in lines, (lines, err)
    assert rc == 0, (lines, err)


# SIGINT while the first call still compiles its kernel: the launch is
# not on the stream yet when the watcher cancels, so a single cancel
# found an idle stream and the kernel then ran to its end (35 s in
# test_returns_hostile, and a "DID NOT RAISE" in CI).  The loop here
# would run for hours.
COMPILING_SCRIPT = r'''
import os, sys, tempfile, time
os.environ["ASC_CACHE_DIR"] = tempfile.mkdtemp(prefix="asc-sigint-compile-")
sys.path.insert(0, {pkg!r})
import numpy as np
import asc

@asc.kernel
def slow(a, n):
    t = a * 2.0
    s = 0.0
    for i in range(n):
        s += a[i % a.shape[0]] * 1e-9
    return t, s

print("running", flush=True)
try:
    slow(np.ones(1000), 10**14)
except KeyboardInterrupt:
    print("interrupted", time.monotonic(), flush=True)
else:
    print("returned", flush=True)
    sys.exit(3)
t, s = slow(np.ones(10), 100)
assert t[0] == 2.0, t
print("usable", flush=True)
'''


def test_sigint_while_the_first_call_compiles(tmp_path):
    latency, lines, err, rc = interrupt(
        tmp_path / "compiling.py",
        COMPILING_SCRIPT.format(pkg=os.path.join(ROOT, "bindings", "python")),
        delay=0.05)
    print(f"KeyboardInterrupt raised {latency * 1000:.1f} ms after SIGINT")
    assert latency < 20.0
    assert "usable" in lines, (lines, err)
    assert rc == 0, (lines, err)


# Serial loops of whole-array statements, each a loop nest nested in the
# kernel's own loops: the outer loop is short (8), so only the nests'
# polls can stop it; the statements run a billion times otherwise.  With
# overlapping tensor arguments (the may_alias specialisation) nothing is
# parallel: every nest is a serial loop.
ARRAYS_SCRIPT = r'''
import sys, threading, time
sys.path.insert(0, {pkg!r})
import numpy as np
import asc

@asc.kernel
def work(a: asc.Tensor[asc.float64, 2], b: asc.Tensor[asc.float64, 2],
         m: asc.Tensor[asc.int64, 2], out: asc.Tensor[asc.float64, 1],
         flag: asc.Tensor[asc.int64, 1], inner: asc.int64):
    asc.atomic_add(flag, 0, 1)
    s = 0.0
    for r in range(8):
        for q in range(inner):
            {stmt}
    out[0] = s

flag = np.zeros(4, np.int64)
a = np.random.rand(300, 300)
m = np.ones((40, 40), np.int64)
{watch}
try:
    work(a, a[::-1] if {alias} else a.copy(), m, np.zeros(1), flag, 10**9)
except KeyboardInterrupt:
    print("interrupted", time.monotonic(), flush=True)
else:
    print("returned", flush=True)
'''


@pytest.mark.parametrize("stmt,alias", [
    ("c = np.cumsum(a, axis=1); s += c[0, 0]", False),
    ("c = np.cumsum(a, axis=1); s += c[0, 0]", True),
    ("s += np.sum(a)", True),
    ("h = np.max(a, axis=0); s += h[0]", True),
    ("b[...] = a * 2.0 + 1.0", True),
    ("e = a.T.copy(); s += e[0, 0]", True),
    ("g = np.dot(m, m); s += g[0, 0]", True),
])
def test_sigint_interrupts_serial_array_loops(tmp_path, stmt, alias):
    # a hang guard: Ctrl-C acts within milliseconds (docs/streams.md, "What
    # is polled"); the nests' own polls are what stops these loops, and a
    # kernel whose nests do not poll runs on past the 30 s the child gets
    latency, lines, err, rc = interrupt(
        tmp_path / "arrays.py",
        ARRAYS_SCRIPT.format(pkg=os.path.join(ROOT, "bindings", "python"),
                             stmt=stmt, alias=alias, watch=WATCH))
    print(f"{stmt}: KeyboardInterrupt raised {latency * 1000:.1f} ms after "
          f"SIGINT")
    assert latency < 5.0


def test_stream_cancel_from_thread():
    flag = np.zeros(4, np.int64)
    s = asc.Stream()

    @asc.kernel
    def spin2(flag):
        asc.atomic_add(flag, 0, 1)
        n = 0
        while True:
            n += 1
            if n < 0:
                flag[1] = n

    spin2[1, s](flag)

    def cancel():
        while flag[0] == 0:
            time.sleep(0.001)
        time.sleep(0.05)
        s.cancel()

    t = threading.Thread(target=cancel)
    t.start()
    with pytest.raises(asc.CancelledError, match="cancelled"):
        s.synchronize()
    t.join()
    s.synchronize()   # reported once; usable again
    s.cancel()        # idle: nothing to report
    s.synchronize()
    assert issubclass(asc.LaunchTimeoutError, TimeoutError)
