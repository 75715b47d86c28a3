# expect: 6:15: error: bytes literals are not supported in kernels
import asc

@asc.kernel
def k(x, n):
    assert n, b"raw"
