"""`import asc` works in every context Python code runs in, without
restarting the interpreter or changing the process's allocator (issue 15).

Each test runs in a subprocess.  The code before the import appends a line
to a counter file; it must have run exactly once."""
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "bindings" / "python"
BUILD = Path(os.environ.get("ASC_BUILD_DIR", ROOT / "build"))

# Compiles and runs one kernel; prints "kernel ok" when the result is right.
KERNEL = textwrap.dedent('''
    import asc, numpy as np
    _m = asc.compile("""
    import asc
    @asc.kernel
    def add1(a, b):
        for i in asc.prange(a.shape[0]):
            b[i] = a[i] + 1.0
    """)
    def run_kernel():
        a = np.arange(100.0); b = np.empty(100)
        _m.add1(a, b)
        assert (b == a + 1.0).all(), b
        return float(b.sum())
    run_kernel()
    print("kernel ok", flush=True)
''')


def _env(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(PKG)
    env["ASC_CACHE_DIR"] = os.environ.get("ASC_CACHE_DIR", str(tmp_path / "cache"))
    return env


def _run(args, tmp_path, **kw):
    kw.setdefault("timeout", 300)
    r = subprocess.run(args, capture_output=True, text=True, env=_env(tmp_path),
                       cwd=kw.pop("cwd", tmp_path), **kw)
    assert r.returncode == 0, f"rc={r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    return r


def _counter(tmp_path):
    """Python lines that record one run of the code before the import."""
    f = tmp_path / "count.txt"
    return f, f"open({str(f)!r}, 'a').write('ran\\n')\n"


def _ran_once(f):
    assert f.read_text() == "ran\n", f"code before the import ran {f.read_text().count('ran')} times"


def test_import_after_stdin_was_read(tmp_path):
    f, count = _counter(tmp_path)
    script = tmp_path / "s.py"
    script.write_text("import sys\n" + count + "data = sys.stdin.read()\n" + KERNEL +
                      "print('stdin:', data.strip())\n")
    r = _run([sys.executable, str(script)], tmp_path, input="hello from stdin\n")
    assert "kernel ok" in r.stdout and "stdin: hello from stdin" in r.stdout
    _ran_once(f)


def test_python_dash_c(tmp_path):
    f, count = _counter(tmp_path)
    r = _run([sys.executable, "-c", count + KERNEL], tmp_path)
    assert "kernel ok" in r.stdout
    _ran_once(f)


def test_python_dash_reads_script_from_stdin(tmp_path):
    f, count = _counter(tmp_path)
    r = _run([sys.executable, "-"], tmp_path, input=count + KERNEL + "print('after')\n")
    assert "kernel ok" in r.stdout and "after" in r.stdout
    _ran_once(f)


@pytest.mark.parametrize("form", ["heredoc", "process_substitution"])
def test_heredoc_and_dev_fd_scripts(tmp_path, form):
    f, count = _counter(tmp_path)
    body = count + KERNEL + "print('after')\n"
    (tmp_path / "body.py").write_text(body)
    if form == "heredoc":
        cmd = f"{sys.executable} /dev/stdin <<'EOF'\n{body}EOF\n"
    else:
        cmd = f"{sys.executable} <(cat {tmp_path / 'body.py'})"
    r = _run(["bash", "-c", cmd], tmp_path)
    assert "kernel ok" in r.stdout and "after" in r.stdout
    _ran_once(f)


def test_import_inside_a_thread(tmp_path):
    f, count = _counter(tmp_path)
    code = count + textwrap.dedent(f"""
        import threading
        def body():
            exec({KERNEL!r}, {{}})
        t = threading.Thread(target=body)
        t.start(); t.join()
        print("main thread done")
    """)
    r = _run([sys.executable, "-c", code], tmp_path)
    assert "kernel ok" in r.stdout and "main thread done" in r.stdout
    _ran_once(f)


@pytest.mark.parametrize("method", ["spawn", "fork", "forkserver"])
def test_multiprocessing_workers_import_asc(tmp_path, method):
    f, count = _counter(tmp_path)
    script = tmp_path / "mp.py"
    script.write_text(textwrap.dedent(f"""
        import multiprocessing as mp
        import sys
        def work(n):
            import numpy as np
            import asc
            assert "asc" in sys.modules
            m = asc.compile('''
        import asc
        @asc.kernel
        def scale(a, k: int):
            for i in asc.prange(a.shape[0]):
                a[i] = a[i] * k
        ''')
            a = np.ones(10, np.int64)
            m.scale(a, n)
            return int(a.sum())
        if __name__ == "__main__":
            {count.strip()}
            assert "asc" not in sys.modules
            ctx = mp.get_context({method!r})
            with ctx.Pool(2) as pool:
                print("results", pool.map(work, [1, 2, 3]), flush=True)
            assert "asc" not in sys.modules
    """))
    r = _run([sys.executable, str(script)], tmp_path, timeout=240)
    assert "results [10, 20, 30]" in r.stdout
    _ran_once(f)


def _python_embed_flags():
    cfg = shutil.which(f"python{sysconfig.get_python_version()}-config",
                       path=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    cfg = cfg or shutil.which("python3-config")
    if cfg is None:
        pytest.fail("python3-config not found (scripts/setup.sh installs python3-dev)")
    cflags = subprocess.check_output([cfg, "--cflags"], text=True).split()
    ldflags = subprocess.check_output([cfg, "--embed", "--ldflags"], text=True).split()
    libdir = sysconfig.get_config_var("LIBDIR")
    return cflags, ldflags + ([f"-Wl,-rpath,{libdir}"] if libdir else [])


def test_embedded_interpreter_in_a_c_host(tmp_path):
    f, count = _counter(tmp_path)
    host = tmp_path / "host.c"
    code = count + KERNEL
    c_string = code.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n\"\n\"")
    host.write_text(textwrap.dedent("""
        #include <Python.h>
        #include <stdio.h>
        #include <unistd.h>
        int main(void) {
          pid_t pid = getpid();
          Py_Initialize();
          int rc = PyRun_SimpleString("%s");
          if (Py_FinalizeEx() < 0) rc = 1;
          printf("host still here, same pid: %%d, rc %%d\\n", pid == getpid(), rc);
          return rc;
        }
    """) % c_string)
    cflags, ldflags = _python_embed_flags()
    exe = tmp_path / "host"
    subprocess.run(["cc", *cflags, str(host), "-o", str(exe), *ldflags], check=True,
                   capture_output=True, text=True)
    r = _run([str(exe)], tmp_path)
    assert "kernel ok" in r.stdout
    assert "host still here, same pid: 1, rc 0" in r.stdout
    _ran_once(f)


def test_pytest_with_default_capture(tmp_path):
    test = tmp_path / "test_user.py"
    test.write_text("import sys\n" + KERNEL + textwrap.dedent("""
        def test_kernel():
            assert run_kernel() == sum(range(1, 101))
        def test_other():
            assert "asc" in sys.modules
    """))
    r = _run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(test)],
             tmp_path)
    assert "2 passed" in r.stdout, r.stdout


