"""Tiered compilation (docs/latency.md, "Tiered compilation"): a cache miss
of a small launch runs a quick (-O0) build, the second launch asks for the
optimised (-O3) build in the background, a heavy launch waits for it; both
tiers give the same bits; exit and fork() with a build in flight.

Each case runs in a new process with its own kernel cache, ASC_TIER and a
trace (ASC_TRACE): the cache is opened once per process, and the trace
tells which tier each launch ran."""
import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

KERNELS = textwrap.dedent('''
    import math

    import numpy as np

    import asc


    @asc.kernel
    def mix(x, y, out, acc):
        n = x.shape[0]
        for i in asc.prange(n):
            a = x[i]
            out[i] = (math.exp(a) * math.sin(a) + math.log1p(abs(a))
                      - math.tanh(a) + math.sqrt(abs(a)) + math.atan2(a, y[i])
                      + abs(a) ** 1.7 + math.cos(a * y[i]) / (1.5 + y[i] * y[i]))
        s = 0.0
        for i in range(n):
            s += x[i] * y[i]
        acc[0] = s
        acc[1] = np.sum(np.exp(x) * y)
        acc[2] = np.max(np.abs(x - y))


    @asc.kernel
    def checked(a, limit):
        for i in range(a.shape[0]):
            if a[i] > limit:
                raise ValueError("element above the limit")


    @asc.kernel
    def loops(a, n):
        for i in range(a.shape[0]):
            t = 0.0
            for j in range(n):
                t += math.sin(a[i] + j)
            a[i] = t


    @asc.kernel
    def cmul(a, b, out):
        out[:] = a * b


    @asc.kernel
    def steps(a, t_end, dt):
        n = int(t_end / dt)          # a trip count made from floats
        for k in range(n):
            a[0] += dt


    @asc.kernel
    def halve(a, eps):
        x = a[0]
        while x > eps:               # no trip count at all
            x = x / 2.0
        a[1] = x


    @asc.kernel
    def spin(a, reps):
        for r in range(reps):
            for i in range(a.shape[0]):
                a[i] = math.sin(a[i]) + 1.0
''')

