"""asc.profile: a trace of what libasc ran, and a per-kernel summary.

    with asc.profile("run.json") as prof:
        kern(a, b, c)
    print(prof.table())

The file is Chrome trace-event JSON (docs/tracing.md): open it in Perfetto
or chrome://tracing, or draw it with tools/trace_plot.py.  This module is
plain Python over the file, so tools/trace_summary.py uses it too.
"""
import json
import os
import tempfile

__all__ = ["Profile", "profile", "summarize", "format_table", "load"]


def load(path):
    """The trace's event list."""
    with open(path) as f:
        return json.load(f)["traceEvents"]


def summarize(events):
    """Per kernel launch: {name: (calls, total_us, mean, min, max, share)},
    share being the kernel's time over the trace's wall time (first event
    to last), in percent; sorted by total time, largest first."""
    spans = [e for e in events if e.get("ph") == "X"]
    if not spans:
        return {}
    t0 = min(e["ts"] for e in spans)
    t1 = max(e["ts"] + e.get("dur", 0) for e in spans)
    wall = max(t1 - t0, 1e-9)
    per = {}
    for e in spans:
        if e.get("cat") != "launch":
            continue
        per.setdefault(e["name"], []).append(e.get("dur", 0.0))
    rows = {}
    for name, durs in sorted(per.items(), key=lambda kv: -sum(kv[1])):
        total = sum(durs)
        rows[name] = (len(durs), total, total / len(durs), min(durs),
                      max(durs), 100.0 * total / wall)
    return rows


def format_table(events):
    """The summary as a text table, like `nsys stats`' kernel summary."""
    rows = summarize(events)
    head = ("Time (%)", "Total (us)", "Calls", "Mean (us)", "Min (us)",
            "Max (us)", "Kernel")
    lines = ["%8s  %12s  %7s  %11s  %11s  %11s  %s" % head]
    for name, (calls, total, mean, lo, hi, share) in rows.items():
        lines.append("%8.1f  %12.3f  %7d  %11.3f  %11.3f  %11.3f  %s"
                     % (share, total, calls, mean, lo, hi, name))
    return "\n".join(lines)


class Profile:
    """A trace session; a context manager.  path None writes to a
    temporary file, removed when the object is collected."""

    def __init__(self, path=None):
        self._own = path is None
        if path is None:
            fd, path = tempfile.mkstemp(prefix="asc-profile-", suffix=".json")
            os.close(fd)
        self.path = os.fspath(path)
        self._events = None
        self._running = False

    def start(self):
        from . import _asc
        _asc.profiler_start(self.path)
        self._running = True
        self._events = None
        return self

    def stop(self):
        from . import _asc
        if self._running:
            self._running = False
            _asc.profiler_stop()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    @property
    def events(self):
        """The trace's events (after the session has stopped)."""
        if self._running:
            raise RuntimeError("asc.profile: the trace is still running")
        if self._events is None:
            self._events = load(self.path)
        return self._events

    def summary(self):
        return summarize(self.events)

    def table(self):
        return format_table(self.events)

    def __del__(self):
        if self._own and not self._running:
            try:
                os.unlink(self.path)
            except OSError:
                pass


def profile(path=None):
    """with asc.profile("run.json") as prof: ... ; prof.table()"""
    return Profile(path)
