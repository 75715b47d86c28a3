# expect: 5:10: error: duplicate argument 'x' in function definition
import asc

@asc.kernel
def k(x, x):
    pass
