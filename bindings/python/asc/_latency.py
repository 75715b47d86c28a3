"""python -m asc profile-compile: where the time of a kernel's first call
goes, stage by stage (docs/latency.md).

    python -m asc profile-compile k.py --args "np.ones((4, 8), np.float32), \\
        np.empty((4, 8), np.float32)" [--kernel NAME] [--hit] [--cache-dir DIR]

Compiles FILE with asc.compile and calls the kernel once with the
arguments, inside a trace session (asc.profile), and prints the spans the
compile and the launch recorded on the way, nested as they ran: the
module's front end, the cache key, the cache lookup and (on a miss) the
front end again, type inference, lowering, every pass, C emission, the C
compiler, then dlopen and the launch.  Without --cache-dir the kernel cache
is a new empty directory (a cold compile); --hit then runs the same again
in a new process on that directory (a cache hit).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

# The trace categories of the compile's stages (jit/, compiler/).
_CATS = ("compile", "cache", "pass", "launch")


def _rows(events, main_tid):
    """(depth, name, ms) of the compile's spans and the launch, in the order
    they started, nested by containment."""
    spans = [e for e in events if e.get("ph") == "X" and e.get("cat") in _CATS
             and (e.get("tid") == main_tid or e.get("cat") == "launch")]
    spans.sort(key=lambda e: (e["ts"], -e.get("dur", 0.0)))
    rows, stack = [], []
    for e in spans:
        end = e["ts"] + e.get("dur", 0.0)
        while stack and e["ts"] >= stack[-1]:
            stack.pop()
        name = e["name"]
        if e["cat"] == "pass":
            name = "pass " + name
        elif e["cat"] == "launch":
            name = "launch " + name
        elif e["cat"] == "compile" and e.get("args", {}).get("detail", "").startswith(name + "("):
            name = "specialise " + e["args"]["detail"]
        rows.append((len(stack), name, e.get("dur", 0.0) / 1e3))
        stack.append(end)
    return rows


def _main_tid(events):
    """The thread that made the compile's spans (this one)."""
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "compile":
            return e.get("tid")
    return None


def profile_once(path, args_expr, kernel):
    """The table's data for one compile + first call in this process:
    (wall ms of asc.compile, wall ms of the first call, rows)."""
    import numpy as np
    import asc

    args = eval(args_expr, {"np": np, "asc": asc})  # the user's own text
    if not isinstance(args, tuple):
        args = (args,)
    with asc.profile() as prof:
        t0 = time.perf_counter()
        m = asc.compile(path)
        t1 = time.perf_counter()
        k = m[kernel] if kernel else m[m.kernel_names[0]]
        k(*args)
        t2 = time.perf_counter()
    events = prof.events
    return (t1 - t0) * 1e3, (t2 - t1) * 1e3, _rows(events, _main_tid(events))


def format_table(title, compile_ms, call_ms, rows):
    w = max([40] + [2 * (d + 1) + len(n) for d, n, _ in rows])
    lines = [title, "%-*s %10s" % (w, "stage", "ms")]
    lines.append("%-*s %10.3f" % (w, "asc.compile (wall)", compile_ms))
    lines.append("%-*s %10.3f" % (w, "first call (wall)", call_ms))
    for depth, name, ms in rows:
        lines.append("%-*s %10.3f" % (w, "  " * (depth + 1) + name, ms))
    lines.append("%-*s %10.3f" % (w, "total (wall)", compile_ms + call_ms))
    return "\n".join(lines)


def main(argv):
    ap = argparse.ArgumentParser(
        prog="python -m asc profile-compile",
        description="Times asc.compile and a kernel's first call, stage by stage.")
    ap.add_argument("file", help="the kernel file (never imported)")
    ap.add_argument("--args", required=True,
                    help="a Python expression (numpy is np) giving the call's arguments")
    ap.add_argument("--kernel", help="the kernel to call (default: the file's first)")
    ap.add_argument("--cache-dir", help="kernel cache to use as it is "
                    "(default: a new empty one, removed at the end)")
    ap.add_argument("--hit", action="store_true",
                    help="then the same in a new process on that cache (a cache hit)")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    own = a.cache_dir is None
    cache = tempfile.mkdtemp(prefix="asc-profile-cache-") if own else a.cache_dir
    # Read when the process first opens its kernel cache, which is below.
    os.environ["ASC_CACHE_DIR"] = cache
    try:
        c_ms, k_ms, rows = profile_once(a.file, a.args, a.kernel)
        if a.json:
            print(json.dumps({"compile_ms": c_ms, "call_ms": k_ms, "rows": rows}))
            return 0
        how = "empty kernel cache" if own else f"kernel cache {cache}"
        print(format_table(f"{a.file}: asc.compile + first call, {how}", c_ms, k_ms, rows))
        if a.hit:
            cmd = [sys.executable, "-m", "asc", "profile-compile", a.file, "--args", a.args,
                   "--cache-dir", cache, "--json"] + (["--kernel", a.kernel] if a.kernel else [])
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            d = json.loads(out.strip().splitlines()[-1])
            print()
            print(format_table(f"{a.file}: the same in a new process (cache hit)",
                               d["compile_ms"], d["call_ms"], d["rows"]))
    finally:
        if own:
            shutil.rmtree(cache, ignore_errors=True)
    return 0