CHILD = textwrap.dedent('''
    import json, os, sys, time
    import numpy as np
    import asc

    mod = asc.compile(sys.argv[1])
    case = sys.argv[2]
    rng = np.random.default_rng(7)
    out = {}

    def mix_bits(dt, n):
        x = rng.standard_normal(n).astype(dt)
        y = rng.standard_normal(n).astype(dt)
        res = []
        for _ in range(2):
            o = np.zeros(n, dt)
            acc = np.zeros(3, dt)
            mod.mix(x, y, o, acc)
            res.append(o.tobytes() + acc.tobytes())
        return res

    def raise_message():
        try:
            mod.checked(np.array([1.0, 5.0, 2.0]), 3.0)
        except ValueError as e:
            return str(e)
        return None

    if case == "bits":
        for dt in ("float32", "float64"):
            a, b = mix_bits(dt, 1000)
            out[dt] = a == b
            out[dt + "-finite"] = bool(np.isfinite(np.frombuffer(a, dt)[:1000]).all())
        out["raise"] = [raise_message(), raise_message()]
        # nan signs: CPython's complex product, both tiers
        inf, nan = float("inf"), float("nan")
        ca = np.array([complex(inf, nan), complex(inf, inf), 1 + 2j, complex(0, inf)])
        cb = np.array([1 + 0j, 0j, complex(nan, 0), complex(0, nan)])
        want = np.array([complex(x) * complex(y) for x, y in zip(ca, cb)]).tobytes()
        res = []
        for _ in range(2):
            o = np.zeros(4, complex)
            mod.cmul(ca, cb, o)
            res.append(o.tobytes())
        out["cmul"] = [r == want for r in res]
    elif case == "background":
        x = np.linspace(-2, 2, 64)
        o = np.zeros(64); acc = np.zeros(3)
        mod.mix(x, x[::-1].copy(), o, acc)
        first = o.tobytes() + acc.tobytes()
        mod.mix(x, x[::-1].copy(), o, acc)      # asks for the -O3 build
        cache = os.environ["ASC_CACHE_DIR"]
        deadline = time.time() + 600
        while time.time() < deadline:
            n = sum(f.endswith(".so") for _, _, fs in os.walk(cache) for f in fs)
            if n >= 2:
                break
            time.sleep(0.05)
        # published; the swap follows (loading it, at nice 10): a heavy
        # launch waits for it rather than guess how long that takes
        os.environ["ASC_TIER_BYTES"] = "0"
        mod.mix(x, x[::-1].copy(), o, acc)
        out["entries"] = n
        out["same"] = first == o.tobytes() + acc.tobytes()
    elif case == "policy":
        # small arrays: quick; big arrays, a big loop bound: -O3 at once
        mod.mix(np.ones(8), np.ones(8), np.zeros(8), np.zeros(3))
        mod.mix(np.ones(1 << 16), np.ones(1 << 16), np.zeros(1 << 16), np.zeros(3))
        mod.loops(np.ones(4), 1000)
        mod.checked(np.ones(4), 3.0)
        # small arguments, but work they do not bound: -O3 at once
        mod.steps(np.zeros(2), 1.0, 0.25)
        mod.halve(np.array([1.0, 0.0]), 0.1)
    elif case == "slow":
        # the quick code's launches ran ASC_TIER_SLOW_US or longer: the
        # second launch builds -O3 itself and runs it
        a = np.ones(64)
        mod.spin(a, 200)
        first = a.copy()
        a[:] = 1.0
        mod.spin(a, 200)
        out["same"] = a.tobytes() == first.tobytes()
    elif case == "exit":
        x = np.ones(8)
        mod.mix(x, x, np.zeros(8), np.zeros(3))
        mod.mix(x, x, np.zeros(8), np.zeros(3))   # queues -O3, then exits
        deadline = time.time() + 120
        while not os.path.exists(os.environ["SLOWCC_PIDFILE"]) and time.time() < deadline:
            time.sleep(0.02)
    elif case == "fork":
        x = np.linspace(-1, 1, 16)
        o = np.zeros(16); acc = np.zeros(3)
        mod.mix(x, x, o, acc)
        first = o.tobytes() + acc.tobytes()
        mod.mix(x, x, o, acc)            # queued or building in the parent
        # with a slow compiler: fork once the builder holds the lock in cc
        deadline = time.time() + 120
        while ("SLOWCC_PIDFILE" in os.environ and time.time() < deadline and
               not os.path.exists(os.environ["SLOWCC_PIDFILE"])):
            time.sleep(0.02)
        pid = os.fork()
        if pid == 0:
            os.environ["ASC_TIER_BYTES"] = "0"   # heavy: needs the -O3 code
            o2 = np.zeros(16); acc2 = np.zeros(3)
            t0 = time.monotonic()
            mod.mix(x, x, o2, acc2)
            if "CHILD_SECONDS" in os.environ:
                with open(os.environ["CHILD_SECONDS"], "w") as f:
                    f.write(str(time.monotonic() - t0))
            os._exit(0 if o2.tobytes() + acc2.tobytes() == first else 3)
        _, status = os.waitpid(pid, 0)
        out["child"] = os.waitstatus_to_exitcode(status)
    print(json.dumps(out))
''')


# ASC_TIER_SLOW_US for the cases that need the background build: quick
# launches faster than 1000 s leave the -O3 build to the builder thread.
BACKGROUND = "1000000000"


