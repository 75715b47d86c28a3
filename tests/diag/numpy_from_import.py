# expect: 9:12: error: names imported from numpy are not supported in kernels (e): `import numpy as np` and write np.exp
# expect: 10:9: error: module 'numpy' cannot be used as a value
import asc
import numpy
from numpy import exp as e

@asc.kernel
def k(x):
    x[0] = e(1.0)
    y = numpy
