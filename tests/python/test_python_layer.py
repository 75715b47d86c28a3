"""The Python layer without compiling anything: source assembly, frozen
globals, kernel-language names, error translation, launch syntax checks."""
import inspect
import subprocess
import sys
import textwrap

import pytest

import asc
import sample_kernels as sk


def source(k):
    text, filename, first, frozen = k._source()
    return text.split("\n"), filename, first, frozen


def at(lines, first, real_line):
    return lines[real_line - first]


def test_kernel_text_keeps_real_line_numbers_and_includes_helpers():
    lines, filename, first, frozen = source(sk.scale_add)
    assert filename == sk.__file__
    helper_line = inspect.getsourcelines(sk.scaled)[1]
    kernel_line = inspect.getsourcelines(sk.scale_add)[1]
    # every line of both functions sits at its real line number
    real = open(sk.__file__).read().split("\n")
    for i, text in enumerate(lines):
        if text and not text.startswith(("@", "import", "from")):
            assert real[first - 1 + i] == text
    assert at(lines, first, kernel_line) == "@asc.kernel"
    assert at(lines, first, helper_line) == "@asc.func"
    assert frozen == {"SCALE": 3, "OFFSET": 0.5}


def test_imports_of_asc_and_math_come_first_at_real_lines():
    lines, _, first, _ = source(sk.scale_add)
    real = open(sk.__file__).read().split("\n")
    imports = [(first + i, t) for i, t in enumerate(lines) if t.startswith(("import", "from"))]
    assert (3, "import asc") in imports
    assert (4, "from asc import kernel as _kernel_alias") in imports
    assert real[2] == "import asc"
    # math is not imported by the file: it goes on a free line above the kernel
    (math_line,) = [ln for ln, t in imports if t == "import math"]
    assert math_line < inspect.getsourcelines(sk.scaled)[1] and real[math_line - 1] == ""


def test_decorators_are_canonical_and_options_kept():
    lines, _, first, _ = source(sk.checked)
    def_line = inspect.getsourcelines(sk.checked.py_func)[1] + 2
    assert at(lines, first, def_line - 2) == ""            # '@asc.jit(debug=True,'
    assert at(lines, first, def_line - 1) == "@asc.kernel"  # '         boundscheck=True)'
    assert at(lines, first, def_line).startswith("def checked(")
    assert sk.checked.options == {"debug": True, "boundscheck": True, "opt_level": 0,
                                  "fastmath": 0}
    lines, _, first, frozen = source(sk.aliased)
    line = inspect.getsourcelines(sk.aliased.py_func)[1]
    assert at(lines, first, line) == "@asc.kernel" and frozen == {"SCALE": 3}


def test_methods_are_dedented():
    lines, _, first, _ = source(sk.Holder.method_kernel)
    line = inspect.getsourcelines(sk.Holder.method_kernel.py_func)[1]
    assert at(lines, first, line) == "" and at(lines, first, line + 1) == "@asc.kernel"
    assert at(lines, first, line + 2) == "def method_kernel(a):"


def test_helpers_defined_after_the_kernel_are_found():
    lines, _, first, _ = source(sk.uses_later_helper)
    assert "@asc.func" in lines and "def later(x):" in lines


def test_closure_constants_are_frozen():
    TILE = 16

    @asc.kernel
    def k(a):
        a[0] = TILE

    assert k._source()[3] == {"TILE": 16}


def test_kernel_object_before_compilation():
    k = sk.scale_add
    assert isinstance(k, asc.Kernel)
    assert k.__name__ == "scale_add" and k.py_func.__name__ == "scale_add"
    assert "scale_add" in repr(k)
    assert k.__wrapped__ is k.py_func


def test_helpers_run_as_python_outside_kernels():
    assert sk.scaled(2) == 6
    assert "scaled" in repr(sk.scaled)


def test_launch_configuration_checks_need_no_compiler():
    k = sk.scale_add
    for bad in (0, -1, 2**32):
        with pytest.raises(ValueError):
            k[bad]
    for bad in ("x", 1.5, True, (), (1, 2, 3)):
        with pytest.raises(TypeError):
            k[bad]
    with pytest.raises(TypeError):
        k[1, "stream"]
    assert "blocks=4" in repr(k[4])
    assert "blocks=2" in repr(k[2, asc.Stream()])
    assert "blocks=1" in repr(k[1, None])


def test_decorating_non_functions():
    with pytest.raises(TypeError):
        asc.kernel(3)
    with pytest.raises(TypeError):
        asc.kernel(print)


def test_source_unavailable_suggests_asc_compile():
    ns = {"asc": asc}
    exec("def f(a):\n    a[0] = 1\n", ns)
    with pytest.raises(asc.SourceError) as info:
        asc.kernel(ns["f"])
    assert "asc.compile" in str(info.value)
    assert isinstance(info.value, OSError)