def run_case(tmp_path, case, **env):
    src = tmp_path / "tiered.py"
    src.write_text(KERNELS)
    trace = tmp_path / f"{case}.json"
    e = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "bindings", "python"),
             ASC_CACHE_DIR=str(tmp_path / "cache"), ASC_TRACE=str(trace))
    e.pop("ASC_TIER", None)
    e.pop("ASC_TIER_BYTES", None)
    e.pop("ASC_TIER_SLOW_US", None)
    e.update(env)
    r = subprocess.run([sys.executable, "-c", CHILD, str(src), case], env=e,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    with open(trace) as f:
        ev = json.load(f)
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    return json.loads(r.stdout.strip().splitlines()[-1]), ev


def named(events, name):
    return [x for x in events if x.get("name") == name]


def launches(events, kernel):
    return sorted(x["ts"] for x in named(events, kernel) if x.get("cat") == "launch")


def test_tiers_give_the_same_bits(tmp_path):
    """ASC_TIER=1 with every later launch heavy (ASC_TIER_BYTES=0): each
    specialisation's first launch runs -O0 code, its second waits for the
    -O3 build and runs it (the swap lies between the two launches).
    Math functions, a prange loop, reductions, numpy reductions, a raised
    exception and complex products of infinities and nans (CPython's nan
    signs) agree bit for bit."""
    out, ev = run_case(tmp_path, "bits", ASC_TIER="1", ASC_TIER_BYTES="0")
    assert out["float32"] and out["float64"], out
    assert out["float32-finite"] and out["float64-finite"], out
    assert out["raise"][0] is not None and out["raise"][0] == out["raise"][1], out
    assert out["cmul"] == [True, True], out
    assert len(named(ev, "quick tier")) == 4, [x["name"] for x in ev]
    assert len(named(ev, "tier up")) == 4
    swaps = sorted(x["ts"] for x in named(ev, "tier swap"))
    assert len(swaps) == 4
    mix = launches(ev, "mix")
    assert len(mix) == 4
    # f32: launch, swap, launch; then f64 the same
    assert mix[0] < swaps[0] < mix[1] < mix[2] < swaps[1] < mix[3], (mix, swaps)


def test_second_launch_tiers_up_in_the_background(tmp_path):
    """ASC_TIER=1, ASC_TIER_SLOW_US above the launch's time: the second
    (small) launch queues the
    -O3 build and runs the quick code; the builder thread publishes the
    -O3 entry to the cache beside the quick one and swaps; the later
    launch (heavy, so it waits for the swap) gives the same bits."""
    out, ev = run_case(tmp_path, "background", ASC_TIER="1", ASC_TIER_SLOW_US=BACKGROUND)
    assert out["entries"] == 2 and out["same"], out
    up = named(ev, "tier up")
    swap = named(ev, "tier swap")
    assert len(up) == 1 and len(swap) == 1
    main_tid = named(ev, "quick tier")[0]["tid"]
    assert up[0]["tid"] != main_tid        # built by the background thread
    mix = launches(ev, "mix")
    assert mix[1] < swap[0]["ts"] < mix[2], (mix, swap)


def check_auto_policy(ev):
    quick = [x["args"]["detail"] for x in named(ev, "quick tier")]
    assert sorted(quick) == ["checked", "mix"], quick
    # the big launch of mix has the small one's signature: heavy, it
    # built the -O3 code itself and ran it
    assert [x["args"]["detail"] for x in named(ev, "tier up")] == ["mix"]
    assert len(named(ev, "tier swap")) == 1
    # steps and halve were built once each, at -O3 (a quick build that
    # the analysis refuses is not compiled)
    assert len(named(ev, "C compiler")) == 2 + 1 + 1 + 1 + 1, \
        [x["name"] for x in ev]


def test_auto_policy_quick_only_for_small_launches(tmp_path):
    """ASC_TIER=auto: a miss of a launch with small arrays and small
    integer scalars is quick; one whose arrays span more than 64 KiB, or
    whose integer scalar (a loop bound) exceeds 256, is built -O3 at once,
    and so is a kernel whose loops its arguments do not bound (a trip
    count made from floats, a while loop).  A kernel called once never
    builds -O3 in the background."""
    out, ev = run_case(tmp_path, "policy", ASC_TIER="auto")
    check_auto_policy(ev)


def test_unset_is_auto(tmp_path):
    """ASC_TIER unset is auto (docs/decisions.md, "Tiered compilation is
    on")."""
    out, ev = run_case(tmp_path, "policy")
    check_auto_policy(ev)


def test_second_launch_tiers_up_at_once(tmp_path):
    """The default (ASC_TIER unset, ASC_TIER_SLOW_US 0): a quick
    specialisation does not run its -O0 code a second time: its second
    launch builds the -O3 code on the calling thread, swaps and runs it,
    with the same bits."""
    out, ev = run_case(tmp_path, "slow")
    assert out["same"], out
    up = named(ev, "tier up")
    swap = named(ev, "tier swap")
    assert len(up) == 1 and len(swap) == 1, [x["name"] for x in ev]
    assert up[0]["tid"] == named(ev, "quick tier")[0]["tid"]
    spin = launches(ev, "spin")
    assert spin[0] < swap[0]["ts"] < spin[1], (spin, swap)


def test_fast_quick_code_tiers_up_in_the_background(tmp_path):
    """With ASC_TIER_SLOW_US far above the quick launch's time, the second
    launch queues the -O3 build for the background thread and runs the
    quick code again."""
    out, ev = run_case(tmp_path, "slow", ASC_TIER_SLOW_US=BACKGROUND)
    assert out["same"], out
    up = named(ev, "tier up")
    assert len(up) <= 1
    if up:
        assert up[0]["tid"] != named(ev, "quick tier")[0]["tid"]


def test_tier_zero_is_the_old_path(tmp_path):
    """ASC_TIER=0: no quick tier, no background build."""
    out, ev = run_case(tmp_path, "policy", ASC_TIER="0")
    assert named(ev, "quick tier") == [] and named(ev, "tier up") == []


# The first -O3 compile it runs hangs (until killed, or SLOWCC_SLEEP
# seconds); later ones compile.  Each -O3 run appends a line to
# SLOWCC_LOG when that is set.
SLOWCC = """#!/bin/sh
case " $* " in
*" -O3 "*) [ -n "$SLOWCC_LOG" ] && echo O3 >> "$SLOWCC_LOG"
           if [ ! -e "$SLOWCC_PIDFILE" ]; then
             echo $$ > "$SLOWCC_PIDFILE.tmp"
             mv "$SLOWCC_PIDFILE.tmp" "$SLOWCC_PIDFILE"
             sleep "${SLOWCC_SLEEP:-300}"
           fi ;;
esac
exec cc "$@"
"""


def test_exit_kills_the_background_compiler(tmp_path):
    """A process that exits while its -O3 build runs: the exit does not
    wait for it, the compiler's process group is killed, the cache holds
    the quick entry only, no work directory is left, and a new process
    builds the -O3 entry."""
    cc = tmp_path / "slowcc"
    cc.write_text(SLOWCC)
    cc.chmod(0o755)
    pidfile = tmp_path / "cc.pid"
    out, ev = run_case(tmp_path, "exit", ASC_TIER="1", ASC_TIER_SLOW_US=BACKGROUND,
                       ASC_CC=str(cc),
                       SLOWCC_PIDFILE=str(pidfile))
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):
        for _ in range(200):      # SIGKILL is delivered asynchronously
            os.kill(pid, 0)
            time.sleep(0.05)
    files = [f for _, _, fs in os.walk(tmp_path / "cache") for f in fs]
    dirs = [d for _, ds, _ in os.walk(tmp_path / "cache") for d in ds]
    assert sum(f.endswith(".so") for f in files) == 1, files
    assert not any(d.startswith(".tmp-") for d in dirs), dirs
    out, ev = run_case(tmp_path, "policy", ASC_TIER="0", ASC_CC=str(cc),
                       SLOWCC_PIDFILE=str(pidfile))
    # mix (its -O3 entry was never made), loops, checked, steps, halve
    assert len(named(ev, "C compiler")) == 5


