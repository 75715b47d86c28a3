"""The libasc benchmark suite: asc kernels against hand-written C (serial
and OpenMP, built with libasc's kernel flags), numpy, numba and CPython,
and the runtime's launch, allocation, compile-cache and Python-launch costs
against their references, all measured in the same run.

Run it through bench/run.sh, which builds what it needs first:

    bash bench/run.sh            # full suite, 2-4 minutes on 2 cores (under 10)
    bash bench/run.sh --quick    # tiny sizes, well under a minute

Each kernel implementation is checked against numpy before it is timed; one
that fails to compile, crashes, times out or gives a wrong result is
reported as FAILED with the reason and is not timed.  Times are medians of
repetitions that alternate between implementations (so a noisy neighbour
slows them alike), with min and max.  The ratio column is
reference time / asc time: above 1, asc is faster.

Results go to the console and to bench/results/<date>.json, .csv and .png
(--out-dir changes the folder).
"""
import argparse
import datetime
import gc
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from cases import (KERNELS, Conv2d, Failed, Histogram, Libs, Matmul,  # noqa: E402
                   Saxpy, Softmax, VectorAdd, case_full_arg, case_small_arg,
                   first_line, make_cases, ptr)
from report import add_ratios, group, print_table, write_outputs  # noqa: E402

MiB = 1 << 20

# ---------------------------------------------------------------- sizes

FULL = {
    "n": 16 * MiB,            # vector add, saxpy, histogram, dot
    "matmul": [(512, 3), (1024, 1)],   # (size, repetitions)
    "matmul_modes": (1024, 3),         # naive text, default and fastmath
    "matmul_op": (1024, 5),            # c[:, :] = a @ b (BLAS)
    "conv": ((1, 16, 64, 64), (32, 16, 3, 3)),
    "softmax": (4096, 1024),
    "transpose": 4096,
    "py_transpose": 256,
    "reps": 7,
    "py_n": 200_000,          # CPython sizes, extrapolated per element
    "py_matmul": 48,
    "py_conv": ((1, 4, 16, 16), (8, 4, 3, 3)),
    "py_softmax_rows": 8,
    "py_reps": 3,
    "case_timeout": 300,
    "launch_args": ["20000", "1000000"],
    "pool_pairs": "300000",
    "py_launch": (20000, 7),
    "compile_reps": 3,
}
QUICK = {
    "n": 1 << 16,
    "matmul": [(64, 2), (96, 2)],
    "matmul_modes": (96, 2),
    "matmul_op": (96, 2),
    "conv": ((1, 4, 16, 16), (8, 4, 3, 3)),
    "softmax": (64, 128),
    "transpose": 100,
    "py_transpose": 16,
    "reps": 2,
    "py_n": 2000,
    "py_matmul": 12,
    "py_conv": ((1, 2, 8, 8), (2, 2, 3, 3)),
    "py_softmax_rows": 2,
    "py_reps": 1,
    "case_timeout": 120,
    "launch_args": ["500", "5000"],
    "pool_pairs": "2000",
    "py_launch": (200, 3),
    "compile_reps": 1,
}

IMPL_ORDER = ["asc", "C serial", "C OpenMP", "numpy", "numba", "numba parallel",
              "CPython"]


# ------------------------------------------------------------ measuring

# numpy's OpenBLAS (0.3.31 here) leaves its worker threads spinning
# (sched_yield) for its THREAD_TIMEOUT after each call, about 0.1 s here:
# after one 1024^3 sgemm the process used a whole core while it slept 20
# or 100 ms, 0.39 of one over 250 ms (getrusage; none with
# OPENBLAS_THREAD_TIMEOUT=4).  A kernel timed within that window shares
# the 2 cores with the spinner: the suite's `c[:, :] = a @ b` ran at one
# core's speed (0.52x numpy) when timed 20 ms after numpy's call, 0.93-1.0x
# alone (bench/blas_settle.py measures both).  So the cases whose
# reference leaves OpenBLAS threads spinning (Case.blas: the matmul rows
# and conv2d's tensordots) pause longer before each timed call, well past
# the spin, for every implementation alike (ASC_BENCH_BLAS_SETTLE_S);
# asc and the reference still alternate in one process and their medians
# are compared (docs/optimizer.md, "Measured").
SETTLE_S = 0.02
BLAS_SETTLE_S = float(os.environ.get("ASC_BENCH_BLAS_SETTLE_S", "0.25"))


