"""NPBench's numpy implementations run through libasc, decorator-only, against
numpy running the same file, in one process per benchmark.

NPBench (https://github.com/spcl/npbench) is not part of this repository:
the script reads a checkout of it at run time (bench_info/<name>.json for
the presets, the init function and the argument lists;
npbench/benchmarks/<path>/<module>.py for the inputs and
<module>_numpy.py for the implementation).

    git clone https://github.com/spcl/npbench ~/npbench
    bash bench/run.sh --quick                        # builds libasc and asc once
    python3 bench/npbench.py --npbench ~/npbench     # preset S, all 54
    python3 bench/npbench.py --npbench ~/npbench --preset M --reps 7 \\
        --only gemm,go_fast --json /tmp/npbench-M.json

Decorator-only: the text asc compiles is the numpy file with added lines
and nothing else changed:
  * `import asc`;
  * `@asc.kernel` above the benchmark's function (bench_info's func_name);
  * `@asc.func` above each module-level function that it calls, directly
    or through another such function.
An added line takes the place of a blank line between the top-level
statements where there is one, so the line numbers in diagnostics are the
file's; where there is none it is inserted and the numbers that messages
give are mapped back to the file's.  The text goes to asc.compile with the
file's path as its name.

Each benchmark runs in a child process (--timeout; a crash or a hang ends
that benchmark only, charged to the phase it was in).  The child makes the
inputs with NPBench's init function for the preset, runs numpy and asc once
each on fresh copies of the array arguments (np.copy, as NPBench), and
compares the returned values and every array argument after the call with
NPBench's rule: np.allclose(ref, val, rtol, atol), or else
norm(ref - val) / norm(ref) < norm_error (defaults 1e-5, 1e-8, 1e-5;
bench_info may set them); it also reports the largest absolute
difference.  Then it times numpy and asc on fresh copies, alternating
which goes first, --reps times (fewer where the pair takes long: at least
3 within --budget seconds, 1 where one pair alone exceeds it), and reports
medians.  Before each timed call
it pauses as bench/suite.py does (longer where the numpy text calls a BLAS,
whose threads keep spinning after a call).  numpy's BLAS runs with its
default thread count, which is recorded (threadpoolctl) and restored if
anything changed it.

A failure is classified: "compile error" (asc.CompileError at asc.compile
or the first call, which compiles the specialisation), "run error" (any
other exception from asc), "wrong result", "crash" or "timeout" (with the
phase), "init failed" / "numpy failed" (the reference itself).  The first
line of the message is shown.  Summary: compiled x/N, correct y/N, faster
than numpy z/y, and the geometric mean of numpy time / asc time over the
correct benchmarks.  --json writes every row, the times and the machine.
"""
import argparse
import ast
import datetime
import gc
import importlib.util
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))

from array_suite import reps_within  # noqa: E402
from cases import first_line  # noqa: E402
from suite import (BLAS_SETTLE_S, SETTLE_S, Progress, describe_rc,  # noqa: E402
                   load_average, settle)

# Calls that run on numpy's BLAS: its threads spin for a while after
# each, so the next timed call waits longer (bench/suite.py, SETTLE_S).
BLAS_TEXT = re.compile(r"[\w)\]]\s*@\s*[\w(]|np\.(dot|matmul|linalg|einsum|tensordot|inner|vdot)\b")


# ---------------------------------------------------------- the checkout

def read_infos(npbench):
    """bench_info/*.json of the checkout, by file stem, in name order."""
    folder = os.path.join(npbench, "bench_info")
    out = {}
    for fn in sorted(os.listdir(folder)):
        if fn.endswith(".json"):
            with open(os.path.join(folder, fn)) as f:
                out[fn[:-5]] = json.load(f)["benchmark"]
    return out


def bench_path(npbench, info, suffix):
    return os.path.join(npbench, "npbench", "benchmarks", info["relative_path"],
                        info["module_name"] + suffix + ".py")


