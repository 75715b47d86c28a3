#!/usr/bin/env python3
"""Checks a libasc trace (docs/tracing.md).

validate_schema(doc): the Chrome trace-event format's documented
required fields per phase type (the JSON Object Format, "traceEvents").
check_scripted(doc): the timeline of examples/trace_streams.c, span by
span.  As a program: trace_check.py EXAMPLE_BINARY (runs it with a fresh
kernel cache, both through ascProfilerStart/Stop and through $ASC_TRACE,
and checks both files).
"""
import json
import os
import subprocess
import sys
import tempfile

EPS = 0.002  # us: timestamps are printed with ns precision

NUM = (int, float)


def _need(cond, msg):
    if not cond:
        raise AssertionError(msg)


def validate_schema(doc):
    """Required fields of each phase type, from the Trace Event Format
    document (Duration 'B'/'E', Complete 'X', Instant 'i'/'I', Counter
    'C', Flow 's'/'t'/'f', Metadata 'M')."""
    _need(isinstance(doc, dict), "top level must be the JSON object form")
    _need(isinstance(doc.get("traceEvents"), list), "traceEvents list")
    if "displayTimeUnit" in doc:
        _need(doc["displayTimeUnit"] in ("ms", "ns"), "displayTimeUnit")
    for ev in doc["traceEvents"]:
        _need(isinstance(ev, dict), f"event is not an object: {ev!r}")
        ph = ev.get("ph")
        _need(isinstance(ph, str) and len(ph) == 1, f"ph: {ev}")
        _need(isinstance(ev.get("name"), str), f"name: {ev}")
        _need(isinstance(ev.get("pid"), int), f"pid: {ev}")
        _need(isinstance(ev.get("tid"), int), f"tid: {ev}")
        if "cat" in ev:
            _need(isinstance(ev["cat"], str), f"cat: {ev}")
        if "args" in ev:
            _need(isinstance(ev["args"], dict), f"args: {ev}")
        if ph != "M":
            _need(isinstance(ev.get("ts"), NUM) and ev["ts"] >= 0,
                  f"ts: {ev}")
        if ph == "X":
            _need(isinstance(ev.get("dur"), NUM) and ev["dur"] >= 0,
                  f"dur: {ev}")
        elif ph in ("B", "E"):
            pass
        elif ph in ("i", "I"):
            _need(ev.get("s", "t") in ("g", "p", "t"), f"scope: {ev}")
        elif ph == "C":
            _need(isinstance(ev.get("args"), dict) and ev["args"]
                  and all(isinstance(v, NUM) for v in ev["args"].values()),
                  f"counter args: {ev}")
        elif ph in ("s", "t", "f"):
            _need(isinstance(ev.get("id"), (int, str)), f"flow id: {ev}")
            if ph == "f" and "bp" in ev:
                _need(ev["bp"] == "e", f"bp: {ev}")
        elif ph == "M":
            _need(ev["name"] in ("process_name", "process_labels",
                                 "process_sort_index", "thread_name",
                                 "thread_sort_index"), f"metadata: {ev}")
            args = ev.get("args")
            _need(isinstance(args, dict), f"metadata args: {ev}")
            if ev["name"].endswith("_name"):
                _need(isinstance(args.get("name"), str), f"name arg: {ev}")
            if ev["name"].endswith("sort_index"):
                _need(isinstance(args.get("sort_index"), int), f"idx: {ev}")
        else:
            raise AssertionError(f"unexpected phase {ph!r}: {ev}")
    # B/E pairs balance per track.
    depth = {}
    for ev in doc["traceEvents"]:
        key = (ev["pid"], ev["tid"])
        if ev["ph"] == "B":
            depth[key] = depth.get(key, 0) + 1
        elif ev["ph"] == "E":
            depth[key] = depth.get(key, 0) - 1
            _need(depth[key] >= 0, f"E without B on {key}")
    _need(all(v == 0 for v in depth.values()), "unbalanced B/E")


def end(ev):
    return ev["ts"] + ev.get("dur", 0)


def within(inner, outer):
    return inner["ts"] >= outer["ts"] - EPS and end(inner) <= end(outer) + EPS


def names(doc):
    """{(pid, tid): track name} from the metadata."""
    return {(e["pid"], e["tid"]): e["args"]["name"]
            for e in doc["traceEvents"]
            if e["ph"] == "M" and e["name"] == "thread_name"}


