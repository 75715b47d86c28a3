# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/deep_learning/softmax/softmax_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""Softmax over the last axis of a 4-d float32 array: np.max of slices, np.exp of arrays, np.sum with axis=-1 (npbench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def softmax(x):
    new_shape = (x.shape[0], x.shape[1], x.shape[2], 1)
    # the source's stand-in for np.max(x, axis=-1, keepdims=True)
    tmp_max = np.empty(new_shape, dtype=x.dtype)
    for i in range(x.shape[3]):
        tmp_max[:, :, :, 0] = np.max(x[:, :, :, i])
    tmp_out = np.exp(x - tmp_max)
    tmp_sum = np.reshape(np.sum(tmp_out, axis=-1), new_shape)
    return tmp_out / tmp_sum


def args():
    rng = np.random.default_rng(31)
    return (rng.random((2, 3, 4, 5), dtype=np.float32),)


KERNEL = softmax