def load_file(path, name):
    """Imports a file as a module of its own (not as part of a package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ------------------------------------------------- decorator-only rewrite

def reached_functions(tree, entry):
    """Module-level functions that `entry` calls, directly or through one
    another, in file order (entry excluded)."""
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    seen, todo = set(), [entry]
    while todo:
        for node in ast.walk(funcs[todo.pop()]):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                name = node.func.id
                if name in funcs and name != entry and name not in seen:
                    seen.add(name)
                    todo.append(name)
    return [n for n in funcs if n in seen]


def decorate(text, entry):
    """The decorator-only text (module docstring).  Returns (text,
    line_of, helpers): line_of[k] is the file's line of the new text's
    line k (1-based; None for an inserted line)."""
    tree = ast.parse(text)
    lines = text.split("\n")
    helpers = reached_functions(tree, entry)
    wanted = {entry: "@asc.kernel", **{h: "@asc.func" for h in helpers}}
    # the lines between top-level statements; a blank one may be taken
    free, prev_end = set(), 0
    first_def = None
    for node in tree.body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        free.update(k for k in range(prev_end + 1, start) if not lines[k - 1].strip())
        if isinstance(node, ast.FunctionDef) and first_def is None:
            first_def = start
        prev_end = node.end_lineno
    adds = {}       # file line before which a line is inserted -> texts
    replace = {}    # file line -> text
    taken = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in wanted:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            # the blank line right above the function, or above the
            # comment lines right above it
            k = start - 1
            while k > 0 and (lines[k - 1].lstrip().startswith("#")):
                k -= 1
            if k > 0 and k in free and k not in taken:
                replace[k] = wanted[node.name]
                taken.add(k)
            else:
                adds.setdefault(start, []).append(wanted[node.name])
    # `import asc`: the first free line after the last import and before
    # the first function, else a line of its own after the last import
    last_import = max([n.end_lineno for n in tree.body
                       if isinstance(n, (ast.Import, ast.ImportFrom))] + [0])
    spot = next((k for k in sorted(free) if last_import < k < (first_def or len(lines) + 1)
                 and k not in taken), None)
    if spot is not None:
        replace[spot] = "import asc"
    else:
        adds.setdefault(last_import + 1, []).insert(0, "import asc")
    out, line_of = [], [None]
    for k, line in enumerate(lines, 1):
        for extra in adds.get(k, []):
            out.append(extra)
            line_of.append(None)
        out.append(replace.get(k, line))
        line_of.append(k)
    for extra in adds.get(len(lines) + 1, []):
        out.append(extra)
        line_of.append(None)
    return "\n".join(out), line_of, helpers


def map_lines(message, path, line_of):
    """Rewrites `path:LINE:` in a diagnostic to the file's line numbers."""
    if all(line_of[k] == k for k in range(1, len(line_of)) if line_of[k] is not None) \
            and None not in line_of[1:]:
        return message

    def fix(m):
        k = int(m.group(1))
        orig = line_of[k] if 0 < k < len(line_of) else None
        return f"{path}:{orig if orig is not None else f'(added line {k})'}:"
    return re.sub(re.escape(path) + r":(\d+):", fix, message)


# ------------------------------------------------------------ validation

def as_list(out):
    if out is None:
        return []
    return list(out) if isinstance(out, (tuple, list)) else [out]


def compare(ref, val, tol):
    """(reason or None, largest absolute difference) for two lists of
    results, with NPBench's rule: allclose, or else a small relative
    error in the 2-norm."""
    if len(ref) != len(val):
        return f"{len(val)} results, numpy gives {len(ref)}", None
    worst = 0.0
    for i, (r, v) in enumerate(zip(ref, val)):
        r, v = np.asarray(r), np.asarray(v)
        if r.shape != v.shape:
            return f"result {i}: shape {v.shape}, numpy's {r.shape}", None
        if r.size:
            kind = np.complex128 if np.iscomplexobj(r) or np.iscomplexobj(v) else np.float64
            with np.errstate(invalid="ignore", over="ignore"):
                d = np.atleast_1d(np.abs(r.astype(kind) - v.astype(kind)))
            # NaN where numpy has NaN too is no difference; another is inf
            d[np.atleast_1d(np.isnan(r) & np.isnan(v))] = 0.0
            worst = max(worst, float(np.max(np.where(np.isnan(d), np.inf, d))))
        if np.allclose(r, v, rtol=tol["rtol"], atol=tol["atol"]):
            continue
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            rel = float(np.linalg.norm(r - v) / np.linalg.norm(r))
        if rel < tol["norm_error"]:
            continue
        return f"result {i}: relative error {rel:.3g} (norm_error {tol['norm_error']:g})", worst
    return None, worst


# ------------------------------------------------------------- the child

def blas_state():
    """numpy's BLAS pools (threadpoolctl), or None without threadpoolctl."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    npdir = os.path.dirname(os.path.dirname(np.__file__))
    return [{k: p.get(k) for k in ("internal_api", "version", "num_threads",
                                     "threading_layer", "architecture", "prefix")}
            for p in threadpool_info()
            if p.get("user_api") == "blas" and p.get("filepath", "").startswith(npdir)]


def restore_blas(default):
    """Puts numpy's BLAS back to its default thread count if it moved."""
    now = blas_state()
    if not default or now == default:
        return False
    from threadpoolctl import threadpool_limits
    threadpool_limits(limits={p["prefix"]: p["num_threads"] for p in default})
    return True