@pytest.mark.parametrize("order", ["numba_first", "asc_first"])
def test_numba_and_asc_in_either_order(tmp_path, order):
    try:
        import numba  # noqa: F401
    except ImportError:
        pytest.skip("numba is not installed (scripts/setup.sh installs it)")
    imports = "import numba\nimport asc\n" if order == "numba_first" else "import asc\nimport numba\n"
    code = imports + KERNEL + textwrap.dedent("""
        import numpy as np
        @numba.njit
        def total(a):
            s = 0.0
            for x in a:
                s += x
            return s
        print("numba", total(np.arange(10.0)))
        print("asc", run_kernel())
    """)
    r = _run([sys.executable, "-c", code], tmp_path)
    assert "numba 45.0" in r.stdout and "asc 5050.0" in r.stdout


def test_c_program_linking_libasc_keeps_glibc_malloc(tmp_path):
    lib = BUILD / "libasc.so"
    if not lib.exists():
        pytest.fail(f"{lib} not built (cmake --build build)")
    src = tmp_path / "m.c"
    src.write_text(textwrap.dedent("""
        #define _GNU_SOURCE
        #include <asc/asc.h>
        #include <dlfcn.h>
        #include <malloc.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        int main(void) {
          void *dev = NULL;
          if (ascInit(0) != ascSuccess || ascMalloc(&dev, 1 << 20) != ascSuccess) return 2;
          Dl_info info;
          void *m = dlsym(RTLD_DEFAULT, "malloc");
          if (!m || !dladdr(m, &info)) return 3;
          struct mallinfo2 before = mallinfo2();
          char *p = malloc(4000);
          struct mallinfo2 after = mallinfo2();
          memset(p, 1, 4000);
          printf("malloc from %s\\n", info.dli_fname);
          printf("mallinfo2 grew: %d\\n", after.uordblks >= before.uordblks + 4000);
          printf("jemalloc symbols visible: %d\\n",
                 dlsym(RTLD_DEFAULT, "mallocx") != NULL || dlsym(RTLD_DEFAULT, "asc_je_mallocx") != NULL);
          free(p);
          ascFree(dev);
          return 0;
        }
    """))
    exe = tmp_path / "m"
    subprocess.run(["cc", str(src), "-o", str(exe), f"-I{ROOT / 'include'}",
                    f"-I{BUILD / 'generated'}", f"-L{BUILD}", "-lasc",
                    f"-Wl,-rpath,{BUILD}", "-ldl"], check=True, capture_output=True, text=True)
    r = _run([str(exe)], tmp_path)
    assert "malloc from " in r.stdout and "libc.so" in r.stdout.split("malloc from ")[1].split()[0], r.stdout
    assert "mallinfo2 grew: 1" in r.stdout
    assert "jemalloc symbols visible: 0" in r.stdout
