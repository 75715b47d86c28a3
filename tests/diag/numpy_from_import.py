# expect: 10:21: error: numpy's polyval ('pv', imported from numpy) is not supported in kernels yet (numpy names kernels accept:
# expect: 11:9: error: module 'numpy' cannot be used as a value
import asc
import numpy
from numpy import exp as e
from numpy import polyval as pv

@asc.kernel
def k(x):
    x[0] = e(1.0) + pv(1.0)
    y = numpy
