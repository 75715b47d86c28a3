# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/deep_learning/mlp/mlp_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""Three-layer perceptron with softmax (float32): @, broadcasting bias, np.max, np.sum with axis=-1 (npbench)."""
import numpy as np

import asc


@asc.func(fastmath=True)
def relu(x):
    return np.maximum(x, 0)


@asc.func(fastmath=True)
def softmax(x):
    new_shape = (x.shape[0], 1)
    # the source replaces np.max(x, axis=-1, keepdims=True) by this loop
    tmp_max = np.empty(new_shape, dtype=x.dtype)
    for i in range(x.shape[1]):
        tmp_max[:, 0] = np.max(x[:, i])
    tmp_out = np.exp(x - tmp_max)
    tmp_sum = np.reshape(np.sum(tmp_out, axis=-1), new_shape)
    return tmp_out / tmp_sum


@asc.kernel(fastmath=True)
def mlp(input, w1, b1, w2, b2, w3, b3):
    x = relu(input @ w1 + b1)
    x = relu(x @ w2 + b2)
    x = softmax(x @ w3 + b3)
    return x


def args():
    rng = np.random.default_rng(29)
    f = lambda *s: rng.random(s, dtype=np.float32) - np.float32(0.3)
    return f(4, 8), f(8, 16), f(16), f(16, 12), f(12), f(12, 5), f(5)


RTOL = 1e-3
KERNEL = mlp
