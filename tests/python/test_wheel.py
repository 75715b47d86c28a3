"""`pip wheel ./bindings/python` makes a self-contained binary wheel that
installs into a clean venv outside the source tree and runs a kernel
(issue 15 part 2).  Reuses the CMake build (ASC_BUILD_DIR, default build/)
so it stays well under a few minutes.

The wheel is the same from any state of the tree (issue 33, item 12): one
built from a clean copy of the tree with the plain command (a fresh CMake
build inside) holds the same files as one built from a copy dirtied as
scripts/test.sh leaves a tree (an in-place build in bindings/python/asc,
a stale setuptools build/), with libasc_mpi where MPI is installed and
ascc (`asc-ascc`, `python -m asc.ascc`)."""
import os
import shutil
import subprocess
import sys
import sysconfig
import time
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
    # the extension's sources stay out; asc.jax's XLA handler is compiled
    # where jax is, so its source ships, as do the headers plugins build on
    assert [n for n in names if n.endswith(".c")] == ["asc/_xla_ffi.c"]
    for h in ("asc/include/asc/asc.h", "asc/include/asc/dlpack.h",
              "asc/include/asc/version.h"):
        assert h in names, (h, names)
    assert not any(n.endswith("_asc.h") or n.endswith("_asc_kernel.h")
                   for n in names)

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


def _copy_tree(dest):
    """The working tree's files as a clean clone would have them: tracked
    and untracked-but-not-ignored files, nothing a build wrote."""
    names = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], cwd=ROOT, capture_output=True,
                           check=True, timeout=120).stdout.decode().split("\0")
    for name in filter(None, names):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def _wheel(tree, tmp_path, tag, build_dir=None, cmake_args=None):
    """(wheel path, seconds) of pip wheel run on tree's bindings/python."""
    env = _clean_env(tmp_path)
    if build_dir is not None:
        env["ASC_BUILD_DIR"] = str(build_dir)
    if cmake_args is not None:
        env["CMAKE_ARGS"] = cmake_args
    dist = tmp_path / f"dist-{tag}"
    t = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                        "--no-build-isolation", "-v", "-w", str(dist),
                        str(tree / "bindings" / "python")],
                       capture_output=True, text=True, env=env, timeout=3000)
    took = time.monotonic() - t
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    msg = "reusing the CMake build" if build_dir else "building libasc in a fresh directory"
    assert msg in r.stdout + r.stderr, "setup.py does not say which build it uses"
    if cmake_args is not None:
        assert f"CMAKE_ARGS: {cmake_args}" in r.stdout + r.stderr
    wheels = list(dist.glob("libasc-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0], took


CHECK = """
import asc, asc.distributed, os, subprocess, sys
asc.compile("import asc\\n@asc.kernel\\ndef k(a):\\n    a[0] = 1\\n")
pkg = os.path.dirname(asc.__file__)
if os.environ.get("WANT_MPI") == "1":
    lib = asc.distributed._load()
    assert lib._name.startswith(pkg), lib._name
bin_dir = os.path.dirname(sys.executable)
for cmd in ([os.path.join(bin_dir, "asc-ascc"), "--help"],
            [sys.executable, "-m", "asc.ascc", "--help"]):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "--emit" in r.stdout + r.stderr, (cmd, r.stdout, r.stderr)
print("checks ok")
"""


@pytest.mark.slow
def test_wheel_is_the_same_from_a_clean_and_a_dirty_tree(tmp_path):
    if not (BUILD / "libasc.so").exists():
        pytest.fail(f"{BUILD}/libasc.so not built (cmake --build build)")
    want_mpi = shutil.which("mpicc") is not None
    clean = _copy_tree(tmp_path / "clean")
    # The fresh build reuses the test build's private jemalloc (the same
    # sources and flags; cmake/jemalloc.cmake) through CMAKE_ARGS, which
    # the wheel's setup.py passes on: a minute less of CI, the rest of
    # the build as a user's.
    je = BUILD / "jemalloc"
    args = f"-DASC_JEMALLOC_BUILT={je}" if (je / "lib").is_dir() else None
    whl_clean, t_clean = _wheel(clean, tmp_path, "clean", cmake_args=args)

    # A tree as scripts/test.sh leaves it: the in-place build of
    # scripts/build-python.sh, a library no build makes, a stale
    # setuptools build directory.
    dirty = _copy_tree(tmp_path / "dirty")
    env = _clean_env(tmp_path)
    r = subprocess.run(["bash", str(dirty / "scripts" / "build-python.sh"), str(BUILD)],
                       cwd=dirty, capture_output=True, text=True, env=env, timeout=1200)
    assert r.returncode == 0, r.stdout + r.stderr
    pkg = dirty / "bindings" / "python" / "asc"
    (pkg / "libstale.so.7").write_bytes(b"left by an old build")
    old = (dirty / "bindings" / "python" / "build" /
           f"lib.{sysconfig.get_platform()}-cpython-{sys.version_info[0]}{sys.version_info[1]}"
           / "asc")
    old.mkdir(parents=True)
    (old / "libold.so.1").write_bytes(b"left by an old build")
    (old / "gone.py").write_text("# a module that no longer exists\n")
    whl_dirty, t_dirty = _wheel(dirty, tmp_path, "dirty", build_dir=BUILD)
    print(f"wheel from a clean tree (fresh CMake build): {t_clean:.0f} s; "
          f"from a dirty tree (ASC_BUILD_DIR={BUILD}): {t_dirty:.0f} s")

    clean_names = sorted(zipfile.ZipFile(whl_clean).namelist())
    dirty_names = sorted(zipfile.ZipFile(whl_dirty).namelist())
    assert clean_names == dirty_names, (
        f"only in the clean tree's wheel: {sorted(set(clean_names) - set(dirty_names))}; "
        f"only in the dirty tree's: {sorted(set(dirty_names) - set(clean_names))}")
    assert "asc/_ascc" in clean_names and "asc/ascc.py" in clean_names, clean_names
    if want_mpi:
        assert "asc/libasc_mpi.so.0" in clean_names, "MPI is installed but not in the wheel"
    entry = [n for n in clean_names if n.endswith(".dist-info/entry_points.txt")]
    assert entry and "asc-ascc = asc.ascc:main" in \
        zipfile.ZipFile(whl_clean).read(entry[0]).decode()

    work = tmp_path / "elsewhere"
    work.mkdir()
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, env=_clean_env(tmp_path), timeout=300)
    py = venv / "bin" / "python"
    r = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "-q", str(whl_clean)],
                       capture_output=True, text=True, env=env, timeout=300, cwd=work)
    assert r.returncode == 0, r.stdout + r.stderr
    env["WANT_MPI"] = "1" if want_mpi else "0"
    r = subprocess.run([str(py), "-c", CHECK], capture_output=True, text=True,
                       env=env, timeout=600, cwd=work)
    assert r.returncode == 0 and "checks ok" in r.stdout, r.stdout + r.stderr
