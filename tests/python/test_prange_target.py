"""The loop variable of an asc.prange read after the loop holds what
Python gives it: the range's last value when the loop ran, its earlier
value otherwise (docs/ir.md, "Parallel loops").  Before, reading it after
the loop was an internal compiler error when it had no earlier value, and
gave the earlier value when it had one."""
import numpy as np
import pytest

asc = pytest.importorskip("asc")

SRC = '''
import asc


@asc.kernel
def after(x, m, lo, hi, st):
    i = -99
    for i in asc.prange(lo, hi, st):
        x[i] = 1.0
    m[0] = i


@asc.kernel
def after_const(x, m):
    for i in asc.prange(2, x.shape[0], 3):
        x[i] = 1.0
    m[0] = i


@asc.kernel
def in_closure(x, m):
    for i in asc.prange(x.shape[0]):
        x[i] = 1.0

    def body(o):
        m[o] = i * 2.0

    asc.parallel_for(m.shape[0], body)


@asc.kernel
def bound_reduced(x, m):
    n = x.shape[0]
    for i in asc.prange(n):
        n += 1
    m[0] = i
    m[1] = n


@asc.kernel
def narrow(x, m):
    for k in asc.prange(asc.int32(x.shape[0])):
        x[k] = 2.0
    m[0] = k * 0.5
'''


@pytest.fixture(scope="module")
def mod():
    return asc.compile(SRC)


def python_last(lo, hi, st, before):
    i = before
    for i in range(lo, hi, st):
        pass
    return i


BOUNDS = [(0, 10, 1), (0, 10, 3), (3, 3, 1), (10, 0, -1), (10, 0, -3),
          (9, 0, -3), (5, 10, -1), (0, 10, 4), (-5, 5, 2), (0, 1, 7),
          (0, 20, 20), (19, -1, -19)]


@pytest.mark.parametrize("lo,hi,st", BOUNDS)
def test_variable_bounds(mod, lo, hi, st):
    x, m = np.zeros(20), np.zeros(1)
    mod.after(x, m, lo, hi, st)
    assert m[0] == python_last(lo, hi, st, -99)
    assert np.array_equal(np.nonzero(x)[0],
                          sorted({i % 20 for i in range(lo, hi, st)}))


@pytest.mark.parametrize("n", [3, 4, 5, 6, 11, 100])
def test_constant_step(mod, n):
    m = np.zeros(1)
    mod.after_const(np.zeros(n), m)
    assert m[0] == list(range(2, n, 3))[-1]


def test_read_by_a_later_parallel_body(mod):
    m = np.zeros(3)
    mod.in_closure(np.zeros(7), m)
    assert np.array_equal(m, [12.0, 12.0, 12.0])


def test_bounds_read_before_a_reduction_updates_them(mod):
    """range(n) is evaluated once: the reduction `n += 1` in the body does
    not move the last value."""
    m = np.zeros(2)
    mod.bound_reduced(np.zeros(7), m)
    assert np.array_equal(m, [6.0, 14.0])


def test_loop_variable_converted(mod):
    m = np.zeros(1)
    mod.narrow(np.zeros(9), m)
    assert m[0] == 4.0


def test_assigned_in_the_body_and_read_after_is_an_error():
    src = '''
import asc


@asc.kernel
def k(x, m):
    for i in asc.prange(x.shape[0]):
        i = i * 2
        x[0] = 1.0
    m[0] = i
'''
    mod = asc.compile(src)
    with pytest.raises(asc.CompileError, match="assigned in a parallel loop"):
        mod.k(np.zeros(3), np.zeros(1))
