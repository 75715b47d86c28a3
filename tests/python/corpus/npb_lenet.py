# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/deep_learning/lenet/lenet_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""LeNet-5 inference (float32): convolutions, max pooling with np.max of windows, fully connected layers with @ (npbench)."""
import numpy as np

import asc


@asc.func(fastmath=True)
def relu(x):
    return np.maximum(x, 0)


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


@asc.func(fastmath=True)
def maxpool2d(x):
    output = np.empty((x.shape[0], x.shape[1] // 2, x.shape[2] // 2, x.shape[3]),
                      dtype=x.dtype)
    for i in range(x.shape[1] // 2):
        for j in range(x.shape[2] // 2):
            for k in range(x.shape[0]):
                for l in range(x.shape[3]):
                    output[k, i, j, l] = np.max(x[k, 2 * i:2 * i + 2, 2 * j:2 * j + 2, l])
    return output


@asc.kernel(fastmath=True)
def lenet5(input, conv1, conv1bias, conv2, conv2bias, fc1w, fc1b, fc2w, fc2b,
           fc3w, fc3b, N, C_before_fc1):
    x = relu(conv2d(input, conv1) + conv1bias)
    x = maxpool2d(x)
    x = relu(conv2d(x, conv2) + conv2bias)
    x = maxpool2d(x)
    x = np.reshape(x, (N, C_before_fc1))
    x = relu(x @ fc1w + fc1b)
    x = relu(x @ fc2w + fc2b)
    return x @ fc3w + fc3b


def args():
    rng = np.random.default_rng(28)
    f = lambda *s: rng.random(s, dtype=np.float32) - np.float32(0.3)
    N, H = 2, 28
    C = 16 * 4 * 4          # after two 5x5 convolutions and two poolings of 28x28
    return (f(N, H, H, 1), f(5, 5, 1, 6), f(6), f(5, 5, 6, 16), f(16), f(C, 120), f(120),
            f(120, 84), f(84), f(84, 10), f(10), N, C)


RTOL = 1e-3
ATOL = 1e-3
KERNEL = lenet5