def run_child(args):
    prog = Progress(args.progress)
    info = read_infos(args.npbench)[args.child]
    params = info["parameters"].get(args.preset)
    if params is None:
        prog.write(event="fail", status="init failed",
                   error=f"no preset {args.preset} (has {', '.join(info['parameters'])})")
        return
    tol = {"rtol": info.get("rtol", 1e-5), "atol": info.get("atol", 1e-8),
           "norm_error": info.get("norm_error", 1e-5)}
    np_path = bench_path(args.npbench, info, "_numpy")
    default_blas = blas_state()
    prog.write(event="info", params=params, blas=default_blas, file=np_path)

    prog.write(event="start", phase="init")
    data = dict(params)
    try:
        if info.get("init"):
            init = info["init"]
            mod = load_file(bench_path(args.npbench, info, ""), f"npb_init_{args.child}")
            outs = getattr(mod, init["func_name"])(*[data[a] for a in init["input_args"]])
            if len(init["output_args"]) == 1:
                outs = (outs,)
            data.update(zip(init["output_args"], outs))
        np_fn = getattr(load_file(np_path, f"npb_numpy_{args.child}"), info["func_name"])
    except Exception as exc:
        prog.write(event="fail", status="init failed", error=first_line(exc))
        return
    arrays = info.get("array_args", [])

    def fresh():
        return [np.copy(data[a]) if a in arrays else data[a] for a in info["input_args"]]

    def results(out, call_args):
        got = dict(zip(info["input_args"], call_args))
        return as_list(out) + [got[a] for a in arrays]

    prog.write(event="start", phase="numpy")
    try:
        a = fresh()
        t = time.perf_counter()
        ref = results(np_fn(*a), a)
        np_first = time.perf_counter() - t
    except Exception as exc:
        prog.write(event="fail", status="numpy failed", error=first_line(exc))
        return

    prog.write(event="start", phase="compile")
    try:
        import asc
    except ImportError as exc:
        prog.write(event="fail", status="run error",
                   error=f"cannot import asc ({exc}): run scripts/build-python.sh build")
        return
    with open(np_path) as f:
        text, line_of, helpers = decorate(f.read(), info["func_name"])
    prog.write(event="decorated", helpers=helpers,
               inserted=sum(1 for k in line_of[1:] if k is None))

    def asc_failure(exc):
        msg = map_lines(str(exc), np_path, line_of)
        status = "compile error" if isinstance(exc, asc.CompileError) else "run error"
        line = next((x for x in msg.splitlines() if "error" in x), None) or \
            (msg.strip().splitlines() or [type(exc).__name__])[0]
        if status == "run error":
            line = f"{type(exc).__name__}: {line}"
        return status, line

    try:
        kern = getattr(asc.compile(text, filename=np_path), info["func_name"])
        prog.write(event="start", phase="first call")
        a = fresh()
        t = time.perf_counter()
        out = results(kern(*a), a)
        first = time.perf_counter() - t
    except Exception as exc:
        status, line = asc_failure(exc)
        prog.write(event="fail", status=status, error=line)
        return
    prog.write(event="compiled", first_call_ms=first * 1e3)
    prog.write(event="start", phase="check")
    try:
        reason, worst = compare(ref, out, tol)
    except Exception as exc:
        reason, worst = f"cannot compare: {first_line(exc)}", None
    prog.write(event="checked", correct=reason is None, max_abs_diff=worst,
               reason=reason)
    if reason is not None:
        return

    pause = BLAS_SETTLE_S if BLAS_TEXT.search(text) else SETTLE_S
    restored = restore_blas(default_blas)
    impls = {"numpy": np_fn, "asc": kern}
    times = {"numpy": [], "asc": []}
    reps = args.reps
    prog.write(event="start", phase="timing")
    gc.disable()
    try:
        r = 0
        while r < reps:
            order = ("numpy", "asc") if r % 2 == 0 else ("asc", "numpy")
            for impl in order:
                a = fresh()
                settle(pause)
                t = time.perf_counter()
                impls[impl](*a)
                times[impl].append(time.perf_counter() - t)
            prog.write(event="rep", numpy=times["numpy"][-1], asc=times["asc"][-1])
            if r == 0:
                reps = reps_within(args, times["numpy"][0] + times["asc"][0] + 2 * pause)
            r += 1
    except Exception as exc:
        status, line = asc_failure(exc)
        prog.write(event="fail", status=status, error=f"during timing: {line}")
        return
    finally:
        gc.enable()
    prog.write(event="done", numpy_first_ms=np_first * 1e3, blas_restored=restored,
               blas_after=blas_state())


