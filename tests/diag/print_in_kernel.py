# expect: 6:5: error: printing is not supported in kernels (write the values to a tensor, or raise an exception with a message)
import asc

@asc.kernel
def k(x):
    print(x[0])
