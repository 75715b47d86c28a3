# Ported from numba/numba-examples (https://github.com/numba/numba-examples),
# file examples/density_estimation/kernel/impl.py.
# Licence of the source: BSD-2-Clause, Copyright (c) 2017, Numba.
# Port: `@numba.jit(nopython=True, parallel=True)` -> `@asc.kernel`, helper `@numba.jit(nopython=True)` -> `@asc.func`, `numba.prange` -> `asc.prange`;
# no other change to the kernel's statements (retyped, comments ours).
"""Gaussian kernel density estimate, the multithreaded block: prange over evaluation points (numba-examples)."""
import numpy as np

import asc


@asc.func
def gaussian(x):
    return np.exp(-0.5 * x**2) / np.sqrt(2 * np.pi)


@asc.kernel
def numba_kde_multithread(eval_points, samples, bandwidths):
    result = np.zeros_like(eval_points)

    # one evaluation point per iteration, in parallel
    for i in asc.prange(len(eval_points)):
        eval_x = eval_points[i]
        for sample, bandwidth in zip(samples, bandwidths):
            result[i] += gaussian((eval_x - sample) / bandwidth) / bandwidth
        result[i] /= len(samples)

    return result


def args():
    rng = np.random.default_rng(37)
    samples = rng.normal(0.0, 5.0, 50)
    bandwidths = np.full_like(samples, 1.06 * 50**0.2 * 5.0)
    return rng.normal(0.0, 5.0, 20), samples, bandwidths


KERNEL = numba_kde_multithread