def settle(pause=SETTLE_S):
    """Lets the worker threads of the implementation measured last (the
    runtime's team, a BLAS's threads) stop spinning, so they do not steal
    the 2 cores from the next one."""
    time.sleep(pause)


def time_call(fn, pause=SETTLE_S):
    settle(pause)
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


class Progress:
    """JSON lines that tell the parent what the child finished, so that a
    crash or a hang is charged to the implementation that was running."""

    def __init__(self, path):
        self.f = open(path, "a", buffering=1)

    def write(self, **kw):
        self.f.write(json.dumps(kw) + "\n")
        self.f.flush()


def run_case_child(case_index, sizes, libs, skip, progress):
    case = make_cases(sizes, libs)[case_index]
    full = case.inputs(case_full_arg(case, sizes))
    exp = case.expected(full)
    if isinstance(case, Conv2d):
        case.current_w_size = int(np.prod(full["w"].shape[1:]))
    reps = case.reps or sizes["reps"]
    runners = {}
    variants = {"asc": lambda: case.run_asc(full),
                "C serial": lambda: case.run_c(full, libs.c("C serial")),
                "C OpenMP": lambda: case.run_c(full, libs.c("C OpenMP")),
                "numpy": lambda: case.run_numpy(full),
                "numba": lambda: case.run_py(full, libs.numba(case.py_name, False)),
                "numba parallel": lambda: case.run_py(
                    full, libs.numba("histogram_private" if isinstance(case, Histogram)
                                     else case.py_name, True))}
    if isinstance(case, VectorAdd) and not isinstance(case, Saxpy):
        variants["STREAM triad (C OpenMP)"] = lambda: triad_runner(full, libs)
    if hasattr(case, "variants"):
        variants = case.variants(full)
    progress.write(event="case", name=case.name, size=case.size_text(full), unit=case.unit,
                   note=case.note, reps=reps)
    for impl, make in variants.items():
        if impl in skip:
            continue
        progress.write(event="start", impl=impl, phase="check")
        try:
            fn = make()
            poison(full)
            out = fn()
            if impl.startswith("STREAM"):
                reason = None
            else:
                reason = case.check(out, exp)
            if reason is None and impl != "numpy" and reps > 1:
                # Run twice (unless a run is seconds long, as for matmul
                # 1024): a kernel that only works once is wrong.
                poison(full)
                out = fn()
                reason = None if impl.startswith("STREAM") else case.check(out, exp)
            if reason is not None:
                raise Failed(f"wrong result: {reason}")
        except Failed as exc:
            progress.write(event="failed", impl=impl, reason=str(exc))
            continue
        except Exception as exc:
            progress.write(event="failed", impl=impl, reason=first_line(exc))
            continue
        runners[impl] = fn
    times = {impl: [] for impl in runners}
    pause = BLAS_SETTLE_S if case.blas else SETTLE_S
    gc.disable()
    for _ in range(reps):
        for impl, fn in runners.items():
            progress.write(event="start", impl=impl, phase="time")
            times[impl].append(time_call(fn, pause))
    gc.enable()
    for impl, ts in times.items():
        progress.write(event="row", impl=impl, times=ts, work=case.work(full),
                       scale=1.0, note="")
    # CPython: the same loops at a smaller size, extrapolated per element.
    if "CPython" not in skip:
        progress.write(event="start", impl="CPython", phase="check")
        try:
            sys.path.insert(0, HERE)
            import py_loops
            fn_py = getattr(py_loops, case.py_name)
            small = case.inputs(case_small_arg(case, sizes))
            if isinstance(case, Conv2d):
                case.current_w_size = int(np.prod(small["w"].shape[1:]))
            run = case.run_py(small, fn_py)
            reason = case.check(run(), case.expected(small))
            if reason is not None:
                raise Failed(f"wrong result: {reason}")
            ts = [time_call(run) for _ in range(sizes["py_reps"])]
            scale = case.elements(full) / case.elements(small)
            progress.write(event="row", impl="CPython", times=[t * scale for t in ts],
                           work=case.work(full), scale=scale,
                           note=f"measured at {case.size_text(small)}, "
                                f"time x{scale:.4g} (per {'row' if isinstance(case, Softmax) else 'element' if not isinstance(case, (Matmul, Conv2d)) else 'multiply-add'})")
        except Failed as exc:
            progress.write(event="failed", impl="CPython", reason=str(exc))
        except Exception as exc:
            progress.write(event="failed", impl="CPython", reason=first_line(exc))
    progress.write(event="done")


