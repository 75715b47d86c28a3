"""Tables, files and the chart of the benchmark suite (bench/suite.py).
Rows are dicts made by suite.row(); ratio = reference median / asc median
of the same benchmark (times: above 1, asc is faster)."""
import csv
import json
import os
import shutil
import subprocess
import tempfile


def group(rows):
    """Rows of one benchmark together, benchmarks in order of first row."""
    order = {}
    for r in rows:
        order.setdefault(r["benchmark"], len(order))
    return sorted(rows, key=lambda r: order[r["benchmark"]])


def add_ratios(rows):
    """ratio = reference median / asc median of the same benchmark (time:
    above 1, asc is faster).  The asc row of a benchmark is the first
    row with is_asc."""
    groups = {}
    for r in rows:
        groups.setdefault(r["benchmark"], []).append(r)
    for name, rs in groups.items():
        a = next((r for r in rs if r["is_asc"]), None)
        for r in rs:
            if r is a or r["status"] != "ok":
                continue
            if a is None or a["status"] != "ok":
                r["ratio"] = None
                r["ratio_note"] = "n/a"
                continue
            r["ratio"] = r["median"] / a["median"]


def ratio_text(x):
    return f"{x:.2f}x" if x >= 0.1 else f"{x:.2g}x"


def fmt(x):
    if x is None:
        return ""
    if x >= 1e5:
        return f"{x:.3g}"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


# The latency goals (docs/latency.md, "Where the rows stand"): a row
# that slips past its goal says so under the table, so that a change
# that undoes one is seen in the run that measures it.  (benchmark, the
# row checked, kind, goal): "ms" bounds that row's median; "ratio" is the
# least ref/asc of that reference row (1.0: asc at least as fast).
GOALS = (
    ("compile softmax: cold", "asc cold (empty cache dir)", "ms", 100.0),
    ("compile conv2d (seed): cold", "asc cold (empty cache dir)", "ms", 150.0),
    ("compile 30-line array: cold", "asc cold (empty cache dir)", "ms", 150.0),
    ("compile softmax: cache hit", "asc cache hit (new process)", "ms", 2.0),
    ("launch round trip", "OpenMP empty parallel for", "ratio", 1.0),
    ("pool alloc+free 64 B", "jemalloc mallocx/sdallocx (tcache)", "ratio", 0.5),
    ("py launch: empty prange", "numba @njit(parallel=True)", "ratio", 1.0),
)


def goal_lines(rows):
    """One line per goal whose row ran: its figure, the goal, met or
    MISSED."""
    out = []
    for bench, impl, kind, goal in GOALS:
        r = next((x for x in rows if x["benchmark"] == bench and x["impl"] == impl
                  and x["status"] == "ok"), None)
        if r is None:
            continue
        if kind == "ms":
            if r["median"] is None or r["unit"] != "ms":
                continue
            ok = r["median"] <= goal
            got, want = f"{fmt(r['median'])} ms", f"<= {goal:g} ms"
        else:
            if r["ratio"] is None:
                continue
            ok = r["ratio"] >= goal
            got, want = f"{ratio_text(r['ratio'])} ({impl})", f">= {goal:g}x"
        r["goal"] = {"kind": kind, "goal": goal, "met": ok}
        out.append(f"  {bench:30s} {got:48s} goal {want:10s} {'met' if ok else 'MISSED'}")
    return out


