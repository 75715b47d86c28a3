"""The Python examples a newcomer runs first: every `.py` under
examples/python is a Python program that runs as its docstring says, and
the matrix-multiply example teaches the loops the compiler turns into a
matrix product (not a hand-tiled nest that runs as written, 50x slower).
What the README's commands write (.venv, bench results) is ignored by git."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envvars import ascc_ir

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "python"
# mpi_sgd.py runs under mpirun: tests/python/test_distributed.py
RUNNABLE = sorted(p.name for p in EXAMPLES.glob("*.py") if p.name != "mpi_sgd.py")


def test_every_example_named_py_is_python():
    # kernel text that Python cannot parse (an assigning lambda) is named
    # .asc, so that nobody runs it as a script
    for path in sorted(EXAMPLES.glob("*.py")):
        try:
            compile(path.read_text(), str(path), "exec")
        except SyntaxError as exc:
            pytest.fail(f"{path.name} is not Python ({exc}); kernel text "
                        "belongs in a .asc file compiled with asc.compile")


@pytest.mark.parametrize("name", RUNNABLE)
def test_example_runs(name):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "bindings" / "python"), env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, str(EXAMPLES / name)], cwd=ROOT,
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


def test_matmul_example_is_a_recognised_product():
    ir = ascc_ir(EXAMPLES / "matmul.py", "matmul(f32[2], f32[2], f32[2])")
    assert "; gemmrec:" in ir and "is the matrix product" in ir, ir


@pytest.mark.parametrize("path", [".venv/bin/python", "bench/results/2031-01-01.json",
                                  "bench/results/2031-01-01.csv",
                                  "bench/results/2031-01-01.png"])
def test_what_the_readme_commands_write_is_ignored(tmp_path, path):
    # the README's `python3 -m venv .venv` and `bash bench/run.sh`: checked
    # with the tree's .gitignore in a repository of its own
    (tmp_path / ".gitignore").write_text((ROOT / ".gitignore").read_text())
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=60)
    r = subprocess.run(["git", "-c", "core.excludesFile=/dev/null", "check-ignore",
                        "-q", path], cwd=tmp_path, timeout=60)
    assert r.returncode == 0, f"{path} would show as untracked"