def poison(inp):
    """Fills the output arrays before a checked run, so that an
    implementation that writes nothing cannot pass on what the previous
    one left there."""
    for key in ("c", "out", "hist"):
        if key in inp:
            inp[key].fill(-1 if inp[key].dtype.kind == "i" else np.nan)


def triad_runner(inp, libs):
    lib = libs.c("C OpenMP")
    b, c = inp["a"], inp["b"]
    a = np.zeros_like(b)
    return lambda: (lib.ref_triad(ptr(a), ptr(b), ptr(c), np.float32(3.0), a.size), a)[1]


def run_case(case_index, args, env):
    """Runs one case in a child process; restarts it without the
    implementation that crashed or hung, until it completes."""
    skip, rows, info = [], [], {}
    failed = {}
    for attempt in range(len(IMPL_ORDER) + 2):
        fd, path = tempfile.mkstemp(prefix="asc-bench-", suffix=".jsonl")
        os.close(fd)
        cmd = [sys.executable, os.path.abspath(__file__), "--child-case", str(case_index),
               "--progress", path, "--build", args.build] + \
              (["--quick"] if args.quick else []) + \
              [x for s in skip for x in ("--skip", s)]
        try:
            p = subprocess.run(cmd, env=env, timeout=args.sizes["case_timeout"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            status = None if p.returncode == 0 else describe_rc(p.returncode, p.stdout)
        except subprocess.TimeoutExpired:
            status = f"timed out after {args.sizes['case_timeout']} s"
        events = [json.loads(line) for line in open(path) if line.strip()]
        os.unlink(path)
        running = None
        for e in events:
            if e["event"] == "case":
                info = e
            elif e["event"] == "start":
                running = e["impl"], e["phase"]
            elif e["event"] == "failed":
                failed[e["impl"]] = e["reason"]
            elif e["event"] == "row":
                rows.append(e)
        done = events and events[-1]["event"] == "done"
        if done:
            break
        if running is None:
            failed["(case)"] = status or "the child process stopped before running anything"
            break
        impl, phase = running
        failed[impl] = f"{status or 'the process stopped'} during {'the correctness check' if phase == 'check' else 'timing'}"
        skip.append(impl)
        # rows timed before the crash are dropped: their runs are redone.
        rows = [r for r in rows if r["impl"] == "CPython"]
    return info, rows, failed


def describe_rc(rc, out):
    tail = (out or "").strip().splitlines()[-1:] or [""]
    if rc < 0:
        import signal
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = str(-rc)
        return f"crashed ({name})"
    return f"exited {rc}: {tail[0][:200]}"


# ---------------------------------------------------------- runtime rows

def run_tool(cmd, env, timeout):
    try:
        p = subprocess.run(cmd, env=env, timeout=timeout, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    except subprocess.TimeoutExpired:
        raise Failed(f"timed out after {timeout} s")
    except OSError as exc:
        raise Failed(str(exc))
    if p.returncode != 0:
        raise Failed(describe_rc(p.returncode, p.stdout))
    return p.stdout


def parse_stats(text, pattern):
    """`stats` lines of bench/launch_latency and bench/pool_alloc."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"stats (.+) (\S+) (\S+) (\S+)$", line)
        if m:
            out[m.group(1)] = tuple(float(m.group(i)) for i in (2, 3, 4))
    return out


def row(section, bench, impl, med, lo, hi, unit, size="", note="", reps=None,
        rate=None, rate_unit="", status="ok", is_asc=None):
    return {"section": section, "benchmark": bench, "size": size, "impl": impl,
            "median": med, "min": lo, "max": hi, "unit": unit, "reps": reps,
            "rate": rate, "rate_unit": rate_unit, "ratio": None, "status": status,
            "note": note, "is_asc": impl.startswith("asc") if is_asc is None else is_asc}


def failed_row(section, bench, impl, reason, size=""):
    r = row(section, bench, impl, None, None, None, "", size=size, status="FAILED")
    r["note"] = reason
    return r


def launch_rows(args, env):
    exe = os.path.join(args.build, "bench", "launch_latency")
    bench = "launch round trip"
    try:
        text = run_tool([exe] + args.sizes["launch_args"], env, 300)
        st = parse_stats(text, "")
        a, o, r = st["asc_roundtrip_us"], st.get("openmp_roundtrip_us"), st["async_launches_per_s"]
    except (Failed, KeyError) as exc:
        return [failed_row("runtime", bench, "asc", f"bench/launch_latency: {exc}"),
                failed_row("runtime", "async launch", "asc", f"bench/launch_latency: {exc}")]
    size = f"{args.sizes['launch_args'][0]} launches x 9"
    rows = [row("runtime", bench, "asc (launch + stream sync)", *a, "us", size=size, reps=9,
                note="empty kernel, one block, empty parallel loop over all cores")]
    # The same in one call, where the caller runs the block
    # (docs/streams.md, "A launch the caller waits for"), against the
    # same OpenMP region.
    for key, what, impl in (
            ("asc_launch_and_sync_us", "one call", "asc (ascLaunchKernelAndSynchronize)"),
            ("asc_launch_sync_us", "thread's stream", "asc (ascLaunchKernelSync)")):
        if key in st:
            rows.append(row("runtime", f"{bench}, {what}", impl, *st[key], "us", size=size,
                            reps=9, note="the same kernel, launched and waited for in one call"))
            if o:
                rows.append(row("runtime", f"{bench}, {what}", "OpenMP empty parallel for",
                                *o, "us", size=size, reps=9))
    if o:
        rows.append(row("runtime", bench, "OpenMP empty parallel for", *o, "us", size=size, reps=9))
    # async: time per launch = 1 / rate; the max time is the min rate.
    rows.append(row("runtime", "async launch", "asc (back-to-back launches)",
                    1e6 / r[0], 1e6 / r[2], 1e6 / r[1], "us",
                    size=f"{args.sizes['launch_args'][1]} launches", reps=9,
                    rate=r[0], rate_unit="launches/s",
                    note="empty one-block kernel, one stream, one sync"))
    if o:
        rows.append(row("runtime", "async launch", "OpenMP empty parallel for", *o, "us",
                        size=size, reps=9, note="the same OpenMP region as above"))
    return rows


def pool_rows(args, env):
    exe = os.path.join(args.build, "bench", "pool_alloc")
    try:
        text = run_tool([exe, args.sizes["pool_pairs"]], env, 300)
    except Failed as exc:
        return [failed_row("runtime", "pool alloc+free", "asc", f"bench/pool_alloc: {exc}")]
    rows = []
    names = [("ascMallocAsync/ascFreeAsync", "asc pool (ascMallocAsync/ascFreeAsync)"),
             ("mallocx/sdallocx (tcache)", "jemalloc mallocx/sdallocx (tcache)"),
             ("mallocx/sdallocx (arena, no tcache)", "jemalloc private arena, no tcache"),
             ("malloc/free", "malloc/free")]
    for size, label in ((64, "64 B"), (4096, "4 KiB"), (1 << 20, "1 MiB")):
        for key, impl in names:
            m = re.search(rf"^stats {re.escape(key)} {size} (\S+) (\S+) (\S+)$", text, re.M)
            if not m:
                rows.append(failed_row("runtime", f"pool alloc+free {label}", impl,
                                       "no stats line from bench/pool_alloc"))
                continue
            med, lo, hi = (float(x) for x in m.groups())
            # pairs/s -> ns per pair; slowest run = lowest rate.
            rows.append(row("runtime", f"pool alloc+free {label}", impl,
                            1e9 / med, 1e9 / hi, 1e9 / lo, "ns", reps=7,
                            size=f"{args.sizes['pool_pairs']} pairs", rate=med,
                            rate_unit="pairs/s",
                            note="malloc is glibc's" if key == "malloc/free" else ""))
    return rows


COMPILE_CHILD = r"""
import json, os, sys, time
t0 = time.perf_counter()
import numpy as np
import asc
t1 = time.perf_counter()
text = open(sys.argv[1]).read()
x = np.ones((4, 8), np.float32); out = np.empty_like(x)
t = time.perf_counter()
m = asc.compile(text, filename=sys.argv[1])
m.softmax(x, out)
asc_s = time.perf_counter() - t
assert abs(float(out.sum()) - 4.0) < 1e-4, out
print(json.dumps({"asc_s": asc_s, "import_s": t1 - t0}))
"""

NUMBA_COMPILE_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import numba
import py_loops
x = np.ones((4, 8), np.float32); out = np.empty_like(x)
t = time.perf_counter()
f = numba.njit(parallel=True)(py_loops.softmax)
f(x, out)
print(json.dumps({"numba_s": time.perf_counter() - t}))
"""


# Cold compiles with rows of their own besides the softmax (docs/latency.md):
# the seed's conv2d and the 30-line array kernel, each compiled from its file
# in a new process with an empty kernel cache and called once on small
# arrays.  (benchmark, file, kernel, arguments, numba reference in py_loops)
COLD_CASES = (
    ("compile conv2d (seed): cold", os.path.join(ROOT, "examples", "python", "seed_kernels.asc"),
     "conv2d", "np.ones((1, 4, 8, 8), np.float32), np.ones((8, 4, 3, 3), np.float32), "
     "np.empty((1, 8, 6, 6), np.float32)", "conv2d"),
    ("compile 30-line array: cold", os.path.join(HERE, "kernels", "latency_array.py"),
     "score_rows", "np.random.default_rng(1).random((64, 32)), np.ones(32), np.zeros(32), "
     "np.empty((64, 8))", None),
)

COLD_CHILD = r"""
import json, sys, time
import numpy as np
import asc
path, kernel, args = sys.argv[1:4]
a = eval(args, {"np": np})
t = time.perf_counter()
getattr(asc.compile(path), kernel)(*a)
print(json.dumps({"asc_s": time.perf_counter() - t}))
"""

NUMBA_COLD_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import numba
import py_loops
a = eval(sys.argv[3], {"np": np})
t = time.perf_counter()
numba.njit(parallel=True)(getattr(py_loops, sys.argv[2]))(*a)
print(json.dumps({"numba_s": time.perf_counter() - t}))
"""


def cold_tier():
    """ASC_TIER of the cold-compile rows: the caller's, unset meaning the
    library's default, auto (bench/run.sh keeps it in ASC_BENCH_TIER and
    times the other rows with ASC_TIER=0)."""
    return os.environ.get("ASC_BENCH_TIER", os.environ.get("ASC_TIER", "auto"))


def cold_case_rows(args, env, softmax_cold):
    """The rows of COLD_CASES: asc against numba's cold compile of the same
    loops where py_loops has them, else against the softmax's cold compile
    of the same run (softmax_cold, seconds)."""
    reps = args.sizes["compile_reps"]
    rows = []
    for bench, path, kernel, expr, nb_name in COLD_CASES:
        asc_s, nb = [], []
        try:
            for _ in range(reps):
                cache = tempfile.mkdtemp(prefix="asc-bench-cache-")
                try:
                    out = run_tool([sys.executable, "-c", COLD_CHILD, path, kernel, expr],
                                   dict(env, ASC_CACHE_DIR=cache, ASC_TIER=cold_tier()),
                                   300)
                finally:
                    shutil.rmtree(cache, ignore_errors=True)
                asc_s.append(json.loads(out.strip().splitlines()[-1])["asc_s"])
        except Failed as exc:
            rows.append(failed_row("runtime", bench, "asc cold (empty cache dir)", str(exc)))
            continue
        rows.append(row("runtime", bench, "asc cold (empty cache dir)", *ms(asc_s), "ms",
                        reps=reps, note="asc.compile + first call, new process"))
        if nb_name is None:
            if softmax_cold:
                rows.append(row("runtime", bench, "asc softmax cold (same run)", *ms(softmax_cold),
                                "ms", reps=len(softmax_cold), is_asc=False,
                                note="the 4-line kernel's cold compile, for scale"))
            continue
        try:
            for _ in range(reps):
                out = run_tool([sys.executable, "-c", NUMBA_COLD_CHILD, HERE, nb_name, expr],
                               env, 300)
                nb.append(json.loads(out.strip().splitlines()[-1])["numba_s"])
            rows.append(row("runtime", bench, "numba @njit(parallel=True) cold", *ms(nb), "ms",
                            reps=reps, note="njit + first call, new process"))
        except Failed as exc:
            rows.append(failed_row("runtime", bench, "numba @njit(parallel=True) cold",
                                   "numba: not installed" if "No module named 'numba'" in str(exc)
                                   else str(exc)))
    return rows


def write_softmax_kernel(path):
    """The softmax kernel of suite_kernels.py alone in a file: what the
    compile rows (and bench/latency.py) compile."""
    src = open(KERNELS).read()
    with open(path, "w") as f:
        f.write("import math\n\nimport asc\n\n\n" + src[src.index("@asc.kernel\ndef softmax"):].split("\n\n\n")[0] + "\n")


def compile_rows(args, env):
    """Compile + first call of the softmax kernel (with its
    specialisation) in a fresh process: cold with an empty ASC_CACHE_DIR,
    then a cache hit from a new process on that directory."""
    reps = args.sizes["compile_reps"]
    cold, hit, nb = [], [], []
    text_path = os.path.join(tempfile.mkdtemp(prefix="asc-bench-src-"), "softmax_kernel.py")
    write_softmax_kernel(text_path)
    rows = []
    try:
        for _ in range(reps):
            cache = tempfile.mkdtemp(prefix="asc-bench-cache-")
            e = dict(env, ASC_CACHE_DIR=cache, ASC_TIER=cold_tier())
            out = run_tool([sys.executable, "-c", COMPILE_CHILD, text_path], e, 300)
            cold.append(json.loads(out.strip().splitlines()[-1])["asc_s"])
            out = run_tool([sys.executable, "-c", COMPILE_CHILD, text_path], e, 300)
            hit.append(json.loads(out.strip().splitlines()[-1])["asc_s"])
            shutil.rmtree(cache, ignore_errors=True)
    except Failed as exc:
        rows.append(failed_row("runtime", "compile softmax: cold", "asc", f"{exc}"))
    if cold:
        rows.append(row("runtime", "compile softmax: cache hit", "asc cache hit (new process)",
                        *ms(hit), "ms", reps=reps,
                        note="asc.compile + first call (specialise, load the cached .so)"))
        rows.append(row("runtime", "compile softmax: cache hit", "asc cold (empty cache dir)",
                        *ms(cold), "ms", reps=reps, is_asc=False,
                        note="the same, cold: front end, passes, cc, load"))
        rows.append(row("runtime", "compile softmax: cold", "asc cold (empty cache dir)",
                        *ms(cold), "ms", reps=reps, note="asc.compile + first call"))
    try:
        for _ in range(reps):
            out = run_tool([sys.executable, "-c", NUMBA_COMPILE_CHILD, HERE], env, 300)
            nb.append(json.loads(out.strip().splitlines()[-1])["numba_s"])
        rows.append(row("runtime", "compile softmax: cold", "numba @njit(parallel=True) cold",
                        *ms(nb), "ms", reps=reps, note="njit + first call, new process"))
    except Failed as exc:
        rows.append(failed_row("runtime", "compile softmax: cold", "numba @njit(parallel=True) cold",
                               "numba: not installed" if "No module named 'numba'" in str(exc)
                               else str(exc)))
    shutil.rmtree(os.path.dirname(text_path), ignore_errors=True)
    return rows + cold_case_rows(args, env, cold)


def ms(ts):
    return statistics.median(ts) * 1e3, min(ts) * 1e3, max(ts) * 1e3


def python_launch_child(args):
    sys.path.insert(0, HERE)
    import python_launch
    calls, repeat = args.sizes["py_launch"]
    rows, info = python_launch.measure(calls, repeat)
    print(json.dumps({"rows": rows, "info": info}))


def python_launch_rows(args, env):
    bench = "py launch"
    cmd = [sys.executable, os.path.abspath(__file__), "--child-python-launch",
           "--build", args.build] + (["--quick"] if args.quick else [])
    try:
        out = run_tool(cmd, env, 300)
        data = json.loads(out.strip().splitlines()[-1])
    except (Failed, ValueError) as exc:
        return [failed_row("runtime", bench, "asc", f"bench/python_launch.py: {exc}")]
    calls, repeat = args.sizes["py_launch"]
    rows = []
    for name, ts in data["rows"]:
        what = ("empty prange" if "empty" in name or name.startswith("python") else
                "500-float return" if "returning" in name else "64-float store")
        if isinstance(ts, str):
            rows.append(failed_row("runtime", f"{bench}: {what}", "asc", ts))
            continue
        if name.startswith("numpy"):
            rows.append(row("runtime", f"{bench}: {what}", "numpy a * 2.0",
                            statistics.median(ts), min(ts), max(ts), "us", reps=repeat,
                            size=f"{calls} calls", is_asc=False,
                            note="numpy's own expression, for scale"))
            continue
        if name.startswith("python"):
            rows.append(row("runtime", f"{bench}: {what}", "CPython no-op function call",
                            statistics.median(ts), min(ts), max(ts), "us", reps=repeat,
                            size=f"{calls} calls", is_asc=False,
                            note="the floor of any call from Python"))
            continue
        impl = ("asc" if name.startswith("asc") else
                "numba @njit" if "returning" in name else "numba @njit(parallel=True)")
        rows.append(row("runtime", f"{bench}: {what}", impl, statistics.median(ts), min(ts),
                        max(ts), "us", reps=repeat, size=f"{calls} calls",
                        note="synchronous call from Python"))
    if data["info"] is None:
        rows.append(failed_row("runtime", f"{bench}: empty prange",
                               "numba @njit(parallel=True)", "numba: not installed"))
    return rows


# --------------------------------------------------------------- machine

def sh(cmd):
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=30).stdout.strip()
    except Exception:
        return ""


def load_average():
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def machine_info(args):
    info = {"platform": platform.platform(), "python": sys.version.split()[0]}
    cpu = {}
    try:
        for line in open("/proc/cpuinfo"):
            k, _, v = line.partition(":")
            k = k.strip()
            if k in ("model name", "flags") and k not in cpu:
                cpu[k] = v.strip()
    except OSError:
        pass
    info["cpu"] = cpu.get("model name", platform.processor())
    flags = cpu.get("flags", "").split()
    info["cpu_flags"] = " ".join(flags)
    info["simd"] = " ".join(f for f in flags if f in (
        "sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_fp16",
        "avx512_bf16", "amx_tile"))
    info["cores_online"] = os.cpu_count()
    info["cores_usable"] = len(os.sched_getaffinity(0))
    try:
        kb = int(open("/proc/meminfo").readline().split()[1])
        info["memory"] = f"{kb / MiB:.1f} GiB"
    except (OSError, ValueError, IndexError):
        info["memory"] = "?"
    info["cc"] = sh(["sh", "-c", "${ASC_CC:-cc} --version | head -1"])
    try:
        info["kernel_flags"] = open(os.path.join(args.build, "bench", "bench_ref_flags.txt")).read().strip()
    except OSError:
        info["kernel_flags"] = "?"
    info["ASC_CFLAGS"] = os.environ.get("ASC_CFLAGS", "")
    info["cmake"] = sh(["cmake", "--version"]).splitlines()[0] if sh(["cmake", "--version"]) else ""
    info["libomp"] = "libgomp (gcc -fopenmp)"
    info["numpy"] = np.__version__
    info["OPENBLAS_CORETYPE"] = os.environ.get("OPENBLAS_CORETYPE", "(not set)")
    info["OMP_NUM_THREADS"] = os.environ.get("OMP_NUM_THREADS", "(not set)")
    try:
        from threadpoolctl import threadpool_info
        info["blas"] = [f"{p.get('internal_api')} {p.get('version')} ({p.get('architecture')}), "
                        f"{p.get('num_threads')} threads, {p.get('threading_layer')}"
                        for p in threadpool_info() if p.get("user_api") == "blas"]
        info["openmp_pools"] = [f"{p.get('prefix')} {p.get('num_threads')} threads"
                                for p in threadpool_info() if p.get("user_api") == "openmp"]
    except ImportError:
        cfg = np.show_config(mode="dicts") if "mode" in np.show_config.__code__.co_varnames else {}
        b = cfg.get("Build Dependencies", {}).get("blas", {})
        info["blas"] = [f"{b.get('name', '?')} {b.get('version', '')} (threadpoolctl not installed: "
                        "thread count unknown)"]
    try:
        import numba
        info["numba"] = f"{numba.__version__}, {numba.config.NUMBA_NUM_THREADS} threads"
    except ImportError:
        info["numba"] = "not installed"
    try:
        import asc
        p = asc.device_properties()
        info["asc"] = f"{asc.__version__}; device {p.name}, {p.cores} cores"
    except Exception as exc:
        info["asc"] = f"unavailable: {first_line(exc)}"
    info["git"] = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"])
    return info


# ---------------------------------------------------------------- report

def kernel_rows(args, env):
    rows = []
    cases = make_cases(args.sizes, Libs(args.build))
    for i, case in enumerate(cases):
        if args.case and not any(c in case.name for c in args.case.split(",")):
            continue
        t = time.perf_counter()
        print(f"  {case.name} ...", end="", flush=True)
        info, got, failed = run_case(i, args, env)
        print(f" {time.perf_counter() - t:.0f} s", flush=True)
        name, size, unit = info.get("name", case.name), info.get("size", ""), info.get("unit", case.unit)
        by_impl = {r["impl"]: r for r in got}
        impls = [x for x in IMPL_ORDER + ["STREAM triad (C OpenMP)"]
                 if x in by_impl or x in failed]
        # a case's own variants (case.variants) first, in its order
        impls = [x for x in dict.fromkeys(list(by_impl) + list(failed))
                 if x not in impls and x != "(case)"] + impls
        if "(case)" in failed:
            rows.append(failed_row("kernel", name, "asc", failed["(case)"], size))
            continue
        for impl in impls:
            if impl in failed:
                rows.append(failed_row("kernel", name, impl, failed[impl], size))
                continue
            r = by_impl[impl]
            ts = r["times"]
            med = statistics.median(ts)
            notes = [r["note"]] if r["note"] else []
            rows.append(row("kernel", name, impl, med * 1e3, min(ts) * 1e3, max(ts) * 1e3,
                            "ms", size=size, reps=len(ts),
                            rate=r["work"] / med / 1e9, rate_unit=unit,
                            note="; ".join(notes)))
            rows[-1]["times_ms"] = [t * 1e3 for t in ts]
        if info.get("note"):
            rows[-1]["case_note"] = info["note"]
            for r in rows:
                if r["benchmark"] == name:
                    r["case_note"] = info["note"]
    # vector add as a fraction of the triad of the same run
    triad = next((r for r in rows if r["impl"].startswith("STREAM") and r["status"] == "ok"), None)
    if triad:
        for r in rows:
            if r["benchmark"] == "vector add" and r["status"] == "ok" and r is not triad:
                frac = f"{r['rate'] / triad['rate']:.0%} of STREAM triad"
                r["note"] = f"{r['note']}; {frac}" if r["note"] else frac
    return rows


# ------------------------------------------------------------------ main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes, well under a minute")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="CMake build folder")
    ap.add_argument("--out-dir", help="default: bench/results, or BUILD/bench/results with --quick")
    ap.add_argument("--only", default="",
                    help="comma-separated: kernels,runtime, or one part of runtime: "
                         "launch,pool,compile,pylaunch")
    ap.add_argument("--case", default="",
                    help="comma-separated substrings: only the kernel cases whose "
                         "name holds one (e.g. 'matmul naive')")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 if a row FAILED (a missing optional package aside)")
    ap.add_argument("--child-case", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--child-python-launch", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--progress", help=argparse.SUPPRESS)
    ap.add_argument("--skip", action="append", default=[], help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.sizes = QUICK if args.quick else FULL
    args.build = os.path.abspath(args.build)
    if args.out_dir is None:
        args.out_dir = os.path.join(args.build, "bench", "results") if args.quick \
            else os.path.join(HERE, "results")

    if args.child_case is not None:
        run_case_child(args.child_case, args.sizes, Libs(args.build), set(args.skip),
                       Progress(args.progress))
        return
    if args.child_python_launch:
        python_launch_child(args)
        return

    started = datetime.datetime.now(datetime.timezone.utc)
    t0 = time.perf_counter()
    env = dict(os.environ)
    info = machine_info(args)
    info["loadavg_before"] = load_average()
    parts = set(args.only.split(",")) if args.only else {"kernels", "runtime"}
    rows = []
    if "kernels" in parts:
        print("kernels (each in its own process):", flush=True)
        rows += kernel_rows(args, env)
    runtime = (("launch latency", launch_rows, "launch"), ("pool alloc", pool_rows, "pool"),
               ("compile cold/hit", compile_rows, "compile"),
               ("Python launch", python_launch_rows, "pylaunch"))
    if "runtime" in parts or parts & {tag for _, _, tag in runtime}:
        print("runtime:", flush=True)
        for name, fn, tag in runtime:
            if "runtime" not in parts and tag not in parts:
                continue
            t = time.perf_counter()
            print(f"  {name} ...", end="", flush=True)
            rows += fn(args, env)
            print(f" {time.perf_counter() - t:.0f} s", flush=True)
    rows = group(rows)
    add_ratios(rows)
    info["loadavg_after"] = load_average()
    print_table(rows, info, args.quick)
    stem, how = write_outputs(rows, info, args, started)
    print(f"\nwrote {stem}.json, {stem}.csv, {stem}.png (chart: {how}); "
          f"suite took {time.perf_counter() - t0:.0f} s")
    failed = [r for r in rows if r["status"] != "ok" and "not installed" not in r["note"]]
    if failed:
        print(f"{len(failed)} rows FAILED")
        if args.strict:
            sys.exit(1)


if __name__ == "__main__":
    main()
