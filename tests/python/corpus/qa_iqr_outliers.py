# Task described at https://github.com/SanthoshNKumar/MachineLearnig_MyWork
# (a notebook: outliers by the interquartile range, 1.5 IQR past the quartiles).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""Two np.percentile calls unpacked, boolean masks combined with & and |, masked selections, .size."""
import numpy as np

import asc


@asc.kernel
def iqr_filter(data):
    q25, q75 = np.percentile(data, 25), np.percentile(data, 75)
    iqr = q75 - q25
    cut_off = iqr * 1.5
    lower, upper = q25 - cut_off, q75 + cut_off
    outliers = data[(data < lower) | (data > upper)]
    kept = data[(data >= lower) & (data <= upper)]
    return kept, outliers.size


def args():
    rng = np.random.default_rng(22)
    d = 5 * rng.standard_normal(60) + 50
    d[[3, 17, 40]] = [90.0, 5.0, 120.0]
    return (d,)


KERNEL = iqr_filter
