"""Kernels used by the tests: importing this file compiles nothing; each
kernel compiles on first use."""
import asc
from asc import kernel as _kernel_alias

SCALE = 3
OFFSET = 0.5
ENABLED = True
NAME = "not a constant"


@asc.func
def scaled(x):
    return x * SCALE


@asc.kernel
def scale_add(a, out):
    for i in asc.prange(a.shape[0]):
        out[i] = scaled(a[i]) + OFFSET


@asc.jit(debug=True,
         boundscheck=True)
def checked(a):
    a[0] = 1


@_kernel_alias
def aliased(a):
    a[0] = SCALE


class Holder:
    @staticmethod
    @asc.kernel
    def method_kernel(a):
        a[0] = 2


@asc.kernel
def uses_later_helper(a):
    a[0] = later(1)


@asc.func
def later(x):
    return x + 1
