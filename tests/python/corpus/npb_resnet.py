# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/deep_learning/resnet/resnet_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""ResNet basic block: padding by slice assignment, convolutions, batch norm with np.sum(axis=0), ReLU (npbench)."""
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
def batchnorm2d(x, eps=1e-5):
    mean = np.empty(x.shape, dtype=x.dtype)
    mean[:] = np.sum(x, axis=0) / x.shape[0]
    std = np.empty(x.shape, dtype=x.dtype)
    std[:] = np.sqrt(np.sum((x - mean)**2, axis=0) / x.shape[0])
    return (x - mean) / np.sqrt(std + eps)


@asc.kernel(fastmath=True)
def resnet_basicblock(input, conv1, conv2, conv3):
    # pad the 1x1 convolution's output by one pixel on each side
    padded = np.zeros((input.shape[0], input.shape[1] + 2, input.shape[2] + 2,
                       conv1.shape[3]))
    padded[:, 1:-1, 1:-1, :] = conv2d(input, conv1)
    x = batchnorm2d(padded)
    x = relu(x)
    x = conv2d(x, conv2)
    x = batchnorm2d(x)
    x = relu(x)
    x = conv2d(x, conv3)
    x = batchnorm2d(x)
    return relu(x + input)


def args():
    rng = np.random.default_rng(30)
    f = lambda *s: rng.random(s, dtype=np.float32)
    return f(3, 5, 5, 4), f(1, 1, 4, 3), f(3, 3, 3, 3), f(1, 1, 3, 4)


RTOL = 1e-3
ATOL = 1e-3
KERNEL = resnet_basicblock
