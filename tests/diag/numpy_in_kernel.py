# expect: 10:15: error: np.polyval is not supported in kernels yet (numpy names kernels accept: sin, cos, tan, arcsin
# expect: 11:15: error: np.unwrap is not supported in kernels yet (numpy names kernels accept:
# expect: 12:22: error: np.linalg.pinv is not supported in kernels (numpy names kernels accept: sin
import asc
import numpy as np

@asc.kernel
def k(x):
    x[0] = np.sqrt(2.0)
    x[1] = np.polyval(x, 2.0)
    x[2] = np.unwrap(x)[0]
    x[3] = np.linalg.pinv(x)[0]