def test_plain_repl_gives_clear_error():
    code = "import asc\n@asc.kernel\ndef f(a):\n    a[0] = 1\n"
    r = subprocess.run([sys.executable, "-i"], input=code, capture_output=True,
                       text=True, env=_env(), timeout=120)
    assert "asc.compile" in r.stderr


def _env():
    import os
    env = dict(os.environ)
    env["PYTHONPATH"] = str(asc.__path__[0].rsplit("/", 1)[0])
    return env


def test_bare_kernel_object_is_rejected():
    with pytest.raises(TypeError, match="not bound"):
        asc.Kernel()()
    with pytest.raises(TypeError):
        asc.Kernel(1)


@pytest.mark.parametrize("name", ["prange", "static_range", "parallel_for",
                                  "get_block_idx", "get_block_num", "barrier",
                                  "critical", "atomic_add", "local_array",
                                  "shared_array"])
def test_kernel_only_names_raise_outside_kernels(name):
    with pytest.raises(asc.KernelOnlyError) as info:
        getattr(asc, name)(4)
    assert "inside an @asc.kernel" in str(info.value)
    assert isinstance(info.value, RuntimeError)


def test_math_names_work_in_python():
    assert asc.sqrt(4.0) == 2.0 and asc.exp(0.0) == 1.0


def test_annotations():
    t = asc.Tensor[asc.float32, 2]
    assert t.dtype is asc.float32 and t.ndim == 2
    assert repr(t) == "asc.Tensor[asc.float32, 2]"
    assert asc.Tensor[asc.int8].ndim is None
    assert asc.Tensor["float64", 1] == asc.Tensor[asc.float64, 1]
    with pytest.raises(TypeError):
        asc.Tensor[asc.float32, -1]
    with pytest.raises(TypeError):
        asc.Tensor[asc.float32, 1, 2]
    with pytest.raises(TypeError):
        asc.Tensor()
    assert repr(asc.ConstExpr[int]) == "asc.ConstExpr[int]"
    with pytest.raises(TypeError):
        asc.ConstExpr["x"]


def test_compile_error_from_diagnostics():
    msg = ("/src/k.py:12:9: error: cannot add tensor and str\n"
           "    x = a + 's'\n"
           "        ^\n"
           "/src/k.py:14:5: error: undefined name 'y'\n"
           "    y\n"
           "    ^\n")
    err = asc._errors.from_code(asc._asc.ascErrorCompile, "ascErrorCompile", msg)
    assert isinstance(err, asc.CompileError) and isinstance(err, SyntaxError)
    assert isinstance(err, asc.Error)
    assert err.filename == "/src/k.py" and err.lineno == 12 and err.offset == 9
    assert err.text.strip() == "x = a + 's'"
    assert "^" in str(err) and "cannot add tensor and str" in str(err)
    assert [d[1] for d in err.diagnostics] == [12, 14]


def test_compile_error_columns_of_dedented_kernels_are_real():
    source(sk.Holder.method_kernel)
    line = inspect.getsourcelines(sk.Holder.method_kernel.py_func)[1] + 3
    msg = f"{sk.__file__}:{line}:5: error: bad\n    a[0] = 2\n    ^\n"
    err = asc._errors.from_code(asc._asc.ascErrorCompile, "ascErrorCompile", msg)
    assert err.offset == 5 + 4 and err.lineno == line
    assert err.text.strip() == "a[0] = 2"


@pytest.mark.parametrize("cls", ["ValueError", "IndexError", "ZeroDivisionError",
                                 "AssertionError", "RuntimeError", "OverflowError",
                                 "ArithmeticError", "TypeError", "Exception"])
def test_kernel_exceptions_map_to_builtin_classes(cls):
    msg = f"/src/k.py:7: kernel 'scale_add' raised {cls}: bad value 3"
    err = asc._errors.from_code(asc._asc.ascErrorKernelException,
                                "ascErrorKernelException", msg)
    assert type(err).__name__ == cls and type(err).__module__ == "builtins"
    assert err.kernel == "scale_add" and err.lineno == 7 and err.filename == "/src/k.py"
    assert str(err) == msg and err.kernel_message == "bad value 3"


def test_other_errors_are_asc_errors():
    err = asc._errors.from_code(asc._asc.ascErrorNotReady, "ascErrorNotReady", "busy")
    assert type(err) is asc.Error and err.code == asc._asc.ascErrorNotReady
    err = asc._errors.from_code(asc._asc.ascErrorInvalidValue, "ascErrorInvalidValue", "no")
    assert isinstance(err, ValueError) and isinstance(err, asc.Error)


def test_cxx_code_loaded_after_asc_keeps_its_allocator():
    # libasc's jemalloc is private: C++ code loaded later (numba's LLVM)
    # keeps glibc's operator new/delete.
    pytest.importorskip("numba")
    code = ("import asc, numpy as np, numba\n"
            "@numba.njit\n"
            "def f(a):\n"
            "    return a.sum()\n"
            "print(f(np.ones(3)))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=_env(), timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "3.0"
