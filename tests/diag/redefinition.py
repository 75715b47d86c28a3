# expect: 9:1: error: redefinition of 'k'
import asc

@asc.kernel
def k(x):
    pass

@asc.kernel
def k(x):
    pass
