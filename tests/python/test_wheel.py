"""`pip wheel ./bindings/python` makes a self-contained binary wheel that
installs into a clean venv outside the source tree and runs a kernel
(issue 15 part 2).  Reuses the CMake build (ASC_BUILD_DIR, default build/)
so it stays well under a few minutes."""
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("ASC_BUILD_DIR", ROOT / "build")).resolve()

KERNEL = '''
import asc, numpy as np, os, sys
m = asc.compile("""
import asc
@asc.kernel
def twice(a, b):
    for i in asc.prange(a.shape[0]):
        b[i] = 2 * a[i]
""")
a = np.arange(10.0); b = np.empty(10)
m.twice(a, b)
assert (b == 2 * a).all()
print("asc from", os.path.dirname(asc.__file__))
print("kernel ok")
'''


def _clean_env(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "LD_LIBRARY_PATH", "ASC_BUILD_DIR")}
    env["ASC_CACHE_DIR"] = str(tmp_path / "cache")
    return env


@pytest.mark.slow
def test_wheel_installs_in_a_clean_venv_outside_the_tree(tmp_path):
    if not (BUILD / "libasc.so").exists():
        pytest.fail(f"{BUILD}/libasc.so not built (cmake --build build)")
    dist = tmp_path / "dist"
    env = _clean_env(tmp_path)
    env["ASC_BUILD_DIR"] = str(BUILD)
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                        "--no-build-isolation", "-q", "-w", str(dist),
                        str(ROOT / "bindings" / "python")],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    wheels = list(dist.glob("libasc-*.whl"))
    assert len(wheels) == 1, wheels
    whl = wheels[0]
    assert "-cp3" in whl.name and "linux_x86_64" in whl.name, whl.name
    names = zipfile.ZipFile(whl).namelist()
    for lib in ("asc/libasc.so.0", "asc/libhwloc.so.15", "asc/libuv.so.1",
                "asc/libxxhash.so.0"):
        assert lib in names, (lib, names)
    assert not any(n.endswith(".c") for n in names)

    # A venv in a directory without the source tree; numpy comes from the
    # system site-packages (no network needed), asc only from the wheel.
    work = tmp_path / "elsewhere"
    work.mkdir()
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, env=_clean_env(tmp_path), timeout=300)
    py = venv / "bin" / "python"
    env = _clean_env(tmp_path)
    r = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "-q", str(whl)],
                       capture_output=True, text=True, env=env, timeout=300, cwd=work)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([str(py), "-c", KERNEL], capture_output=True, text=True,
                       env=env, timeout=300, cwd=work)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "kernel ok" in r.stdout
    assert str(venv) in r.stdout.split("asc from ")[1].splitlines()[0]
    r = subprocess.run([str(py), "-m", "pip", "show", "libasc"], capture_output=True,
                       text=True, env=env, timeout=120, cwd=work)
    assert "Name: libasc" in r.stdout
    r = subprocess.run([str(py), "-m", "asc", "--version"], capture_output=True,
                       text=True, env=env, timeout=120, cwd=work)
    version = [line for line in (ROOT / "CMakeLists.txt").read_text().splitlines()
               if line.startswith("project(libasc VERSION")][0].split()[2]
    assert r.stdout.strip() == f"asc {version}"
    r = subprocess.run([str(py), "-m", "asc", "info"], capture_output=True,
                       text=True, env=env, timeout=120, cwd=work)
    for key in ("device:", "cores", "C compiler:", "cache dir:", "kernel flags:"):
        assert key in r.stdout, r.stdout


def test_missing_cmake_says_run_setup(tmp_path):
    env = _clean_env(tmp_path)
    env["PATH"] = str(tmp_path / "empty") + os.pathsep + os.path.dirname(sys.executable)
    r = subprocess.run([sys.executable, "setup.py", "-q", "build_ext",
                        "--build-temp", str(tmp_path / "bt")],
                       cwd=ROOT / "bindings" / "python", capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert "run scripts/setup.sh" in last and "not found" in last, r.stderr
    assert "Traceback" not in r.stderr
