# expect: 9:12: error: numpy is not supported in kernels yet: use asc.exp instead of e
# expect: 10:9: error: numpy ('numpy') is not supported in kernels yet
import asc
import numpy
from numpy import exp as e

@asc.kernel
def k(x):
    x[0] = e(1.0)
    y = numpy
