# Task described at https://click4ai.perfionixai.com/problems/data-augmentation
# (a practice problem: rotate an image by multiples of 90 degrees for augmentation).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.rot90(image, k=3), np.rot90(.., -1), and np.stack of a list comprehension of the four rotations."""
import numpy as np

import asc


@asc.kernel
def augment(image):
    clockwise = np.rot90(image, k=3)
    also_clockwise = np.rot90(image, -1)
    all_four = np.stack([np.rot90(image, k) for k in range(4)])
    return clockwise, also_clockwise, all_four


def args():
    return (np.arange(1, 10).reshape(3, 3),)


KERNEL = augment
