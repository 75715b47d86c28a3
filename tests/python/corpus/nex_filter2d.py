# Ported from numba/numba-examples (https://github.com/numba/numba-examples),
# file legacy/blur_image.py.
# Licence of the source: BSD-2-Clause, Copyright (c) 2017, Numba.
# Port: `@jit(nopython=True)` -> `@asc.kernel` on filter2d, `@asc.func` on filter2d_core which it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""2-d filter (image blur), the driver: numpy.zeros_like under the name `numpy`, calls the core, returns the result (numba-examples, legacy)."""
import numpy
import numpy as np  # the runner's inputs

import asc


@asc.func
def filter2d_core(image, filt, result):
    M, N = image.shape
    Mf, Nf = filt.shape
    Mf2 = Mf // 2
    Nf2 = Nf // 2
    for i in range(Mf2, M - Mf2):
        for j in range(Nf2, N - Nf2):
            num = 0
            for ii in range(Mf):
                for jj in range(Nf):
                    num += (filt[Mf - 1 - ii, Nf - 1 - jj] * image[i - Mf2 + ii, j - Nf2 + jj])
            result[i, j] = num


@asc.kernel
def filter2d(image, filt):
    result = numpy.zeros_like(image)
    filter2d_core(image, filt, result)
    return result


def args():
    img = np.fromfunction(lambda i, j: (7 * i + 3 * j) % 11, (10, 12))
    return img, np.ones((3, 3))


KERNEL = filter2d
