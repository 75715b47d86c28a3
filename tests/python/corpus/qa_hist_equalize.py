# Task described at https://github.com/mmalek06/numpy-torch-curriculum
# (a tutorial notebook: histogram equalization of a grey image with bincount and cumsum).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.bincount(img.ravel(), minlength=256), np.cumsum, a masked min, a lookup table gathered by the image."""
import numpy as np

import asc


@asc.kernel
def equalize(img):
    hist = np.bincount(img.ravel(), minlength=256)
    cdf = np.cumsum(hist)
    cdf_min = cdf[cdf > 0].min()
    lut = np.round((cdf - cdf_min) / (img.size - cdf_min) * 255)
    lut = np.clip(lut, 0, 255).astype(np.uint8)
    return lut[img]


def args():
    rng = np.random.default_rng(14)
    return (rng.integers(50, 60, size=(8, 8)).astype(np.uint8),)


KERNEL = equalize
