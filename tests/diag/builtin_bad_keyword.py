# expect: 6:31: error: asc.local_array() got an unexpected keyword argument 'dtyp'
import asc

@asc.kernel
def k(x, n):
    t = asc.local_array((4,), dtyp=asc.float32)
