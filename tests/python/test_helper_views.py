"""Helpers returning a view of their argument (docs/arrays.md, "Helpers
returning a view of an argument"): numpy's `def first_row(a): return
a[0]` hands back a view of the caller's array, the inlined helper a copy.
Reading the result is the same value; a store into it, which numpy would
make through to the argument, is a compile error at the store rather than
a silently different result.  Everything else is checked against numpy."""
import numpy as np
import pytest

import asc

HEAD = ("import numpy as np\nimport asc\n"
        "@asc.func\ndef first_row(a):\n    return a[0]\n"
        "@asc.func\ndef flipped(a):\n    return a.T[1:]\n"
        "@asc.kernel\ndef k(a):\n")


def refused(body, *where):
    """The kernel HEAD + body is refused at the store, line 11 + the
    store's line in body; the message names the helper and the parameter."""
    src = HEAD + "".join("    " + ln + "\n" for ln in body)
    with pytest.raises(asc.CompileError) as e:
        asc.compile(src).k(np.zeros((3, 4)))
    msg = str(e.value)
    assert "write into the argument directly" in msg, msg
    for w in where:
        assert w in msg, msg


def test_a_store_into_a_returned_view_is_refused():
    """numpy: a[0] becomes 7.  A copy would leave a unchanged."""
    refused(["r = first_row(a)", "r[:] = 7.0"],
            "<string>:12:", "'r' holds a copy", "'a'", "'first_row'")


def test_an_augmented_store_into_a_returned_view_is_refused():
    refused(["r = first_row(a)", "x = 1.0", "r[1] += x"], "<string>:13:")
    refused(["r = first_row(a)", "r += 1.0"], "<string>:12:")


def test_a_store_into_a_transposed_view_is_refused():
    refused(["r = flipped(a)", "r[0, 0] = 1.0"], "<string>:12:",
            "'flipped'")


def test_a_store_through_another_name_is_refused():
    refused(["r = first_row(a)", "s = r", "s[2] = 1.0"], "<string>:13:",
            "'s' holds a copy")


def test_a_store_into_the_call_itself_is_refused():
    refused(["first_row(a)[1] = 5.0"], "<string>:11:",
            "'first_row' returns a copy")


# -------------------------------------------- what matches numpy as it is

@asc.func
def row(a, i):
    return a[i]


@asc.func
def cols(a):
    return a.T


@asc.func
def fresh(a):
    return a * 2.0


@asc.func
def own_view(a):
    b = a + 1.0
    return b[0]


@asc.kernel
def reads(a, out):
    total = 0.0
    for i in range(3):
        r = row(a, i)            # called in a loop, read only
        total += r.sum() * (i + 1)
    out[0] = total
    out[1] = (row(a, 2) * 2.0 + cols(a)[:, 1]).sum()  # in an expression
    f = fresh(a)
    f[0] = 100.0                 # a new array: stores stay in it
    o = own_view(a)
    o[:] = -5.0                  # a view of the helper's own array
    t = row(a * 2.0, 1)
    t[0] = 9.0                   # a view of a temporary
    out[2] = f.sum() + o.sum() + t.sum()
    a[0, 0] = 8.0                # a store into the argument itself
    out[3] = row(a, 0)[0]


def test_reading_a_returned_view_matches_numpy():
    a = np.arange(12.0).reshape(3, 4)
    a1, a2 = a.copy(), a.copy()
    o1, o2 = np.zeros(4), np.zeros(4)
    reads(a1, o1)
    reads.py_func(a2, o2)
    np.testing.assert_array_equal(o1, o2)
    np.testing.assert_array_equal(a1, a2)
