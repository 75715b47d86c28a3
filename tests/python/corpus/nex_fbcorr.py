# Ported from numba/numba-examples (https://github.com/numba/numba-examples),
# file legacy/fbcorr.py.
# Licence of the source: BSD-2-Clause, Copyright (c) 2017, Numba.
# Port: `@jit(nopython=True)` -> `@asc.kernel`;
# no other change to the kernel's statements (retyped, comments ours).
"""Filter-bank correlation: a 7-deep scalar loop nest accumulating into a 4-d output (numba-examples, legacy)."""
import numpy as np

import asc


@asc.kernel
def fbcorr(imgs, filters, output):
    n_imgs, n_rows, n_cols, n_channels = imgs.shape
    n_filters, height, width, n_ch2 = filters.shape

    for ii in range(n_imgs):
        for rr in range(n_rows - height + 1):
            for cc in range(n_cols - width + 1):
                for hh in range(height):
                    for ww in range(width):
                        for jj in range(n_channels):
                            for ff in range(n_filters):
                                imgval = imgs[ii, rr + hh, cc + ww, jj]
                                filterval = filters[ff, hh, ww, jj]
                                output[ii, ff, rr, cc] += imgval * filterval


def args():
    rng = np.random.default_rng(40)
    return rng.standard_normal((2, 7, 7, 3)), rng.standard_normal((4, 3, 3, 3)), np.zeros((2, 4, 5, 5))


KERNEL = fbcorr
