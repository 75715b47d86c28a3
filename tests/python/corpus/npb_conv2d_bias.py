# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/deep_learning/conv2d_bias/conv2d_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""2-d convolution plus bias (NHWC, float32): window copies, reshape, np.sum with axis=, returns an array (npbench)."""
import numpy as np

import asc


@asc.func(fastmath=True)
def conv2d(input, weights):
    K = weights.shape[0]  # square kernels only
    N = input.shape[0]
    H_out = input.shape[1] - K + 1
    W_out = input.shape[2] - K + 1
    C_in = input.shape[3]
    C_out = weights.shape[3]
    output = np.empty((N, H_out, W_out, C_out), dtype=np.float32)

    # loop structure after SkalskiP/ILearnDeepLearning.py (cited by the source)
    for i in range(H_out):
        for j in range(W_out):
            # the source copies the window: numba reshapes contiguous arrays only
            inp = input[:, i:i + K, j:j + K, :].copy()
            # and sums one axis at a time: numba takes no tuple for axis=
            output[:, i, j, :] = np.sum(np.sum(np.sum(
                np.reshape(inp, (N, K, K, C_in, 1)) *
                np.reshape(weights, (1, K, K, C_in, C_out)),
                axis=1), axis=1), axis=1)

    return output


@asc.kernel(fastmath=True)
def conv2d_bias(input, weights, bias):
    return conv2d(input, weights) + bias


def args():
    rng = np.random.default_rng(27)
    f = lambda *s: rng.random(s, dtype=np.float32)
    return f(2, 6, 6, 3), f(3, 3, 3, 4), f(4)


KERNEL = conv2d_bias
