#!/usr/bin/env python3
"""Draws a libasc trace (docs/tracing.md) as a Gantt chart:

    tools/trace_plot.py trace.json -o timeline.png [--title T]

One row per stream (launches, host functions, event records and waits,
with an arrow from each record to the wait it released), one row per
thread (blocks, copies, compile phases, pool operations)."""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"launch": "#4c72b0", "block": "#55a868", "hostfn": "#c44e52",
          "event": "#8172b2", "copy": "#ccb974", "compile": "#64b5cd",
          "cache": "#dd8452", "memory": "#937860"}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("-o", "--output", default="timeline.png")
    ap.add_argument("--title", default=None)
    a = ap.parse_args(argv[1:])
    with open(a.trace) as f:
        evs = json.load(f)["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in evs
             if e["ph"] == "M" and e["name"] == "thread_name"}
    spans = [e for e in evs if e["ph"] == "X"]
    if not spans:
        print("trace_plot: no spans in %s" % a.trace, file=sys.stderr)
        return 1
    t0 = min(e["ts"] for e in spans)
    rows = sorted({(e["pid"], e["tid"]) for e in spans})
    row = {k: i for i, k in enumerate(rows)}
    fig, ax = plt.subplots(figsize=(13, 1.6 + 0.55 * len(rows)))
    # Nested spans (compile phases) are drawn thinner, over their parent.
    for e in sorted(spans, key=lambda e: -e.get("dur", 0)):
        y = row[(e["pid"], e["tid"])]
        dur = e.get("dur", 0) / 1e3
        x = (e["ts"] - t0) / 1e3
        c = COLORS.get(e.get("cat"), "#999999")
        if e.get("args", {}).get("error"):
            c = "#ff0000"
        inner = any(o is not e and o["pid"] == e["pid"] and
                    o["tid"] == e["tid"] and o["ts"] <= e["ts"] and
                    o["ts"] + o.get("dur", 0) >= e["ts"] + e.get("dur", 0) and
                    o.get("dur", 0) > e.get("dur", 0) for o in spans)
        h = 0.45 if inner else 0.8
        if dur <= 0:
            ax.plot([x, x], [y - h / 2, y + h / 2], color=c, lw=1.5)
            continue
        ax.broken_barh([(x, dur)], (y - h / 2, h), facecolors=c,
                       edgecolors="black", linewidth=0.3)
        label = e["name"]
        if e.get("cat") == "block":
            label = "%s b%d" % (e["name"], e["args"].get("block", 0))
        ax.text(x + dur / 2, y, label, ha="center", va="center",
                fontsize=6, clip_on=True)
    starts = {e["id"]: e for e in evs if e["ph"] == "s"}
    for e in evs:
        if e["ph"] == "f" and e["id"] in starts:
            s = starts[e["id"]]
            ax.annotate("", xy=((e["ts"] - t0) / 1e3, row[(e["pid"], e["tid"])]),
                        xytext=((s["ts"] - t0) / 1e3, row[(s["pid"], s["tid"])]),
                        arrowprops=dict(arrowstyle="->", color="#8172b2",
                                        lw=1.2))
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([names.get(k, "%d/%d" % k) for k in rows])
    ax.invert_yaxis()
    ax.set_xlabel("ms since the first event")
    ax.grid(axis="x", alpha=0.3)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in COLORS.values()]
    ax.legend(handles, list(COLORS), loc="upper center", fontsize=7,
              ncol=len(COLORS), bbox_to_anchor=(0.5, -0.14), frameon=False)
    ax.set_title(a.title or a.trace)
    fig.tight_layout()
    fig.savefig(a.output, dpi=110)
    print("trace_plot: wrote %s" % a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
