# expect: 6:5: error: 'match' statements are not supported in kernels
import asc

@asc.kernel
def k(x, n):
    match n:
        case 1:
            pass
