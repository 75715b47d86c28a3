"""How much of each halo exchange ran while a kernel ran, from the traces
of examples/mpi/jacobi2d (ASC_TRACE, one file per rank, docs/tracing.md).
Each `group` span (the exchange, cat extern) is intersected with the
union of the `sweep` kernel spans (cat launch) of the same rank; the
table gives per rank the number of exchanges and the medians of the
exchange's length, of the part of it a sweep covered, and of that
share.  Without overlap (`--no-overlap`) the exchange runs on the
compute stream before the sweep and nothing covers it.

    mpirun -np 2 sh -c 'ASC_TRACE=jac.$OMPI_COMM_WORLD_RANK.json \\
        exec build/examples/jacobi2d 34 262144 20'
    python3 bench/mpi_overlap_trace.py jac.0.json jac.1.json
"""
import json
import statistics
import sys


def spans(events, cat, name):
    return sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                  if e.get("ph") == "X" and e.get("cat") == cat and e.get("name") == name)


def covered(span, others):
    """Microseconds of span that lie inside the union of others."""
    lo, hi = span
    total, cur = 0.0, lo
    for a, b in others:          # sorted by start
        a, b = max(a, cur), min(b, hi)
        if b > a:
            total += b - a
            cur = b
    return total


def main(paths):
    print("| rank | exchanges | exchange ms (median) | under a sweep ms | share |")
    print("|---|---:|---:|---:|---:|")
    for rank, path in enumerate(paths):
        with open(path) as f:
            data = json.load(f)
        events = data["traceEvents"] if isinstance(data, dict) else data
        groups = spans(events, "extern", "group")
        sweeps = spans(events, "launch", "sweep")
        if not groups:
            print(f"| {rank} | 0 | - | - | - |")
            continue
        lens = [(b - a) / 1e3 for a, b in groups]
        cov = [covered(g, sweeps) / 1e3 for g in groups]
        share = [c / l if l > 0 else 0.0 for c, l in zip(cov, lens)]
        print(f"| {rank} | {len(groups)} | {statistics.median(lens):.2f} | "
              f"{statistics.median(cov):.2f} | {statistics.median(share):.0%} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
