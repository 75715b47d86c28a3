"""Numpy-style array functions through asc, numpy and numba, measured in
the same run: the whole functions of bench/kernels/array_kernels.py
(fused elementwise code with reductions, masks and np.where,
normalisations, stencils, reductions along axes, broadcasting, outer
products and distances, histograms, complex arithmetic, BLAS forms),
each decorated with @asc.kernel and nothing else.  Each runs as asc
compiles it, as plain Python on numpy (the kernel's py_func) and through
numba.njit(parallel=True) of the same function where numba compiles it.

bench/run.sh runs it after bench/suite.py; alone:

    python3 bench/array_suite.py                # large rows + small variants
    python3 bench/array_suite.py --quick        # tiny sizes: is each row right?
    python3 bench/array_suite.py --quick --strict --only rosenbrock,gemv

Large rows have sizes where numpy takes 5 ms or more (on the 2-core
machine the suite was sized on; a row whose numpy time falls outside its
band is marked), and ten functions also have a small variant where numpy
takes 0.2 to 2 ms.  Every implementation is checked against numpy before it
is timed (and called twice: one that only works once is wrong), with a
tolerance relative to the largest value of the result (1e-9 for float64,
integers exact; mandelbrot_mask compares escape counts in the 2-norm, as
NPBench does); one that fails is reported as FAILED with the reason and
not timed.  Times are medians of --reps calls that rotate the order of the
implementations, with the pauses of bench/suite.py before each call
(fewer calls where a row's round takes long: at least 3 within --budget
seconds, 1 where one round alone exceeds it).  Each
function's rows run in a child process (restarted after a crash or a
hang, which is charged to the implementation that was running).

Columns: numpy ms, asc ms, numba ms, numpy/asc, numba/asc (above 1: asc
is faster).  Summary: the rows where asc is at least as fast as numpy, the
geometric mean of numpy/asc over the large rows, and the share of the rows
numba compiles where asc is at least as fast as numba.  A STREAM triad
(bench/ref/loops.c with OpenMP, float32, the build's bench_ref target)
measured in the same run gives the machine's bandwidth; for the
memory-bound fused rows (rosenbrock, exp_poly) the table also gives the
bandwidth limit, the bytes that must move (each input read once, the
result written once) at the triad's rate, and asc's time as a multiple
of it.

--strict: exit 1 if any asc row gives a wrong result, crashes or hangs.
A function asc refuses with an exception (a compile error, or a TypeError
for an argument it cannot take yet) is reported as FAILED but is not
fatal: it is what this suite measures progress on.  numba's failures
never are.  Results also go to
OUT_DIR/<date>-array[-quick].json (default bench/results, or
BUILD/bench/results with --quick).
"""
import argparse
import datetime
import gc
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "kernels"))
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))

from cases import Failed, Libs, first_line, ptr  # noqa: E402
from suite import (BLAS_SETTLE_S, SETTLE_S, Progress, describe_rc,  # noqa: E402
                   load_average, machine_info, settle)

IMPLS = ("asc", "numpy", "numba")


# ------------------------------------------------------------ the inputs

def vec(r, n):
    return r.random(n)


def cvec(r, shape):
    return r.random(shape) + 1j * r.random(shape)


def normal(r, *shape):
    return r.standard_normal(shape)


def csr(r, n, per_row):
    """A random CSR matrix of n rows with 1 to 2*per_row entries each."""
    counts = r.integers(1, 2 * per_row, n)
    indptr = np.zeros(n + 1, np.int64)
    indptr[1:] = np.cumsum(counts)
    cols = r.integers(0, n, indptr[-1])
    return indptr, cols, r.random(indptr[-1]), r.random(n)


def grid(n):
    x = np.linspace(-2.0, 0.6, n)
    y = np.linspace(-1.2, 1.2, n)
    return x[None, :] + 1j * y[:, None]


