# expect: 7:24: error: math.sin() takes 1 argument (2 given)
import asc
import math

@asc.kernel
def k(x, n):
    x[0] = math.sin(n, n)
