# expect: 5:10: error: string annotations are not supported in kernels
import asc

@asc.kernel
def k(x: 'Tensor'):
    pass
