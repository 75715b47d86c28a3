"""Every ```python and ```c block of README.md is valid and runs (issue 15):
Python blocks run as scripts, C blocks are compiled, linked against the
build's libasc and run; the ```sh block that installs under another prefix
and builds the C block there runs as written, with $HOME a temporary
directory."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("ASC_BUILD_DIR", ROOT / "build")).resolve()
BLOCKS = re.findall(r"^```(\w+)\n(.*?)^```", (ROOT / "README.md").read_text(),
                    re.S | re.M)


def _env(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "bindings" / "python")
    env.setdefault("ASC_CACHE_DIR", str(tmp_path / "cache"))
    return env


def test_readme_has_python_and_c_blocks():
    langs = [lang for lang, _ in BLOCKS]
    assert langs.count("python") >= 2 and "c" in langs, langs
    assert set(langs) <= {"python", "c", "sh"}, langs


@pytest.mark.parametrize("n", [i for i, (lang, _) in enumerate(BLOCKS) if lang == "python"])
def test_python_block_runs(tmp_path, n):
    script = tmp_path / f"readme_{n}.py"
    script.write_text(BLOCKS[n][1])
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       env=_env(tmp_path), cwd=tmp_path, timeout=300)
    assert r.returncode == 0, f"README block {n}:\n{BLOCKS[n][1]}\n{r.stderr}"


@pytest.mark.parametrize("n", [i for i, (lang, _) in enumerate(BLOCKS) if lang == "c"])
def test_c_block_compiles_links_and_runs(tmp_path, n):
    if not (BUILD / "libasc.so").exists():
        pytest.fail(f"{BUILD}/libasc.so not built (cmake --build build)")
    src = tmp_path / f"readme_{n}.c"
    src.write_text(BLOCKS[n][1])
    exe = tmp_path / f"readme_{n}"
    r = subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", str(src),
                        "-o", str(exe), f"-I{ROOT / 'include'}", f"-I{BUILD / 'generated'}",
                        f"-L{BUILD}", "-lasc", f"-Wl,-rpath,{BUILD}"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"README block {n} does not compile:\n{r.stderr}"
    r = subprocess.run([str(exe)], capture_output=True, text=True, env=_env(tmp_path),
                       cwd=tmp_path, timeout=300)
    assert r.returncode == 0, f"README block {n}:\n{r.stdout}{r.stderr}"


def test_install_under_another_prefix(tmp_path):
    if not (BUILD / "libasc.so").exists():
        pytest.fail(f"{BUILD}/libasc.so not built (cmake --build build)")
    langs = [lang for lang, _ in BLOCKS]
    assert "sh" in langs, "README has no commands for another prefix"
    n = langs.index("sh")
    assert langs[n - 1] == "c", "the commands follow the C program"
    work = tmp_path / "work"
    work.mkdir()
    (work / "add.c").write_text(BLOCKS[n - 1][1])
    (work / "build").symlink_to(BUILD)
    env = _env(tmp_path)
    env["HOME"] = str(tmp_path / "home")
    for var in ("PKG_CONFIG_PATH", "LD_LIBRARY_PATH"):
        env.pop(var, None)
    r = subprocess.run(["bash", "-euo", "pipefail", "-c", BLOCKS[n][1]], cwd=work,
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"README commands:\n{BLOCKS[n][1]}\n{r.stdout}{r.stderr}"
    assert r.stdout.strip().splitlines()[-1] == "11 22 33 44", r.stdout
