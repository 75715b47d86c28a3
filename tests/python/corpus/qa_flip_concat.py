# Task described at http://zijiebao.com/jishu/560908.html
# (a blog post: flip, flipud, fliplr and a[::-1, :] compared side by side).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.flip(img, 0), np.flipud, np.fliplr, img[:, ::-1] and np.concatenate of a list of them, axis=1."""
import numpy as np

import asc


@asc.kernel
def flips(img):
    img1 = np.flip(img, 0)
    img2 = np.flipud(img)
    img3 = img[:, ::-1]
    img4 = np.fliplr(img)
    return np.concatenate([img, img1, img2, img3, img4], axis=1)


def args():
    return (np.arange(12).reshape(3, 4),)


KERNEL = flips