# ------------------------------------------------------------ the parent

PHASE_TEXT = {"init": "making the inputs", "numpy": "the numpy run",
              "compile": "asc.compile", "first call": "asc's first call (compile + run)",
              "check": "the comparison", "timing": "timing"}


def run_one(name, args, env):
    fd, path = tempfile.mkstemp(prefix="asc-npbench-", suffix=".jsonl")
    os.close(fd)
    cmd = [sys.executable, os.path.abspath(__file__), "--child", name, "--progress", path,
           "--npbench", args.npbench, "--preset", args.preset, "--reps", str(args.reps),
           "--budget", str(args.budget)]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, env=env, timeout=args.timeout, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        ended = None if p.returncode == 0 else describe_rc(p.returncode, p.stdout)
        crash = "crash" if p.returncode < 0 else "run error"
    except subprocess.TimeoutExpired:
        ended, crash = f"timed out after {args.timeout:g} s", "timeout"
    with open(path) as f:
        events = [json.loads(line) for line in f if line.strip()]
    os.unlink(path)
    row = {"benchmark": name, "preset": args.preset, "status": None, "error": "",
           "compiled": False, "correct": False, "numpy_ms": None, "asc_ms": None,
           "ratio": None, "first_call_ms": None, "max_abs_diff": None,
           "reps": 0, "numpy_times_ms": [], "asc_times_ms": [], "helpers": [],
           "inserted_lines": 0, "wall_s": None}
    phase = None
    for e in events:
        kind = e["event"]
        if kind == "info":
            row["params"], row["blas"] = e["params"], e["blas"]
        elif kind == "start":
            phase = e["phase"]
        elif kind == "decorated":
            row["helpers"], row["inserted_lines"] = e["helpers"], e["inserted"]
        elif kind == "compiled":
            row["compiled"], row["first_call_ms"] = True, e["first_call_ms"]
        elif kind == "checked":
            row["correct"], row["max_abs_diff"] = e["correct"], e["max_abs_diff"]
            if not e["correct"]:
                row["status"], row["error"] = "wrong result", e["reason"]
        elif kind == "rep":
            row["numpy_times_ms"].append(e["numpy"] * 1e3)
            row["asc_times_ms"].append(e["asc"] * 1e3)
        elif kind == "fail":
            row["status"], row["error"] = e["status"], e["error"]
        elif kind == "done":
            row["status"] = "ok"
            row["numpy_first_ms"] = e["numpy_first_ms"]
            row["blas_restored"], row["blas_after"] = e["blas_restored"], e["blas_after"]
    if row["status"] is None:
        where = PHASE_TEXT.get(phase, "start-up")
        status = crash if ended else "run error"
        row["status"] = status
        row["error"] = f"{ended or 'stopped'} during {where}"
        if not ended and p.stdout.strip():
            row["error"] += ": " + p.stdout.strip().splitlines()[-1][:200]
    if row["numpy_times_ms"]:
        row["reps"] = len(row["numpy_times_ms"])
        row["numpy_ms"] = statistics.median(row["numpy_times_ms"])
        row["asc_ms"] = statistics.median(row["asc_times_ms"])
        row["ratio"] = row["numpy_ms"] / row["asc_ms"] if row["asc_ms"] > 0 else None
    row["wall_s"] = time.perf_counter() - t0
    return row


def fmt(x, spec=".2f"):
    return "-" if x is None else format(x, spec)


HEADER = f"{'benchmark':<26}{'compiles':>9}{'correct':>8}{'numpy ms':>11}{'asc ms':>11}" \
         f"{'np/asc':>8}  error"


def print_row(r):
    yes = {True: "yes", False: "no"}
    ratio = fmt(r["ratio"]) if r["status"] == "ok" else (fmt(r["ratio"]) + "*" if r["ratio"] else "-")
    err = "" if r["status"] == "ok" else f"{r['status']}: {r['error']}"
    # the file's folder is in the JSON; the table keeps to the message
    err = re.sub(r"\S*/npbench/benchmarks/\S*/", "", err)
    err = err if len(err) <= 160 else err[:157] + "..."
    print(f"{r['benchmark']:<26}{yes[r['compiled']]:>9}{yes[r['correct']]:>8}"
          f"{fmt(r['numpy_ms']):>11}{fmt(r['asc_ms']):>11}{ratio:>8}  {err}", flush=True)


