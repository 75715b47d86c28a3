# expect: 10:5: error: 'other' is a kernel and cannot be called from kernel code (make it an @asc.func helper)
import asc

@asc.kernel
def other(x):
    pass

@asc.kernel
def k(x, n):
    other(x)