def print_table(rows, info, quick):
    print()
    print(f"machine: {info['cpu']}; {info['cores_usable']} usable cores; {info['memory']}")
    print(f"  simd: {info['simd']}")
    print(f"  cc: {info['cc']}; kernel and C-reference flags: {info['kernel_flags']}"
          + (f" + ASC_CFLAGS={info['ASC_CFLAGS']}" if info["ASC_CFLAGS"] else ""))
    print(f"  python {info['python']}, numpy {info['numpy']}, BLAS: {'; '.join(info['blas'])}")
    print(f"  OPENBLAS_CORETYPE={info['OPENBLAS_CORETYPE']}, OMP_NUM_THREADS={info['OMP_NUM_THREADS']}, numba {info['numba']}")
    print(f"  asc {info['asc']}; git {info['git']}")
    print(f"  load average (1, 5, 15 min) before: {info['loadavg_before']}, after: {info['loadavg_after']}"
          f" (above 0 means other work shared the cores)")
    if quick:
        print("  --quick: tiny sizes, for checking the suite only; do not read the numbers")
    print()
    head = f"{'benchmark':28s} {'implementation':38s} {'median':>9s} {'min':>9s} {'max':>9s} {'unit':4s} {'n':>2s} {'rate':>14s} {'ref/asc':>8s}  note"
    print(head)
    print("-" * len(head))
    last = None
    for r in rows:
        if r["benchmark"] != last and last is not None:
            print()
        bench = r["benchmark"] if r["benchmark"] != last else ""
        last = r["benchmark"]
        if r["status"] != "ok":
            print(f"{bench:28s} {r['impl']:38s} {'FAILED':>9s}  {r['note']}")
            continue
        rate = f"{fmt(r['rate'])} {r['rate_unit']}" if r["rate"] is not None else ""
        ratio = ratio_text(r["ratio"]) if r["ratio"] is not None else ("-" if r["is_asc"] else r.get("ratio_note", ""))
        print(f"{bench:28s} {r['impl']:38s} {fmt(r['median']):>9s} {fmt(r['min']):>9s} {fmt(r['max']):>9s} "
              f"{r['unit']:4s} {r['reps'] or '':>2} {rate:>14s} {ratio:>8s}  {r['note']}")
    print()
    print("ref/asc = reference median / asc median of the same benchmark: above 1, asc is faster.")
    notes = {}
    for r in rows:
        if r.get("case_note"):
            notes[r["benchmark"]] = r["case_note"]
    for k, v in notes.items():
        print(f"  {k}: {v}")
    goals = goal_lines(rows)
    if goals and not quick:
        print("\nlatency goals (docs/latency.md; one run: read two before trusting a miss):")
        print("\n".join(goals))
    print_summary(rows)


def print_summary(rows):
    """Kernels x references: the ratio column of the table in one grid."""
    refs = ["C serial", "C OpenMP", "numpy", "numba", "numba parallel", "CPython"]
    kernels = []
    for r in rows:
        if r["section"] == "kernel" and r["benchmark"] not in kernels:
            kernels.append(r["benchmark"])
    if not kernels:
        return
    print("\nasc speedup (reference time / asc time; above 1, asc is faster):")
    print(f"  {'kernel':16s}" + "".join(f"{x:>16s}" for x in refs))
    for k in kernels:
        rs = {r["impl"]: r for r in rows if r["benchmark"] == k}
        # the asc row, as add_ratios picks it (a case may name its asc
        # variants, as the fastmath row does: "asc fastmath=True")
        a = next((r for r in rs.values() if r["is_asc"]), None)
        cells = []
        for x in refs:
            r = rs.get(x)
            if a is None or a["status"] != "ok":
                cells.append("asc FAILED" if x == refs[0] else "")
            elif r is None:
                cells.append("-")
            elif r["status"] != "ok":
                cells.append("FAILED")
            else:
                cells.append(ratio_text(r["ratio"]))
        # other asc variants of the row (asc default against asc fastmath)
        cells += [f"  {i}: {ratio_text(r['ratio'])}" for i, r in rs.items()
                  if r["is_asc"] and r is not a and r["status"] == "ok"
                  and r["ratio"] is not None]
        print(f"  {k:16s}" + "".join(f"{c:>16s}" for c in cells))


