"""The code blocks of docs/*.md run as written, by the convention
docs/README.md states: a ```python block is a program run as a script
from the repository root, a ```c block is compiled, linked against the
build's libasc and run; a block whose opening fence follows the line
`<!-- fragment -->` is part of a program and is not run; every other
fenced block carries a tag that is not a language run here (sh, text,
ir).  docs/README.md, the index, names every page."""
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
BUILD = Path(os.environ.get("ASC_BUILD_DIR", ROOT / "build")).resolve()
FRAGMENT = "<!-- fragment -->"
RUN = ("python", "c")

# A fence may be indented (inside a list item); its body is dedented by as
# much.  The closing fence has the opening one's indentation.
_FENCE = re.compile(r"^(?P<ind> *)```(?P<tag>[^\n`]*)\n(?P<body>.*?)^(?P=ind)```[ \t]*$",
                    re.S | re.M)


def _blocks():
    out = []
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text()
        for m in _FENCE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
            out.append({"page": page.name, "line": line, "tag": m["tag"].strip(),
                        "fragment": before == FRAGMENT,
                        "body": textwrap.dedent(m["body"]),
                        "id": f"{page.name}:{line}"})
    return out


BLOCKS = _blocks()
PROGRAMS = [b for b in BLOCKS if b["tag"] in RUN and not b["fragment"]]


def _env(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "bindings" / "python")
    env.setdefault("ASC_CACHE_DIR", str(tmp_path / "cache"))
    return env


def test_every_block_is_tagged():
    untagged = [b["id"] for b in BLOCKS if not b["tag"]]
    assert not untagged, ("fenced blocks without a tag (python, c, sh, text, "
                          f"ir; docs/README.md): {untagged}")
    odd = [b["id"] for b in BLOCKS if b["fragment"] and b["tag"] not in RUN]
    assert not odd, f"{FRAGMENT} marks python or c blocks only: {odd}"


def test_the_pages_have_programs():
    # the test must not pass by finding nothing
    tags = [b["tag"] for b in PROGRAMS]
    assert tags.count("python") >= 4, [b["id"] for b in PROGRAMS]


def test_the_index_names_every_page():
    index = (DOCS / "README.md").read_text()
    missing = [p.name for p in sorted(DOCS.glob("*.md"))
               if p.name != "README.md" and f"]({p.name})" not in index]
    assert not missing, f"docs/README.md does not list {missing}"


@pytest.mark.parametrize("block", [b for b in PROGRAMS if b["tag"] == "python"],
                         ids=lambda b: b["id"])
def test_python_block_runs(tmp_path, block):
    script = tmp_path / "block.py"
    script.write_text(block["body"])
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       env=_env(tmp_path), cwd=ROOT, timeout=300)
    assert r.returncode == 0, f"{block['id']}:\n{block['body']}\n{r.stdout}{r.stderr}"


@pytest.mark.parametrize("block", [b for b in PROGRAMS if b["tag"] == "c"],
                         ids=lambda b: b["id"])
def test_c_block_compiles_links_and_runs(tmp_path, block):
    if not (BUILD / "libasc.so").exists():
        pytest.fail(f"{BUILD}/libasc.so not built (cmake --build build)")
    src = tmp_path / "block.c"
    src.write_text(block["body"])
    exe = tmp_path / "block"
    r = subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", str(src),
                        "-o", str(exe), f"-I{ROOT / 'include'}", f"-I{BUILD / 'generated'}",
                        f"-L{BUILD}", "-lasc", f"-Wl,-rpath,{BUILD}"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"{block['id']} does not compile:\n{r.stderr}"
    r = subprocess.run([str(exe)], capture_output=True, text=True, env=_env(tmp_path),
                       cwd=ROOT, timeout=300)
    assert r.returncode == 0, f"{block['id']}:\n{r.stdout}{r.stderr}"


def test_architecture_names_every_source_file():
    """docs/architecture.md's "Every file of src/" lists each file of src/
    (a file added without its line fails here)."""
    import subprocess
    text = (DOCS / "architecture.md").read_text()
    files = subprocess.run(["git", "ls-files", "src"], cwd=DOCS.parent,
                           capture_output=True, text=True, check=True).stdout.split()
    missing = [f for f in files if f.endswith((".c", ".h", ".inc"))
               and f"`{f[len('src/'):]}`" not in text]
    assert not missing, f"docs/architecture.md does not name {missing}"
