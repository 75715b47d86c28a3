#!/usr/bin/env python3
"""Run every kernel of the corpus (tests/python/corpus/: the numba ports and
the qa_* kernels written from public task descriptions) and print
what happened to each, then what blocks them, by construct.

    python3 tests/tools/corpus_report.py            # each kernel in its own process
    python3 tests/tools/corpus_report.py --inprocess   # faster; a crash ends the run
    python3 tests/tools/corpus_report.py npb_gemm nex_fbcorr   # some kernels only
    python3 tests/tools/corpus_report.py --verify-port spcl/npbench=PATH \
        numba/numba-examples=PATH     # git checkouts of the sources (fetch them)

Needs the in-tree package (scripts/build-python.sh build).  Statuses:
  ok                              compiled, ran, matched numpy
  diagnostic at line N: message   asc.CompileError at a line inside the kernel
  wrong result / kernel raised / launch error / internal error /
  diagnostic outside the kernel / crash    -- libasc bugs (issue 16 item 9)

Blocker tables:
  first diagnostic   the construct named by each kernel's first diagnostic
  all diagnostics    every construct the compiler reported for a kernel
  used in the source what each kernel's text uses (a static scan: what must
                     work before the kernel can run, whether or not the
                     compiler gets that far today)
"""
import argparse
import ast
import collections
import re
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bindings" / "python"))
sys.path.insert(0, str(ROOT / "tests" / "python"))
os.environ.setdefault("ASC_CACHE_DIR", tempfile.mkdtemp(prefix="asc-corpus-cache-"))

from corpus import _harness as h  # noqa: E402

ONE = """
import json, sys
sys.path[:0] = [{b!r}, {t!r}]
from corpus import _harness as h
r = h.run({n!r})
print("RESULT " + json.dumps(dict(status=r.status, lineno=r.lineno, message=r.message,
                                  diagnostics=r.diagnostics)))
"""


def run_isolated(name, timeout):
    code = ONE.format(b=str(ROOT / "bindings" / "python"), t=str(ROOT / "tests" / "python"), n=name)
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=timeout, env=os.environ.copy())
    except subprocess.TimeoutExpired:
        return h.Result(name, h.CRASH, message=f"timed out after {timeout} s")
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            d = json.loads(line[7:])
            return h.Result(name, d["status"], d["lineno"], d["message"],
                            [tuple(x) for x in d["diagnostics"]])
    tail = (p.stderr.strip().splitlines() or [""])[-1]
    return h.Result(name, h.CRASH, message=f"exit status {p.returncode}: {tail}"[:200])


def _normalised(fn):
    """A function's AST without decorators and docstring, prange from any module."""
    fn = ast.parse(ast.unparse(fn)).body[0]
    fn.decorator_list = []
    if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(
            getattr(fn.body[0], "value", None), ast.Constant) and isinstance(fn.body[0].value.value, str):
        fn.body = fn.body[1:]
    for n in ast.walk(fn):
        if isinstance(n, ast.Attribute) and n.attr == "prange" and isinstance(n.value, ast.Name):
            n.value.id = "PRANGE_MODULE"
    return ast.dump(fn)


def verify_port(names, checkouts):
    """Each function of each corpus file must equal (as an AST) the function
    of the same name in the source file its header cites: the port rule."""
    bad = 0
    for n in names:
        text = (h.CORPUS_DIR / f"{n}.py").read_text()
        m = re.search(r"^# Ported from (\S+) .*\n# file (\S+?)(?: at commit \w+)?\.$", text, re.M)
        if not m:   # qa_*: written for this project from a task's description
            print(f"{n:30s} not checked (not a port)")
            continue
        repo, path = m.group(1), m.group(2)
        if repo not in checkouts:
            print(f"{n:30s} not checked (no checkout of {repo})")
            continue
        src = subprocess.run(["git", "-C", checkouts[repo], "show", f"HEAD:{path}"],
                             capture_output=True, text=True, check=True).stdout
        theirs = collections.defaultdict(list)
        for f in ast.walk(ast.parse(src)):
            if isinstance(f, ast.FunctionDef):
                theirs[f.name].append(_normalised(f))
        for f in ast.parse(text).body:
            if isinstance(f, ast.FunctionDef) and f.name != "args":
                ok = _normalised(f) in theirs.get(f.name, [])
                bad += not ok
                print(f"{n:30s} {f.name:32s} {'same as the source' if ok else 'DIFFERS from ' + path}")
    print(f"functions differing from their source: {bad}")
    return 1 if bad else 0


def short(message):
    return message.split(" (numpy names kernels accept")[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="corpus kernels (default: all)")
    ap.add_argument("--inprocess", action="store_true", help="run in this process (no crash isolation)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per kernel (isolated runs)")
    ap.add_argument("--verify-port", nargs="+", metavar="OWNER/REPO=CHECKOUT",
                    help="only check that each ported function equals its source's (AST, "
                         "ignoring decorators, docstrings and prange's module)")
    a = ap.parse_args()
    names = a.names or h.names()
    if a.verify_port:
        return verify_port(names, dict(x.split("=", 1) for x in a.verify_port))

    results = []
    for n in names:
        if a.inprocess:
            try:
                r = h.run(n)
            except Exception as e:   # noqa: BLE001 - a harness failure is reported, not fatal
                r = h.Result(n, "harness error", message=f"{type(e).__name__}: {e}")
        else:
            r = run_isolated(n, a.timeout)
        results.append(r)
        print(f"{n:30s} {short(r.line())[:110]}", flush=True)

    by_status = collections.Counter(r.status for r in results)
    print("\nstatus counts:")
    for s, c in by_status.most_common():
        print(f"  {c:3d}  {s}")

    first = collections.Counter()
    every = collections.Counter()
    for r in results:
        if r.status == h.DIAG or r.status == h.LAUNCH:
            msg = r.message if r.status == h.DIAG else "launch: " + r.message
            first[h.diag_construct(msg)] += 1
            kinds = {h.diag_construct(m) for _, m in r.diagnostics} or {h.diag_construct(msg)}
            for k in kinds:
                every[k] += 1
    used = collections.Counter()
    for n in names:
        for c in h.source_constructs(h.load(n)):
            used[c] += 1
    blocked = sum(1 for r in results if r.status != h.OK)

    print(f"\nblockers by construct, {blocked} of {len(results)} kernels not running:")
    print("  first diagnostic (kernels):")
    for k, c in first.most_common():
        print(f"    {c:3d}  {k}")
    print("  all diagnostics of a kernel (kernels):")
    for k, c in every.most_common():
        print(f"    {c:3d}  {k}")
    print(f"  used in the source, all {len(names)} kernels (static scan):")
    for k, c in used.most_common():
        print(f"    {c:3d}  {k}")
    bad = [r for r in results if r.status not in (h.OK, h.DIAG)]
    if bad:
        print("\nlibasc bugs (not a diagnostic at a kernel line):")
        for r in bad:
            print(f"  {r.name}: {r.line()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