def check_monotonic(doc):
    """Every thread appends its spans when they end, from one monotonic
    clock: per thread track, ends never go backwards in file order, and
    every event of a track has a named track."""
    tracks = names(doc)
    last = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "M" or e["ph"] == "C":
            continue
        key = (e["pid"], e["tid"])
        _need(key in tracks, f"event on an unnamed track: {e}")
        if e["ph"] == "X" and e["pid"] == 2 and e["cat"] != "hostfn":
            _need(end(e) >= last.get(key, 0) - EPS,
                  f"time went backwards on {tracks[key]}: {e}")
            last[key] = end(e)


def check_scripted(doc):
    """The timeline of examples/trace_streams.c."""
    validate_schema(doc)
    check_monotonic(doc)
    evs = doc["traceEvents"]
    tracks = names(doc)
    xs = [e for e in evs if e["ph"] == "X"]

    # Stream tracks, in the order the program ran them.
    def on_stream(tid):
        return sorted((e for e in xs if e["pid"] == 1 and e["tid"] == tid),
                      key=lambda e: e["ts"])

    launches = [e for e in xs if e["cat"] == "launch"]
    s1 = [k for k, v in tracks.items()
          if k[0] == 1 and any(e["name"] == "check" and e["tid"] == k[1]
                               for e in launches)]
    _need(len(s1) == 1, f"one stream ran check: {s1}")
    s1 = s1[0][1]
    waits = [e for e in xs if e["name"] == "event wait"]
    _need(len(waits) == 1, f"one event wait: {waits}")
    s2 = waits[0]["tid"]
    _need(s1 != s2, "two streams")
    _need(tracks[(1, s1)].startswith("stream ")
          and tracks[(1, s2)].startswith("stream "), "stream track names")

    seq1 = [(e["name"], e["args"].get("blocks")) for e in on_stream(s1)]
    _need(seq1 == [("smooth", 4), ("smooth", 2), ("event record", None),
                   ("host function", None), ("check", 1)],
          f"stream 1 order: {seq1}")
    seq2 = [(e["name"], e["args"].get("blocks")) for e in on_stream(s2)]
    _need(seq2 == [("smooth", 2), ("memset", None), ("event wait", None),
                   ("memcpy", None), ("smooth", 4)]
          or seq2 == [("smooth", 2), ("memset", 1), ("event wait", None),
                      ("memcpy", 1), ("smooth", 4)],
          f"stream 2 order: {seq2}")
    # A stream runs one op at a time.
    for tid in (s1, s2):
        ops = on_stream(tid)
        for a, b in zip(ops, ops[1:]):
            _need(b["ts"] >= end(a) - EPS, f"overlap on stream: {a} {b}")

    # Launch spans: args, and every block inside its launch, on a thread.
    for ln in launches:
        a = ln["args"]
        _need(a["blocks"] >= 1 and a["team"] >= 1, f"launch args: {ln}")
        _need(a.get("queued_us", -1) >= 0, f"queue time: {ln}")
        blocks = [e for e in xs if e["cat"] == "block"
                  and e["args"]["launch"] == a["launch"]]
        _need(sorted(b["args"]["block"] for b in blocks)
              == list(range(a["blocks"])), f"blocks of {ln}: {blocks}")
        for b in blocks:
            _need(b["pid"] == 2 and b["name"] == ln["name"], f"block {b}")
            _need(within(b, ln), f"block {b} outside its launch {ln}")
            t = tracks[(2, b["tid"])]
            _need(t.startswith("worker ") or t.startswith("host thread"),
                  f"block on {t}")
    for ln in launches:
        if ln["name"] == "smooth":
            _need("f64[1]" in ln["args"].get("signature", ""),
                  f"signature: {ln}")
    check = [e for e in launches if e["name"] == "check"][0]
    _need("ValueError: value above limit" in check["args"].get("error", ""),
          f"raising launch: {check}")
    _need(all("error" not in e["args"] for e in launches if e is not check),
          "only check raised")

    # The event: a flow from the record on stream 1 to the wait on stream 2.
    rec = [e for e in xs if e["name"] == "event record"]
    _need(len(rec) == 1, f"one record: {rec}")
    rec, wait = rec[0], waits[0]
    flows = [e for e in evs if e["ph"] in ("s", "f")]
    _need(len(flows) == 2, f"one flow: {flows}")
    fs = [e for e in flows if e["ph"] == "s"][0]
    ff = [e for e in flows if e["ph"] == "f"][0]
    _need(fs["id"] == ff["id"] == wait["args"]["flow"], "flow ids")
    _need(fs["tid"] == s1 and abs(fs["ts"] - rec["ts"]) <= EPS,
          f"flow starts at the record: {fs} {rec}")
    _need(ff["tid"] == s2 and ff.get("bp") == "e" and within(ff, wait),
          f"flow ends in the wait: {ff} {wait}")
    _need(ff["ts"] >= fs["ts"], "flow goes forward in time")
    after = on_stream(s2)[3:]
    first1 = on_stream(s1)[1]
    _need(all(e["ts"] >= end(first1) - EPS for e in after),
          "stream 2's work after the wait starts after stream 1's record")

    # Host function: on stream 1 and on the callback thread.
    hf = [e for e in xs if e["cat"] == "hostfn"]
    _need(len(hf) == 2, f"host function spans: {hf}")
    hthr = [e for e in hf if e["pid"] == 2][0]
    _need(tracks[(2, hthr["tid"])] == "callback thread", "callback track")
    _need(within(hthr, [e for e in hf if e["pid"] == 1][0]), "host fn nest")

    # Copies and the pool.
    copies = [e for e in xs if e["cat"] == "copy"]
    _need(sorted(e["name"] for e in copies)
          == ["memcpy", "memcpy", "memset", "memset"], f"copies: {copies}")
    _need(all(e["args"]["bytes"] == 8 << 16 for e in copies), "copy bytes")
    pool = [e for e in xs if e["cat"] == "memory"]
    _need([e["name"] for e in pool] == ["pool alloc", "pool free"],
          f"pool: {pool}")
    counters = sorted((e for e in evs if e["ph"] == "C"),
                      key=lambda e: e["ts"])
    _need(len(counters) == 2, f"counters: {counters}")
    _need(counters[0]["args"]["used"] >= 8 << 16
          and counters[0]["args"]["reserved"] >= counters[0]["args"]["used"]
          and counters[1]["args"]["used"]
          == counters[0]["args"]["used"] - pool[0]["args"]["bytes"],
          f"pool counters: {counters}")

    # Compiles: smooth misses then hits, check misses; phases nest.
    comp = sorted((e for e in xs if e["cat"] == "compile"
                   and e["name"] in ("smooth", "check")),
                  key=lambda e: e["ts"])
    _need([e["name"] for e in comp] == ["smooth", "smooth", "check"]
          or [e["name"] for e in comp] == ["smooth", "check", "smooth"],
          f"compiles: {comp}")
    cache = [e for e in xs if e["cat"] == "cache"]
    for c in comp:
        inner = [e for e in cache if within(e, c)]
        _need(len(inner) == 1, f"one cache lookup in {c}: {inner}")
        c["cache"] = inner[0]
    smooth = [c for c in comp if c["name"] == "smooth"]
    _need(smooth[0]["cache"]["name"] == "cache miss"
          and smooth[1]["cache"]["name"] == "cache hit", "miss, then hit")
    for c in comp:
        phases = [e["name"] for e in xs if e["cat"] == "compile"
                  and e is not c and within(e, c["cache"])]
        # the stages of docs/latency.md; dlopen: the build's output is
        # loaded once before the cache publishes it
        want = (["front end", "types, passes, emit C", "infer types", "lower",
                 "emit C", "C compiler", "dlopen"]
                if c["cache"]["name"] == "cache miss" else [])
        _need(sorted(phases) == sorted(want), f"phases of {c}: {phases}")
        _need(c["tid"] == c["cache"]["tid"], "compile on one thread")
    # Worker tracks exist.
    _need(any(v.startswith("worker ") for v in tracks.values()),
          "worker tracks")


def run_example(binary, use_env):
    with tempfile.TemporaryDirectory(prefix="asc-trace-") as d:
        path = os.path.join(d, "trace.json")
        env = dict(os.environ, ASC_CACHE_DIR=os.path.join(d, "cache"))
        argv = [binary]
        if use_env:
            env["ASC_TRACE"] = path
        else:
            env.pop("ASC_TRACE", None)
            argv.append(path)
        subprocess.run(argv, env=env, check=True, timeout=300,
                       stdout=subprocess.PIPE)
        with open(path) as f:
            return json.load(f)


def main(argv):
    for use_env in (False, True):
        check_scripted(run_example(argv[1], use_env))
        print("trace_check: ok (%s)" %
              ("ASC_TRACE" if use_env else "ascProfilerStart/Stop"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
