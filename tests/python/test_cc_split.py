"""A large module builds in two compilations at once (src/jit/cc.c,
docs/latency.md "A build in two parts"): -DASC_PART=1 makes the kernels'
entries and tables, -DASC_PART=2 their parallel bodies, and the two
objects are linked.  Checked: both halves run (a logging compiler
wrapper), the results are bit for bit those of a build in one part at
-O0 and -O3, only the module's descriptors are exported, a failing half
fails the build with its diagnostics and leaves no object behind, and
ASC_CC_JOBS=1 or ASC_CFLAGS keep one compilation."""
import ctypes
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BINDINGS = os.path.join(ROOT, "bindings", "python")
KERNELS = os.path.join(ROOT, "bench", "kernels", "latency_array.py")

if os.cpu_count() is None or len(os.sched_getaffinity(0)) < 2:
    pytest.skip("a build in two parts needs two CPUs", allow_module_level=True)

CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import asc
    m = asc.compile(sys.argv[1])
    r = np.random.default_rng(7)
    x = r.standard_normal((96, 40)) * 3.0
    out = np.zeros((96, 8))
    m.score_rows(x, r.random(40), r.random(40), out)
    print(json.dumps(out.tobytes().hex()))
""")


def run_child(tmp_path, name, env_extra):
    cache = tmp_path / f"cache-{name}"
    env = dict(os.environ, ASC_CACHE_DIR=str(cache),
               PYTHONPATH=BINDINGS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("ASC_CFLAGS", None)
    env.pop("ASC_CC_JOBS", None)
    env.update(env_extra)
    p = subprocess.run([sys.executable, "-c", CHILD, KERNELS], env=env,
                       capture_output=True, text=True, timeout=600)
    return p, cache


def logging_cc(tmp_path, fail_part=None):
    """A compiler wrapper that records each run's arguments (and fails the
    run of one half when fail_part is given)."""
    log = tmp_path / "cc.log"
    real = shutil.which("gcc") or shutil.which("cc")
    fail = ""
    if fail_part is not None:
        fail = (f'case " $* " in *" -DASC_PART={fail_part} "*) '
                f'echo "injected failure in part {fail_part}" >&2; exit 3;; esac\n')
    script = tmp_path / "cc-wrapper"
    script.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\n{fail}exec "{real}" "$@"\n')
    script.chmod(0o755)
    return str(script), log


@pytest.mark.parametrize("tier", ["0", "1"])
def test_two_parts_give_the_same_bits(tmp_path, tier):
    cc, log = logging_cc(tmp_path)
    one, _ = run_child(tmp_path, "one", {"ASC_CC": cc, "ASC_CC_JOBS": "1", "ASC_TIER": tier})
    assert one.returncode == 0, one.stderr
    lines = log.read_text().splitlines()
    assert lines and not any("ASC_PART" in x for x in lines), lines
    log.unlink()
    # ASC_CC_JOBS unset: two parts are the default with two CPUs
    two, cache = run_child(tmp_path, "two", {"ASC_CC": cc, "ASC_TIER": tier})
    assert two.returncode == 0, two.stderr
    lines = log.read_text().splitlines()
    assert any("-DASC_PART=1 -c" in x for x in lines), lines
    assert any("-DASC_PART=2 -c" in x for x in lines), lines
    assert json.loads(one.stdout) == json.loads(two.stdout)
    # no object is left beside the published entry
    left = [f for _, _, fs in os.walk(cache) for f in fs if f.endswith(".o")]
    assert left == []


def test_only_the_descriptors_are_exported(tmp_path):
    p, cache = run_child(tmp_path, "sym", {"ASC_TIER": "0", "ASC_CC_JOBS": "2"})
    assert p.returncode == 0, p.stderr
    sos = [os.path.join(d, f) for d, _, fs in os.walk(cache) for f in fs if f.endswith(".so")]
    assert sos
    lib = ctypes.CDLL(sos[0])
    assert hasattr(lib, "asc_module_v1")
    for name in ("k0_score_rows", "k0_score_rows_body0", "k0_score_rows_body1"):
        assert not hasattr(lib, name), name


@pytest.mark.parametrize("part", [1, 2])
def test_a_failing_half_fails_the_build(tmp_path, part):
    cc, _ = logging_cc(tmp_path, fail_part=part)
    p, cache = run_child(tmp_path, f"fail{part}", {"ASC_CC": cc, "ASC_TIER": "0",
                                                   "ASC_CC_JOBS": "2"})
    assert p.returncode != 0
    assert f"injected failure in part {part}" in p.stderr, p.stderr
    assert "C compiler" in p.stderr and "failed" in p.stderr, p.stderr
    left = [f for _, _, fs in os.walk(cache) for f in fs if f.endswith((".o", ".so"))]
    assert left == []


def test_cflags_keep_one_compilation(tmp_path):
    cc, log = logging_cc(tmp_path)
    p, _ = run_child(tmp_path, "cflags", {"ASC_CC": cc, "ASC_TIER": "0", "ASC_CC_JOBS": "2",
                                          "ASC_CFLAGS": "-g0"})
    assert p.returncode == 0, p.stderr
    lines = log.read_text().splitlines()
    assert lines and not any("ASC_PART" in x for x in lines), lines