def write_outputs(rows, info, args, started):
    os.makedirs(args.out_dir, exist_ok=True)
    stem = os.path.join(args.out_dir, started.strftime("%Y-%m-%d") + ("-quick" if args.quick else ""))
    doc = {"date": started.isoformat(timespec="seconds"), "quick": args.quick,
           "ratio": "reference median / asc median (time); above 1 asc is faster",
           "machine": info, "rows": rows}
    with open(stem + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    cols = ["section", "benchmark", "size", "impl", "status", "median", "min", "max", "unit",
            "reps", "rate", "rate_unit", "ratio", "note"]
    with open(stem + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow(["" if r.get(c) is None else r.get(c) for c in cols])
    png = stem + ".png"
    how = chart(rows, info, png, args.quick)
    return stem, how


def chart_data(rows):
    """(label, [(reference, ratio or None, failed_reason)]) per benchmark."""
    out = []
    groups = {}
    for r in rows:
        groups.setdefault(r["benchmark"], []).append(r)
    for name, rs in groups.items():
        a = next((r for r in rs if r["is_asc"]), None)
        refs = [r for r in rs if r is not a]
        if not refs:
            continue
        if a is None or a["status"] != "ok":
            out.append((name, [], "asc FAILED" if a is not None else "no asc row"))
            continue
        out.append((name, [(r["impl"], r["ratio"]) for r in refs if r["ratio"] is not None], None))
    return out


def chart(rows, info, png, quick):
    data = chart_data(rows)
    title = (f"libasc vs references (reference time / asc time; > 1: asc faster)\n"
             f"{info['cpu']}, {info['cores_usable']} cores{' — QUICK sizes, not meaningful' if quick else ''}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return gnuplot_chart(data, title, png)
    bars = []
    for name, refs, why in data:
        if why:
            bars.append((f"{name}: {why}", None, None))
        for impl, ratio in refs:
            bars.append((f"{name} — vs {impl}", ratio, impl))
    fig_h = max(4, 0.22 * len(bars) + 2)
    fig, ax = plt.subplots(figsize=(11, fig_h))
    ys = list(range(len(bars)))[::-1]
    refs_seen = []
    for b in bars:
        if b[2] and b[2] not in refs_seen:
            refs_seen.append(b[2])
    cmap = plt.get_cmap("tab20")
    colors = {n: cmap(i % 20) for i, n in enumerate(refs_seen)}
    vals = [b[1] for b in bars if b[1]]
    lo = min(vals + [0.5]) / 2
    hi = max(vals + [2]) * 3
    labelled = set()
    for y, (label, ratio, impl) in zip(ys, bars):
        if ratio is None:
            ax.text(1.0, y, "  no ratio", va="center", fontsize=7, color="red")
            continue
        # from 1 to the ratio: right of 1 asc is faster, left it is slower
        ax.barh(y, ratio - 1, left=1, color=colors[impl], height=0.8,
                label=None if impl in labelled else impl)
        labelled.add(impl)
        ax.text(ratio * 1.06 if ratio >= 1 else ratio / 1.06, y, ratio_text(ratio), va="center",
                ha="left" if ratio >= 1 else "right", fontsize=6.5)
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    if labelled:
        ax.legend(fontsize=7, loc="lower right", title="reference", title_fontsize=7)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(ys)
    ax.set_yticklabels([b[0] for b in bars], fontsize=7)
    ax.set_xlabel("reference median time / asc median time (log scale; right of 1: asc is faster)")
    ax.set_title(title, fontsize=9)
    ax.set_ylim(-1, len(bars))
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return "matplotlib"


def gnuplot_chart(data, title, png):
    if shutil.which("gnuplot") is None:
        return "none (neither matplotlib nor gnuplot)"
    lines = []
    for name, refs, why in data:
        if why:
            lines.append((f"{name}: {why}", 1e-9))
        for impl, ratio in refs:
            lines.append((f"{name} vs {impl}", ratio))
    d = tempfile.mkdtemp(prefix="asc-bench-plot-")
    dat = os.path.join(d, "ratios.dat")
    with open(dat, "w") as f:
        for i, (label, v) in enumerate(reversed(lines)):
            f.write(f"{i} {v} \"{label.replace(chr(34), '')}\"\n")
    h = max(480, 18 * len(lines) + 120)
    title = title.replace("\n", "\\n").replace('"', "'")
    script = f"""
set terminal pngcairo size 1100,{h} font ",8" noenhanced
set output "{png}"
set title "{title}"
set logscale x
set xrange [0.01:1000]
set yrange [-1:{len(lines)}]
set style fill solid 0.8
set xlabel "reference median time / asc median time (log; right of 1: asc faster)"
set arrow from 1, graph 0 to 1, graph 1 nohead lc rgb "black"
unset key
set grid x
plot "{dat}" using (1):1:($2 < 1 ? $2 : 1):($2 > 1e-8 ? ($2 > 1 ? $2 : 1) : 1/0):($1-0.4):($1+0.4):ytic(3) with boxxyerror, \\
     "{dat}" using ($2 > 1e-8 ? ($2 > 1 ? $2*1.1 : 1.1) : 1.1):1:($2 > 1e-8 ? sprintf("%.2fx", $2) : "no ratio") with labels left
"""
    gp = os.path.join(d, "plot.gp")
    open(gp, "w").write(script)
    p = subprocess.run(["gnuplot", gp], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    shutil.rmtree(d, ignore_errors=True)
    if p.returncode != 0:
        return f"gnuplot failed: {p.stdout.strip()[:200]}"
    return "gnuplot"
