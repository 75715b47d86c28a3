"""What the tests share for pass switches: a context manager for
environment variables set while a kernel compiles and runs (switches such
as ASC_WAVEFRONT=0 are read when a kernel is compiled, and key the cache),
a module compiled with a pass on and off, and `ascc --emit=ir`."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))


class env:
    """`with env(ASC_X="0", ASC_Y=None):` sets ASC_X, removes ASC_Y, and
    puts both back as they were on leaving."""

    def __init__(self, **kw):
        self.kw = kw

    def __enter__(self):
        self.saved = {k: os.environ.get(k) for k in self.kw}
        for k, v in self.kw.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def compile_on_off(asc, src, var):
    """src compiled twice: with the pass switch var unset (on) and "0"
    (off).  Kernels compile at their first launch: set var around the
    calls too."""
    with env(**{var: None}):
        on = asc.compile(src)
    with env(**{var: "0"}):
        off = asc.compile(src)
    return on, off


def ascc_ir(src, sig, extra_env=None, boundscheck=False):
    """The optimised IR `build/ascc --emit=ir` prints for signature sig of
    the kernels in file src, with extra_env added to the environment."""
    import pytest
    ascc = os.path.join(ROOT, "build", "ascc")
    if not os.path.exists(ascc):
        pytest.skip("no build/ascc")
    e = dict(os.environ)
    e.update(extra_env or {})
    cmd = [ascc, "--emit=ir", "--signature", sig, str(src)]
    if boundscheck:
        cmd.insert(1, "--boundscheck")
    r = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def shim_child(tmp_path, src, code, shim, cores=None):
    """Runs code (python -c, argv: the kernel file holding src, and the
    stand-in BLAS's path or "-") in a child process with the stand-in
    BLAS (ASC_BLAS_LIB) unless shim is "-", on the cores named (ASC_VISIBLE_CORES)
    when given; returns its output lines as {first word: the others}."""
    import sys
    f = tmp_path / "k.py"
    f.write_text(src)
    env = dict(os.environ, ASC_CACHE_DIR=str(tmp_path / "c"),
               PYTHONPATH=os.path.join(ROOT, "bindings", "python"))
    env.pop("ASC_BLAS", None)
    if shim != "-":
        env["ASC_BLAS_LIB"] = str(shim)
    if cores is not None:
        env["ASC_VISIBLE_CORES"] = cores
    p = subprocess.run([sys.executable, "-c", code, str(f), str(shim)],
                       env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr + p.stdout
    return {w[0]: w[1:] for w in (x.split() for x in p.stdout.splitlines())}