class Row:
    """One function at one size: make(size, rng) gives the arguments."""

    def __init__(self, kernel, make, large, quick, small=None, blas=False, mutates=False,
                 bandwidth=False, norm=None):
        self.kernel, self.make = kernel, make
        self.sizes = {"large": large, "quick": quick, "small": small}
        self.blas, self.mutates, self.bandwidth, self.norm = blas, mutates, bandwidth, norm


# (kernel, inputs, large size, quick size, small size)
ROWS = [
    Row("rosenbrock", lambda s, r: (vec(r, s),), 2_000_000, 1000, 40_000, bandwidth=True),
    Row("exp_poly", lambda s, r: (vec(r, s), vec(r, s), vec(r, s)), 1_000_000, 1000, 20_000,
        bandwidth=True),
    Row("gauss_loglik", lambda s, r: (normal(r, s), 0.3, 1.7), 2_000_000, 1000),
    Row("gelu", lambda s, r: (normal(r, s),), 500_000, 1000),
    Row("softplus", lambda s, r: (normal(r, s),), 1_000_000, 1000),
    Row("sigmoid_mean", lambda s, r: (normal(r, s),), 1_000_000, 1000),
    Row("clip_sqrt", lambda s, r: (normal(r, s) * 4.0,), 2_000_000, 1000),
    Row("hypot_mix", lambda s, r: (normal(r, s), normal(r, s)), 1_000_000, 1000),
    Row("haversine", lambda s, r: tuple(vec(r, s) * 1.5 for _ in range(4)), 500_000, 1000,
        20_000),
    Row("horner", lambda s, r: (vec(r, s), normal(r, 8)), 1_000_000, 1000),
    Row("linspace_wave", lambda s, r: (s,), 1_000_000, 1000),
    Row("leaky_relu", lambda s, r: (normal(r, s),), 2_000_000, 1000, 100_000),
    Row("soft_threshold", lambda s, r: (normal(r, s), 0.5), 2_000_000, 1000),
    Row("count_between", lambda s, r: (vec(r, s), 0.2, 0.7), 4_000_000, 1000),
    Row("mandelbrot_mask", lambda s, r: (grid(s), 40), 200, 24, norm=1e-3),
    Row("radial_means", lambda s, r: (vec(r, s), vec(r, s), 100), 1_000_000, 1000),
    Row("masked_stats", lambda s, r: (vec(r, s), 0.3), 4_000_000, 1000),
    Row("keep_inside", lambda s, r: (cvec(r, s) * 2.5, cvec(r, s)), 2_000_000, 1000, 100_000),
    Row("minmax_scale", lambda s, r: (normal(r, s),), 2_000_000, 1000),
    Row("zscore_cols", lambda s, r: (normal(r, *s),), (2000, 1000), (30, 20)),
    Row("l2_rows", lambda s, r: (normal(r, *s),), (2000, 1000), (30, 20)),
    Row("softmax_rows", lambda s, r: (normal(r, *s),), (1000, 1000), (30, 20), (100, 256)),
    Row("logsumexp_rows", lambda s, r: (normal(r, *s),), (1000, 1000), (30, 20)),
    Row("softmax_newaxis", lambda s, r: (normal(r, *s),), (1000, 1000), (30, 20)),
    Row("layer_norm", lambda s, r: (normal(r, *s), vec(r, s[1]), vec(r, s[1])),
        (1000, 1024), (30, 20), (64, 256)),
    Row("rms_norm", lambda s, r: (normal(r, *s), vec(r, s[1])), (1000, 1024), (30, 20)),
    Row("cosine_sim", lambda s, r: (normal(r, s), normal(r, s)), 4_000_000, 1000),
    Row("col_sums", lambda s, r: (normal(r, *s),), (3000, 3000), (30, 20)),
    Row("row_max", lambda s, r: (normal(r, *s),), (3000, 3000), (30, 20)),
    Row("mean_last", lambda s, r: (normal(r, *s),), (200, 200, 200), (4, 5, 6)),
    Row("argmax_rows", lambda s, r: (normal(r, *s),), (3000, 3000), (30, 20)),
    Row("var_plus_std", lambda s, r: (normal(r, s),), 2_000_000, 1000),
    Row("total_variation", lambda s, r: (normal(r, s),), 2_000_000, 1000),
    Row("reverse_cumsum", lambda s, r: (vec(r, s),), 2_000_000, 1000),
    Row("smooth_1d", lambda s, r: (vec(r, s),), 4_000_000, 1000),
    Row("box_3x3", lambda s, r: (vec(r, (s, s)),), 1500, 30, 150),
    Row("jacobi_step", lambda s, r: (vec(r, (s, s)),), 2000, 30),
    Row("heat_1d", lambda s, r: (vec(r, s), 50, 0.25), 100_000, 1000, mutates=True),
    Row("laplace_rgb", lambda s, r: (vec(r, (s, s, 3)),), 800, 20),
    Row("harris", lambda s, r: (vec(r, (s, s)), 0.05), 1000, 30),
    Row("fill_planes", lambda s, r: (vec(r, s),), 1000, 20),
    Row("outer_plus_col", lambda s, r: (vec(r, s), vec(r, s)), 2000, 30),
    Row("gauss_gram", lambda s, r: (vec(r, s), vec(r, s), 0.5), 2000, 30),
    Row("pairwise_bcast", lambda s, r: (vec(r, (s, 3)), vec(r, (s + 100, 3))), 500, 20, 100),
    Row("pairwise_gram", lambda s, r: (vec(r, (s, 16)), vec(r, (s, 16))), 1000, 20),
    Row("sym_part", lambda s, r: (vec(r, (s, s)),), 2000, 30),
    Row("tanh_trace", lambda s, r: (vec(r, (s, s)),), 1000, 30),
    Row("gather_scale", lambda s, r: (vec(r, s), r.integers(0, s, s), vec(r, s)),
        1_000_000, 1000),
    Row("spmv_csr", lambda s, r: csr(r, s, 10), 5000, 50),
    Row("hist_bincount", lambda s, r: (vec(r, s), 64), 2_000_000, 1000),
    Row("hist_numpy", lambda s, r: (vec(r, s), 64), 2_000_000, 1000),
    Row("hist_masks", lambda s, r: (vec(r, s), 16), 1_000_000, 1000),
    Row("complex_mix", lambda s, r: (normal(r, s) + 1j * normal(r, s),
                                     normal(r, s) + 1j * normal(r, s)), 500_000, 1000),
    Row("small_cmatmul_loop", lambda s, r: (cvec(r, (30, 12, 4, 4)), cvec(r, (s, 4, 4)),
                                            r.integers(0, 12, s), np.zeros((30, 4, 4), complex)),
        400, 8, mutates=True),
    Row("phase_rotate", lambda s, r: (normal(r, s) + 1j * normal(r, s), normal(r, s)),
        1_000_000, 1000),
    Row("gemm_ab", lambda s, r: (1.5, vec(r, (s, s)), vec(r, (s, s)), 0.5, vec(r, (s, s))),
        512, 16, 112, blas=True),
    Row("gemv", lambda s, r: (vec(r, (s, s)), vec(r, s)), 3000, 16, 500, blas=True),
    Row("at_b", lambda s, r: (vec(r, (s, s // 2)), vec(r, (s, s // 2))), 1000, 16, blas=True),
    Row("chain3", lambda s, r: tuple(vec(r, (s, s)) for _ in range(3)), 400, 16, blas=True),
    Row("dense_relu", lambda s, r: (normal(r, s, 1024), normal(r, 1024, 512), normal(r, 512)),
        256, 8, blas=True),
    Row("batch_layer", lambda s, r: tuple(a.astype(np.float32) for a in (
        normal(r, 8, s), normal(r, s, s * 3 // 4), normal(r, s * 3 // 4))), 10000, 64,
        blas=True, norm=1e-5),
    Row("covariance", lambda s, r: (normal(r, s, 200),), 2000, 30, blas=True),
    Row("np_cov", lambda s, r: (normal(r, s, 600),), 1500, 30, blas=True),
    Row("bicg_step", lambda s, r: (vec(r, (s, s)), vec(r, s), vec(r, s)), 3000, 16, 300,
        blas=True),
]

# numpy's time band of each kind of row (ms), where the sizes were chosen
BANDS = {"large": (5.0, math.inf), "small": (0.2, 2.0), "quick": (0.0, math.inf)}


def cases(kind_list):
    """(index, row, kind) for the rows run: large, small variants, or quick."""
    out = []
    for kind in kind_list:
        for row in ROWS:
            if row.sizes[kind] is not None:
                out.append((len(out), row, kind))
    return out


# ------------------------------------------------------------- checking

def results(out, args):
    """What a call gives: its returned values, then its array arguments."""
    got = [] if out is None else list(out) if isinstance(out, tuple) else [out]
    return got + [a for a in args if isinstance(a, np.ndarray)]


def fresh(args):
    return [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]


def check(ref, got, norm=None):
    """None if got matches numpy's results, else why not."""
    if len(ref) != len(got):
        return f"{len(got)} results, numpy gives {len(ref)}"
    for i, (r, g) in enumerate(zip(ref, got)):
        r, g = np.asarray(r), np.asarray(g)
        if r.shape != g.shape:
            return f"result {i}: shape {g.shape}, numpy's {r.shape}"
        if r.size == 0:
            continue
        if norm is not None:
            with np.errstate(all="ignore"):
                rel = float(np.linalg.norm((r - g).ravel()) / np.linalg.norm(r.ravel()))
            if not rel < norm:
                return f"result {i}: relative error {rel:.3g} in the 2-norm (limit {norm:g})"
            continue
        if r.dtype.kind in "biu" and g.dtype.kind in "biu":
            bad = r != g
            if bad.any():
                k = np.flatnonzero(bad.ravel())[0]
                return (f"result {i}: {int(bad.sum())} of {r.size} differ; first at flat "
                        f"index {k}: {g.ravel()[k]}, numpy {r.ravel()[k]}")
            continue
        with np.errstate(all="ignore"):
            scale = float(np.nanmax(np.abs(r))) if not np.isnan(r).all() else 0.0
            bad = ~(np.abs(r - g) <= 1e-9 * (np.abs(r) + scale))
            bad &= ~(np.isnan(r) & np.isnan(g))
        if bad.any():
            k = np.flatnonzero(bad.ravel())[0]
            return (f"result {i}: {int(bad.sum())} of {r.size} differ; first at flat index "
                    f"{k}: {g.ravel()[k]!r}, numpy {r.ravel()[k]!r}")
    return None


def numba_reason(exc):
    """The informative line of a numba error (its first is the pipeline)."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    lines = [x for x in lines if not x.startswith(("Failed in", "During:"))] or lines
    return (lines[0] if lines else type(exc).__name__)[:200]


# ------------------------------------------------------------- the child

def run_child(args):
    prog = Progress(args.progress)
    todo = [c for c in cases(args.kinds) if c[0] >= args.start]
    skip = set(args.skip)
    import array_kernels
    jitted = {}     # numba's dispatcher of each function, for its small row too
    for index, row, kind in todo:
        if args.only and row.kernel not in args.only:
            continue
        kern = getattr(array_kernels, row.kernel)
        rng = np.random.default_rng(zlib.crc32(row.kernel.encode()))
        inp = row.make(row.sizes[kind], rng)
        prog.write(event="row", index=index, kernel=row.kernel, kind=kind,
                   size=size_text(inp))
        try:
            a = fresh(inp)
            ref = results(kern.py_func(*a), a)
        except Exception as exc:
            prog.write(event="failed", impl="numpy", reason=first_line(exc), status="run error")
            prog.write(event="times", index=index, times={})
            continue
        calls = {"numpy": kern.py_func, "asc": kern}
        if "numba" in args.impls and f"{index}:numba" not in skip:
            try:
                import numba
                if row.kernel not in jitted:
                    jitted[row.kernel] = numba.njit(parallel=True)(kern.py_func)
                calls["numba"] = jitted[row.kernel]
            except ImportError:
                prog.write(event="failed", impl="numba", reason="numba: not installed",
                           status="not installed")
        runners = {"numpy": calls["numpy"]}
        for impl in ("asc", "numba"):
            if impl not in calls or f"{index}:{impl}" in skip:
                continue
            prog.write(event="start", impl=impl, phase="check")
            try:
                for _ in range(2):
                    a = fresh(inp)
                    reason = check(ref, results(calls[impl](*a), a), row.norm)
                    if reason is not None:
                        raise Failed(reason)
            except Failed as exc:
                prog.write(event="failed", impl=impl, reason=str(exc),
                           status="wrong result")
                continue
            except Exception as exc:
                if impl == "numba":
                    prog.write(event="failed", impl=impl, status="no compile",
                               reason=f"numba: {numba_reason(exc)}")
                    continue
                import asc
                status = "compile error" if isinstance(exc, asc.CompileError) else "run error"
                msg = str(exc)
                line = next((x for x in msg.splitlines() if ": error:" in x), None)
                line = line.replace(os.path.join(HERE, ""), "") if line else first_line(exc)
                prog.write(event="failed", impl=impl, status=status, reason=line[:300])
                continue
            runners[impl] = calls[impl]
        pause = BLAS_SETTLE_S if row.blas else SETTLE_S
        times = {impl: [] for impl in runners}
        order = list(runners)
        reps, rep = args.reps, 0
        gc.disable()
        try:
            while rep < reps:
                for impl in order[rep % len(order):] + order[:rep % len(order)]:
                    prog.write(event="start", impl=impl, phase="time")
                    a = fresh(inp) if row.mutates else inp
                    settle(pause)
                    t = time.perf_counter()
                    runners[impl](*a)
                    times[impl].append(time.perf_counter() - t)
                if rep == 0:
                    reps = reps_within(args, sum(ts[0] for ts in times.values()))
                rep += 1
        finally:
            gc.enable()
        prog.write(event="times", index=index, times=times)
    prog.write(event="done")


def reps_within(args, first):
    """--reps, cut so that a row's timing takes about --budget seconds:
    at least 3 (or --reps if fewer), 1 where one round alone takes longer
    than the budget."""
    if first > args.budget:
        return 1
    return min(args.reps, max(3, int(args.budget / first)))


def size_text(inp):
    parts = []
    for a in inp:
        if isinstance(a, np.ndarray):
            parts.append(f"{a.dtype.name}[{','.join(map(str, a.shape))}]")
        elif isinstance(a, int):
            parts.append(str(a))
    return " ".join(parts[:3]) + (" ..." if len(parts) > 3 else "")


# ------------------------------------------------------------ the parent

def supervise(args, env):
    """Runs the child until every row is done; a crash or a hang ends the
    running implementation of the running row only."""
    rows = {}
    skip, start = [], 0
    total = cases(args.kinds)
    while True:
        fd, path = tempfile.mkstemp(prefix="asc-array-", suffix=".jsonl")
        os.close(fd)
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "--progress", path,
               "--start", str(start), "--reps", str(args.reps), "--kinds", ",".join(args.kinds),
               "--impls", ",".join(args.impls), "--budget", str(args.budget)] + \
              (["--only", ",".join(args.only)] if args.only else []) + \
              [x for s in skip for x in ("--skip", s)]
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
        seen, current, running, since = 0, None, None, time.monotonic()
        ended = None
        while True:
            rc = p.poll()
            with open(path) as f:
                events = [json.loads(x) for x in f.read().splitlines() if x.strip()]
            for e in events[seen:]:
                since = time.monotonic()
                if e["event"] == "row":
                    current = e["index"]
                    # a row rerun after a crash keeps what failed before
                    rows.setdefault(current, {"kernel": e["kernel"], "kind": e["kind"],
                                              "size": e["size"], "failed": {}, "status": {},
                                              "times": {}})
                    running = None
                elif e["event"] == "start":
                    running = e["impl"], e["phase"]
                elif e["event"] == "failed":
                    rows[current]["failed"][e["impl"]] = e["reason"]
                    rows[current]["status"][e["impl"]] = e["status"]
                elif e["event"] == "times":
                    rows[current]["times"] = e["times"]
                    print_row(rows[current], args)
                    current = running = None
            seen = len(events)
            if rc is not None:
                break
            if time.monotonic() - since > args.timeout:
                p.kill()
                p.wait()
                ended = f"timed out after {args.timeout:g} s"
                break
            time.sleep(0.1)
        out = p.stdout.read()
        os.unlink(path)
        if events and events[-1]["event"] == "done":
            break
        if ended is None:
            ended = describe_rc(p.returncode, out)
        if current is None:
            # stopped between rows, or before the first: nothing to charge
            rows[start] = {"kernel": total[start][1].kernel if start < len(total) else "?",
                           "kind": total[start][2] if start < len(total) else "?", "size": "",
                           "failed": {"asc": f"the suite's child {ended}"},
                           "status": {"asc": "crash"}, "times": {}}
            start += 1
            if start >= len(total):
                break
            continue
        # before any implementation started: the inputs or numpy's run
        impl, phase = running or ("numpy", "check")
        r = rows[current]
        r["failed"][impl] = f"{ended} during {'the check' if phase == 'check' else 'timing'}"
        r["status"][impl] = "timeout" if ended.startswith("timed out") else "crash"
        if impl == "numpy":
            print_row(r, args)
            start = current + 1
        else:
            skip.append(f"{current}:{impl}")
            start = current
        if start >= len(total):
            break
    return [rows[k] for k in sorted(rows)]


def ms(ts):
    return statistics.median(ts) * 1e3 if ts else None


def fmt(x, spec=".2f"):
    return "-" if x is None else format(x, spec)


HEADER = (f"{'function':<17}{'kind':<6}{'size':<30}{'numpy ms':>10}{'asc ms':>10}"
          f"{'numba ms':>10}{'np/asc':>8}{'nb/asc':>8}  note")


def finish_row(r):
    t = {impl: ms(ts) for impl, ts in r["times"].items()}
    r["numpy_ms"], r["asc_ms"], r["numba_ms"] = t.get("numpy"), t.get("asc"), t.get("numba")
    r["numpy_asc"] = r["numpy_ms"] / r["asc_ms"] if r["asc_ms"] and r["numpy_ms"] else None
    r["numba_asc"] = r["numba_ms"] / r["asc_ms"] if r["asc_ms"] and r["numba_ms"] else None
    lo, hi = BANDS[r["kind"]]
    r["band"] = r["numpy_ms"] is None or lo <= r["numpy_ms"] <= hi


def print_row(r, args):
    finish_row(r)
    notes = [f"{impl} FAILED ({r['status'][impl]}): {r['failed'][impl]}"
             for impl in IMPLS if impl in r["failed"]]
    if not r["band"]:
        lo, hi = BANDS[r["kind"]]
        notes.append(f"numpy outside {lo:g}-{hi:g} ms")
    print(f"{r['kernel']:<17}{r['kind']:<6}{r['size'][:29]:<30}{fmt(r['numpy_ms']):>10}"
          f"{fmt(r['asc_ms']):>10}{fmt(r['numba_ms']):>10}{fmt(r['numpy_asc']):>8}"
          f"{fmt(r['numba_asc']):>8}  {'; '.join(notes)}", flush=True)


def triad_rate(args):
    """STREAM triad on float32 with OpenMP (bench/ref/loops.c): bytes/s,
    counting what STREAM counts (two arrays read, one written)."""
    n = (1 << 20) if args.quick else (16 << 20)
    lib = Libs(args.build).c("C OpenMP")
    if isinstance(lib, Failed):
        raise lib
    b = np.ones(n, np.float32)
    c = np.full(n, 2.0, np.float32)
    a = np.zeros_like(b)
    lib.ref_triad(ptr(a), ptr(b), ptr(c), np.float32(3.0), n)
    if not np.all(a == 7.0):
        raise Failed("the triad gave a wrong result")
    ts = []
    for _ in range(9):
        settle()
        t = time.perf_counter()
        lib.ref_triad(ptr(a), ptr(b), ptr(c), np.float32(3.0), n)
        ts.append(time.perf_counter() - t)
    return 3 * 4 * n / statistics.median(ts), n


def moved_bytes(row, kind):
    """Bytes that a bandwidth row must move: each input read once and the
    result written once."""
    inp = row.make(row.sizes[kind], np.random.default_rng(0))
    read = sum(a.nbytes for a in inp if isinstance(a, np.ndarray))
    import array_kernels
    res = np.asarray(getattr(array_kernels, row.kernel).py_func(*inp))
    return read + (res.nbytes if res.ndim else 0)


ROWS_BY_NAME = {r.kernel: r for r in ROWS}


def summary(rows, triad):
    asc_ok = [r for r in rows if r["asc_ms"] is not None]
    vs_np = [r for r in asc_ok if r["numpy_asc"] is not None]
    large = [r for r in vs_np if r["kind"] == "large"]
    nb = [r for r in asc_ok if r["numba_asc"] is not None]
    geo = math.exp(statistics.fmean(math.log(r["numpy_asc"]) for r in large)) if large else None
    return {
        "rows": len(rows),
        "asc_ok": len(asc_ok),
        "asc_failed": {s: sum(1 for r in rows if r["status"].get("asc") == s)
                       for s in sorted({r["status"].get("asc") for r in rows} - {None})},
        "asc_ge_numpy": sum(1 for r in vs_np if r["numpy_asc"] >= 1.0),
        "asc_vs_numpy_rows": len(vs_np),
        "geomean_numpy_asc_large": geo,
        "large_rows": len(large),
        "numba_compiles": sum(1 for r in rows if "numba" in r["times"]),
        "asc_ge_numba": sum(1 for r in nb if r["numba_asc"] >= 1.0),
        "asc_vs_numba_rows": len(nb),
        "triad_GBps": triad / 1e9 if triad else None,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--quick", action="store_true",
                    help="tiny sizes, 2 reps, no numba unless --numba: checks each row")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 if an asc row is wrong, crashes or hangs")
    ap.add_argument("--only", default="", help="comma-separated function names")
    ap.add_argument("--reps", type=int, help="timed calls of each (default 7, quick 2)")
    ap.add_argument("--budget", type=float, default=20.0,
                    help="seconds of timing per row before --reps is cut (default 20)")
    ap.add_argument("--numba", action="store_true", help="with --quick: run numba too")
    ap.add_argument("--no-numba", action="store_true", help="leave numba out")
    ap.add_argument("--no-small", action="store_true", help="large rows only")
    ap.add_argument("--timeout", type=float, help="seconds one row may go without progress "
                    "(compiles included; default 300, quick 120)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="CMake build folder (its bench_ref library gives the triad)")
    ap.add_argument("--out-dir", help="default: bench/results, or BUILD/bench/results "
                    "with --quick")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--progress", help=argparse.SUPPRESS)
    ap.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--kinds", help=argparse.SUPPRESS)
    ap.add_argument("--impls", help=argparse.SUPPRESS)
    ap.add_argument("--skip", action="append", default=[], help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.only = [x.strip() for x in args.only.split(",") if x.strip()]
    if args.child:
        args.kinds = args.kinds.split(",")
        args.impls = args.impls.split(",")
        run_child(args)
        return
    unknown = [x for x in args.only if x not in ROWS_BY_NAME]
    if unknown:
        sys.exit(f"array_suite.py: no function {', '.join(unknown)} "
                 f"(there are: {' '.join(ROWS_BY_NAME)})")
    args.build = os.path.abspath(args.build)
    args.reps = args.reps or (2 if args.quick else 7)
    args.timeout = args.timeout or (120.0 if args.quick else 300.0)
    args.kinds = ["quick"] if args.quick else ["large"] + ([] if args.no_small else ["small"])
    with_numba = not args.no_numba and (args.numba or not args.quick)
    args.impls = ["asc", "numpy"] + (["numba"] if with_numba else [])
    if args.out_dir is None:
        args.out_dir = os.path.join(args.build, "bench", "results") if args.quick \
            else os.path.join(HERE, "results")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "bindings", "python")] +
                                        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    started = datetime.datetime.now(datetime.timezone.utc)
    t0 = time.perf_counter()
    info = machine_info(args)
    info["loadavg_before"] = load_average()
    try:
        triad, triad_n = triad_rate(args)
        print(f"STREAM triad (C OpenMP, float32[{triad_n}]): {triad / 1e9:.2f} GB/s")
    except Failed as exc:
        triad = None
        print(f"STREAM triad: unavailable ({exc}); build the bench_ref target "
              "(bash bench/run.sh does)")
    print(f"{info['cpu']}, {info['cores_usable']} cores usable, load {info['loadavg_before']}; "
          f"numpy {info['numpy']} (BLAS {'; '.join(info['blas'])}); numba {info['numba']}")
    print("times: medians; np/asc and nb/asc above 1: asc is faster")
    print(HEADER, flush=True)
    rows = supervise(args, env)
    for r in rows:
        finish_row(r)
        row = ROWS_BY_NAME[r["kernel"]]
        if row.bandwidth and triad and r["kind"] == "large":
            r["bytes"] = moved_bytes(row, r["kind"])
            r["limit_ms"] = r["bytes"] / triad * 1e3
            r["asc_x_limit"] = r["asc_ms"] / r["limit_ms"] if r["asc_ms"] else None
    s = summary(rows, triad)
    info["loadavg_after"] = load_average()
    print(f"\nasc >= numpy in {s['asc_ge_numpy']} of {s['asc_vs_numpy_rows']} rows asc ran "
          f"({s['rows']} rows; asc FAILED in "
          f"{sum(s['asc_failed'].values())}: "
          + (", ".join(f"{k} {v}" for k, v in s["asc_failed"].items()) or "none") + ")")
    if not args.quick:
        print(f"geometric mean numpy/asc over the {s['large_rows']} large rows: "
              f"{fmt(s['geomean_numpy_asc_large'], '.3f')}")
    if with_numba:
        print(f"numba compiles {s['numba_compiles']} rows; asc >= numba in "
              f"{s['asc_ge_numba']} of the {s['asc_vs_numba_rows']} where both ran")
    for r in rows:
        if "limit_ms" in r:
            print(f"bandwidth limit of {r['kernel']} ({r['kind']}): {r['bytes'] / 1e6:.1f} MB "
                  f"at {triad / 1e9:.2f} GB/s = {r['limit_ms']:.2f} ms; asc "
                  f"{fmt(r['asc_ms'])} ms = {fmt(r['asc_x_limit'])} x the limit")
    os.makedirs(args.out_dir, exist_ok=True)
    stem = os.path.join(args.out_dir, started.strftime("%Y-%m-%d") + "-array" +
                        ("-quick" if args.quick else ""))
    with open(stem + ".json", "w") as f:
        json.dump({"date": started.isoformat(timespec="seconds"), "quick": args.quick,
                   "ratio": "numpy (or numba) median / asc median; above 1 asc is faster",
                   "machine": info, "summary": s, "rows": rows}, f, indent=1)
    print(f"wrote {stem}.json; took {time.perf_counter() - t0:.0f} s")
    fatal = [r for r in rows if r["status"].get("asc") in ("wrong result", "crash", "timeout")]
    if fatal and args.strict:
        print(f"{len(fatal)} asc rows wrong or broken: "
              + ", ".join(f"{r['kernel']} ({r['status']['asc']})" for r in fatal))
        sys.exit(1)


if __name__ == "__main__":
    main()
