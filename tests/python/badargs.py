"""The table tests of bad arguments to numpy functions in kernels
(test_numpy_more, test_numpy_more2, test_numpy_grids, test_numpy_stats): a kernel whose
line 6 is `y = BODY` must fail to compile with MESSAGE at that line."""
import pytest

import asc


def assert_compile_error_at_line_6(sig, body, message):
    text = ("import numpy as np\nimport asc\n\n@asc.kernel\n"
            f"def k({sig}):\n"
            f"    y = {body}\n")
    with pytest.raises(asc.CompileError) as ei:
        asc.compile(text)
    assert message in str(ei.value)
    assert ":6:" in str(ei.value)
