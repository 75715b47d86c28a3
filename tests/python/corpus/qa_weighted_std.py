# Task described at https://stackoverflow.com/questions/2413522/weighted-standard-deviation-in-numpy
# (a Q&A thread: a weighted standard deviation from np.average with weights).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""A helper returning a tuple: np.average(weights=) twice and math.sqrt; np.average along an axis too."""
import math

import numpy as np

import asc


@asc.func
def weighted_avg_and_std(values, weights):
    average = np.average(values, weights=weights)
    variance = np.average((values - average)**2, weights=weights)
    return average, math.sqrt(variance)


@asc.kernel
def weighted(values, weights, table):
    avg, std = weighted_avg_and_std(values, weights)
    return avg, std, np.average(table, axis=1, weights=weights[:table.shape[1]])


def args():
    return (np.array([1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 3.0]),
            np.array([1.0, 1.0, 1.0, 100.0, 1.0, 1.0, 1.0, 1.0]),
            np.arange(12.0).reshape(3, 4))


KERNEL = weighted
