# expect: 7:12: error: 'np' names a Python module or object that kernels cannot use
import asc
import numpy as np

@asc.kernel
def k(x):
    x[0] = np.sqrt(2.0)