def summary(rows, total):
    compiled = sum(r["compiled"] for r in rows)
    correct = [r for r in rows if r["correct"]]
    timed = [r for r in correct if r["ratio"]]
    faster = sum(r["ratio"] > 1 for r in timed)
    geo = math.exp(statistics.fmean(math.log(r["ratio"]) for r in timed)) if timed else None
    out = {"benchmarks": total, "compiled": compiled, "correct": len(correct),
           "timed": len(timed), "faster": faster, "geomean_ratio": geo}
    by = {}
    for r in rows:
        if r["status"] != "ok":
            by[r["status"]] = by.get(r["status"], 0) + 1
    out["failures"] = by
    return out


def machine(args):
    info = {"cpu": "?", "cores": os.cpu_count(), "python": sys.version.split()[0],
            "numpy": np.__version__, "loadavg_before": load_average()}
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info["numpy_blas"] = blas_state() or "threadpoolctl not installed: unknown"
    try:
        import asc
        info["asc"] = asc.__version__
    except Exception as exc:
        info["asc"] = f"unavailable: {first_line(exc)}"
    try:
        info["git"] = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True).stdout.strip()
        info["npbench_git"] = subprocess.run(
            ["git", "-C", args.npbench, "rev-parse", "--short", "HEAD"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.strip()
    except OSError:
        pass
    return info


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--npbench", required=True, metavar="DIR",
                    help="a checkout of github.com/spcl/npbench (read, never changed)")
    ap.add_argument("--preset", default="S", choices=["S", "M", "L", "paper"])
    ap.add_argument("--only", default="", help="comma-separated benchmark names "
                    "(bench_info file names, e.g. gemm,go_fast, or short names)")
    ap.add_argument("--reps", type=int, default=7, help="timed calls of each (default 7)")
    ap.add_argument("--budget", type=float, default=20.0,
                    help="seconds of timing per benchmark before --reps is cut (default 20)")
    ap.add_argument("--timeout", type=float, default=600.0,
                    help="seconds per benchmark, compile included (default 600)")
    ap.add_argument("--json", metavar="OUT", help="write the rows and the machine here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--progress", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.npbench = os.path.abspath(os.path.expanduser(args.npbench))
    if args.child:
        run_child(args)
        return
    if not os.path.isdir(os.path.join(args.npbench, "bench_info")) or \
            not os.path.isdir(os.path.join(args.npbench, "npbench", "benchmarks")):
        sys.exit(f"npbench.py: {args.npbench} is not an NPBench checkout (no bench_info/ "
                 "and npbench/benchmarks/ there).\nGet one with: git clone "
                 "https://github.com/spcl/npbench DIR (the script only reads it).")
    infos = read_infos(args.npbench)
    names = list(infos)
    if args.only:
        want = [w.strip() for w in args.only.split(",") if w.strip()]
        short = {i["short_name"]: n for n, i in infos.items()}
        unknown = [w for w in want if w not in infos and w not in short]
        if unknown:
            sys.exit(f"npbench.py: no benchmark {', '.join(unknown)} in {args.npbench} "
                     f"(there are: {' '.join(names)})")
        names = [n for n in names if n in want or infos[n]["short_name"] in want]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(ROOT, "bindings", "python")] +
        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    info = machine(args)
    started = datetime.datetime.now(datetime.timezone.utc)
    print(f"NPBench {args.npbench} ({info.get('npbench_git', '?')}), preset {args.preset}; "
          f"{info['cpu']}, {info['cores']} cores, load {info['loadavg_before']}; "
          f"numpy {info['numpy']}, BLAS {info['numpy_blas']}")
    print("times: medians of alternated calls on fresh copies; np/asc > 1: asc is faster")
    print(HEADER)
    rows = []
    for name in names:
        r = run_one(name, args, env)
        rows.append(r)
        print_row(r)
    s = summary(rows, len(names))
    info["loadavg_after"] = load_average()
    print(f"\ncompiled {s['compiled']}/{s['benchmarks']}, correct {s['correct']}/{s['benchmarks']}, "
          f"faster than numpy {s['faster']}/{s['correct']}"
          + (f" ({s['timed']} timed)" if s["timed"] != s["correct"] else "")
          + f", geometric mean numpy/asc {fmt(s['geomean_ratio'], '.3f')}")
    if s["failures"]:
        print("failures: " + ", ".join(f"{k} {v}" for k, v in sorted(s["failures"].items())))
    print(f"load average before {info['loadavg_before']}, after {info['loadavg_after']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"started": started.isoformat(), "preset": args.preset,
                       "reps": args.reps, "budget_s": args.budget, "timeout_s": args.timeout,
                       "machine": info, "summary": s, "rows": rows}, f, indent=1)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
