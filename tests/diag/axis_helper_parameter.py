# expect: 8:27: error: axis must be an integer constant (or None) written in the call; 'ax' is a variable (a helper's parameter is one too, whatever its default or argument)
# mode: types
# signature: k(f64[2], f64[1])
import asc, numpy as np

@asc.func
def m(X, ax=1):
    return np.sum(X, axis=ax)

@asc.kernel
def k(X, out):
    out[:] = m(X)
