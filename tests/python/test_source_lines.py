"""Compile errors and kernel exceptions name the line the user wrote, for
every way a short script lays out its kernel: the decorator right under
the imports (where the compiler's own `import math` found no free line
and pushed every line down by one), or on the first line (a notebook
cell), after a blank line, with comments, a decorator over several
lines, a kernel defined inside a function, a decorator alias, and kernel
text given to asc.compile."""
import importlib.util
import itertools
import textwrap

import numpy as np
import pytest

import asc

_count = itertools.count()


def _load(tmp_path, text):
    """The module of a file holding text (dedented), imported fresh."""
    name = f"layout_{next(_count)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    mod.asc = asc        # as a notebook cell sees an earlier cell's import
    spec.loader.exec_module(mod)
    return mod, path


def _line(path, marker):
    """1-based line of the file's first line holding marker."""
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if marker in line:
            return n
    raise AssertionError(f"{marker!r} not in {path}")


LAYOUTS = {
    "right_under_imports": """
        import asc
        import numpy as np
        @asc.kernel
        def k(a):
            a[0] = BODY
        """,
    "numpy_first_then_asc": """
        import numpy as np
        import asc
        @asc.kernel
        def k(a):
            a[0] = BODY
        """,
    "one_import_line": """
        import asc, numpy as np
        @asc.kernel
        def k(a):
            a[0] = BODY
        """,
    "semicolons": """
        import asc; import numpy as np
        @asc.kernel
        def k(a):
            a[0] = BODY
        """,
    "starts_with_the_decorator": """
        @asc.kernel
        def k(a):
            a[0] = BODY
        """,
    "after_a_blank_line": """
        import asc
        import numpy as np

        @asc.kernel
        def k(a):
            a[0] = BODY
        """,
    "with_comments": """
        # a short script
        import asc
        import numpy as np
        # the kernel:
        @asc.kernel
        # its body follows
        def k(a):
            # one store
            a[0] = BODY
        """,
    "multi_line_decorator": """
        import asc
        import numpy as np
        @asc.kernel(
            boundscheck=True,
        )
        def k(a):
            a[0] = BODY
        """,
    "decorator_alias": """
        from asc import kernel
        import numpy as np
        @kernel
        def k(a):
            a[0] = BODY
        """,
    "called_not_decorating": """
        import asc
        import numpy as np
        def plain(a):
            a[0] = BODY
        k = asc.kernel(plain)
        """,
    "nested_in_a_function": """
        import asc
        import numpy as np
        def make():
            @asc.kernel
            def inner(a):
                a[0] = BODY
            return inner
        k = make()
        """,
    "with_a_helper": """
        import asc
        import numpy as np
        @asc.func
        def helper(x):
            return x + 1
        @asc.kernel
        def k(a):
            a[0] = helper(BODY)
        """,
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_compile_error_line(tmp_path, layout):
    mod, path = _load(tmp_path, LAYOUTS[layout].replace("BODY", "undefined_name + 1"))
    with pytest.raises(asc.CompileError) as info:
        mod.k(np.zeros(2))
    err = info.value
    want = _line(path, "undefined_name")
    assert (err.filename, err.lineno) == (str(path), want), str(err)
    # the traceback's source line is the one with the typo
    assert "undefined_name" in err.text
    assert f":{want}:" in str(err)


RAISING = ["right_under_imports", "one_import_line", "multi_line_decorator",
           "nested_in_a_function", "decorator_alias", "starts_with_the_decorator"]


@pytest.mark.parametrize("layout", RAISING)
def test_kernel_exception_line(tmp_path, layout):
    text = LAYOUTS[layout].replace(
        "a[0] = BODY", "if a[0] == 0:\n                raise ValueError('boom')")
    if layout == "nested_in_a_function":
        text = text.replace("\n                raise", "\n                    raise")
    text = textwrap.dedent(text)
    mod, path = _load(tmp_path, text)
    with pytest.raises(ValueError) as info:
        mod.k(np.zeros(2))
    err = info.value
    assert err.lineno == _line(path, "raise ValueError"), str(err)
    assert f"{path}:{err.lineno}: kernel" in str(err)


@pytest.mark.parametrize("text, marker", [
    ("import asc\n@asc.kernel\ndef k(a):\n    a[0] = oops\n", "oops"),
    ("import asc\nimport numpy as np\n@asc.kernel\ndef k(a):\n    a[0] = oops\n", "oops"),
    ("# header\nimport asc\n\n\n@asc.kernel\ndef k(a):\n    a[0] = oops\n", "oops"),
    ("import asc; import math\n@asc.kernel\ndef k(a):\n    a[0] = oops\n", "oops"),
])
def test_compile_text_error_line(text, marker):
    with pytest.raises(asc.CompileError) as info:
        asc.compile(text, filename="text.py").k(np.zeros(2))
    want = 1 + text.splitlines().index(next(l for l in text.splitlines() if marker in l))
    assert info.value.lineno == want, str(info.value)


def test_compile_text_raise_line():
    text = ("import asc\nimport numpy as np\n@asc.kernel\ndef k(a):\n"
            "    if a[0] == 0:\n        raise ValueError('boom')\n")
    m = asc.compile(text, filename="raising.py")
    with pytest.raises(ValueError) as info:
        m.k(np.zeros(2))
    assert info.value.lineno == 6 and "raising.py:6:" in str(info.value)
