"""numpy code's constructs around the numpy functions, each against numpy:
comprehensions with conditions (docs/arrays.md, "Constructs of numpy
code").  Few kernels, many cases in each: every kernel is a compile."""
import numpy as np
import pytest

import asc

SRC = """
import numpy as np
import asc

N = 6

@asc.kernel
def comp_if(a):
    odd = np.array([x for x in range(8) if x % 2])
    pairs = np.array([i * 10 + j for i in range(4) for j in range(i) if j != 1])
    rows = sum(a[i] for i in range(N) if i < 2 or i >= N - 1)
    both = np.array([a[i] for i in (0, 1, 2, 3) if i > 0 if not i == 2])
    nest = np.array([x for x in range(10) if x % 3 == 0 and (x > 2 or x == 0)])
    none = tuple(x for x in range(3) if x > 5)
    return odd, pairs, rows, both, nest, len(none)
"""

M = asc.compile(SRC)


def test_comprehension_conditions():
    a = np.arange(30.0).reshape(6, 5)
    odd, pairs, rows, both, nest, none = M.comp_if(a)
    np.testing.assert_array_equal(odd, np.array([x for x in range(8) if x % 2]))
    assert odd.dtype == np.int64
    np.testing.assert_array_equal(
        pairs, np.array([i * 10 + j for i in range(4) for j in range(i) if j != 1]))
    np.testing.assert_array_equal(rows, a[0] + a[1] + a[5])
    np.testing.assert_array_equal(both, a[[1, 3]])
    np.testing.assert_array_equal(nest, [0, 3, 6, 9])
    assert none == 0


def test_comprehension_condition_on_a_run_time_value():
    src = """
import numpy as np
import asc

@asc.kernel
def k(a, n):
    return np.array([a[i] for i in range(4) if i < n])
"""
    with pytest.raises(asc.CompileError, match=r"(?s):7:.*its condition \('if'\) must be "
                       r"known at compile time.*depends on run-time values"):
        asc.compile(src).k(np.arange(4.0), 2)