def test_fork_child_builds_the_parents_pending_job(tmp_path):
    """fork() while the -O3 build is queued or running in the parent's
    builder thread: the child has no such thread; its heavy launch builds
    the job itself and gets the same bits."""
    out, ev = run_case(tmp_path, "fork", ASC_TIER="1", ASC_TIER_SLOW_US=BACKGROUND)
    assert out["child"] == 0, out


def test_fork_child_does_not_wait_for_a_lock_it_inherited(tmp_path):
    """fork() while the parent's builder holds the entry's cache lock (its
    -O3 compile running): the lock is flock's, shared with the child
    through the inherited descriptor, so closing the parent's copy alone
    left it held for the child's life.  The child's build of the same key
    then waited for itself until ASC_CACHE_LOCK_TIMEOUT_MS and compiled a
    second time, or found the entry once it gave up.  Now the parent's
    release frees it: the child waits for the parent's build (seconds) and
    loads its entry; it never waits out the lock's 60 s timeout."""
    cc = tmp_path / "slowcc"
    cc.write_text(SLOWCC)
    cc.chmod(0o755)
    log = tmp_path / "o3.log"
    out, ev = run_case(tmp_path, "fork", ASC_TIER="1", ASC_TIER_SLOW_US=BACKGROUND,
                       ASC_CC=str(cc),
                       SLOWCC_PIDFILE=str(tmp_path / "cc.pid"),
                       SLOWCC_SLEEP="2", SLOWCC_LOG=str(log),
                       ASC_CACHE_LOCK_TIMEOUT_MS="60000",
                       CHILD_SECONDS=str(tmp_path / "child.txt"))
    assert out["child"] == 0, out
    assert log.read_text().split() == ["O3"], log.read_text()
    # not a speed figure: the lock's timeout, which only a wait for a
    # lock nobody releases reaches
    assert float((tmp_path / "child.txt").read_text()) < 50
