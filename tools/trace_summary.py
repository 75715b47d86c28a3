#!/usr/bin/env python3
"""Per-kernel summary of a libasc trace (docs/tracing.md), like `nsys stats`:

    tools/trace_summary.py trace.json

prints, for each kernel: share of the trace's wall time, total, calls,
mean, min and max launch time (a launch's span on its stream, from the
pool taking it to its last block finishing)."""
import importlib.util
import sys
from pathlib import Path

# The same code as asc.profile(...).table(), loaded without the extension.
_spec = importlib.util.spec_from_file_location(
    "asc_profile", Path(__file__).resolve().parents[1] / "bindings" /
    "python" / "asc" / "_profile.py")
_profile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_profile)


def main(argv):
    if len(argv) != 2:
        print("usage: trace_summary.py trace.json", file=sys.stderr)
        return 2
    print(_profile.format_table(_profile.load(argv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
