# expect: 8:12: error: numpy is not supported in kernels yet: use asc.sqrt instead of np.sqrt
# expect: 9:12: error: numpy is not supported in kernels yet, and asc has no 'polyval' (np.polyval)
import asc
import numpy as np

@asc.kernel
def k(x):
    x[0] = np.sqrt(2.0)
    x[1] = np.polyval(x, 2.0)
