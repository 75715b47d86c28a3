"""asc.profile and the trace tools (docs/tracing.md).  The span-by-span
checks of the C scripted run live in tests/scripts/trace_check.py; here
they run on the C example (from the build tree) and on a Python run."""
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import asc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


trace_check = _load("trace_check", os.path.join(ROOT, "tests", "scripts", "trace_check.py"))


@asc.kernel
def axpy(a: asc.float64, x, y):
    for i in asc.prange(x.shape[0]):
        y[i] = a * x[i] + y[i]


@asc.kernel
def axpy_blocks(a: asc.float64, x, y):
    for i in asc.prange(asc.get_block_idx(), x.shape[0], asc.get_block_num()):
        y[i] = a * x[i] + y[i]


@asc.kernel
def fails(x):
    if x[0] > 0:
        raise ValueError("positive")


def _example():
    build = os.environ.get("ASC_BUILD_DIR", os.path.join(ROOT, "build"))
    exe = os.path.join(build, "examples", "trace_streams")
    assert os.path.exists(exe), f"build {exe} first (cmake --build {build})"
    return exe


@pytest.mark.parametrize("use_env", [False, True], ids=["api", "ASC_TRACE"])
def test_c_scripted_run(use_env):
    doc = trace_check.run_example(_example(), use_env)
    trace_check.check_scripted(doc)


def test_python_profile(tmp_path):
    path = tmp_path / "run.json"
    x = np.arange(1000, dtype=np.float64)
    y = np.zeros_like(x)
    s1, s2 = asc.Stream(), asc.Stream()
    with asc.profile(path) as prof:
        for _ in range(3):
            axpy(2.0, x, y)
        axpy[4, s1](1.0, x, y)
        axpy[2, s2](1.0, x, x.copy())
        axpy_blocks[4, s1](1.0, x, y)
        s1.synchronize()
        s2.synchronize()
        with pytest.raises(ValueError, match="positive"):
            fails(np.ones(3))
    doc = json.loads(path.read_text())
    trace_check.validate_schema(doc)
    trace_check.check_monotonic(doc)
    rows = prof.summary()
    assert rows["axpy"][0] == 5
    assert rows["fails"][0] == 1
    calls, total, mean, lo, hi, share = rows["axpy"]
    assert lo <= mean <= hi and abs(total - mean * calls) < 1e-6 and share > 0
    table = prof.table()
    assert "axpy" in table and "Calls" in table
    evs = prof.events
    err = [e for e in evs if e.get("cat") == "launch" and e["name"] == "fails"]
    assert "ValueError: positive" in err[0]["args"]["error"]
    # axpy never reads its block index: each launch runs one block
    # (docs/abi.md); axpy_blocks is SPMD: one event per block
    blocks = [e for e in evs if e.get("cat") == "block" and e["name"] == "axpy"]
    assert len(blocks) == 5
    blocks = [e for e in evs if e.get("cat") == "block" and e["name"] == "axpy_blocks"]
    assert len(blocks) == 4
    # A second session has only its own launches.
    with asc.profile() as p2:
        axpy(2.0, x, y)
    assert p2.summary()["axpy"][0] == 1 and "fails" not in p2.summary()


def test_profile_errors(tmp_path):
    with asc.profile(tmp_path / "a.json"):
        with pytest.raises(asc.Error):
            asc.profile(tmp_path / "b.json").start()
    with pytest.raises(asc.Error):
        asc.profile(tmp_path / "no" / "such" / "dir.json").start()


def test_tools(tmp_path):
    doc = trace_check.run_example(_example(), False)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    out = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "trace_summary.py"),
                          str(path)], check=True, capture_output=True, text=True).stdout
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["Time", "(%)"]
    smooth = [l for l in lines if l.endswith(" smooth")]
    assert len(smooth) == 1 and smooth[0].split()[2] == "4"
    png = tmp_path / "t.png"
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "trace_plot.py"), str(path),
                    "-o", str(png)], check=True, capture_output=True)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


PROFILED = '''import asc


@asc.kernel
def twice(x, out):
    for i in asc.prange(x.shape[0]):
        out[i] = 2.0 * x[i]
'''


def test_profile_compile_prints_every_stage(tmp_path):
    """python -m asc profile-compile: the table of a cold compile names
    each stage (docs/latency.md), and --hit's new process loads the entry
    without compiling."""
    path = tmp_path / "twice.py"
    path.write_text(PROFILED)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "bindings", "python"))
    r = subprocess.run([sys.executable, "-m", "asc", "profile-compile", str(path),
                        "--args", "np.arange(5.0), np.empty(5)", "--hit"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    cold, hit = r.stdout.split("\n\n")
    rows = [line.split()[:-1] for line in cold.splitlines()[2:]]
    names = [" ".join(w) for w in rows]
    for stage in ("asc.compile (wall)", "first call (wall)", "front end (module)",
                  "cache key", "cache miss", "front end", "infer types", "lower",
                  "pass fold", "pass parallelize", "pass dce", "emit C", "C compiler",
                  "dlopen", "launch twice", "total (wall)"):
        assert stage in names, (stage, cold)
    assert any(n.startswith("specialise twice(f64[") for n in names), cold
    # nesting: the passes are inside the miss, indented deeper than it
    indent = {line.strip().rsplit(None, 1)[0]: len(line) - len(line.lstrip())
              for line in cold.splitlines()[2:]}
    assert indent["pass fold"] > indent["cache miss"] > indent["cache key"] - 1
    for line in cold.splitlines()[2:]:
        float(line.split()[-1])   # every row has its milliseconds
    assert "cache hit" in hit and "C compiler" not in hit and "pass fold" not in hit, hit
    assert "dlopen" in hit and "launch twice" in hit, hit
