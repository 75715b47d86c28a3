# expect: 4:11: error: unknown @asc.func option 'debug' (expected fastmath)
import asc

@asc.func(debug=True)
def h(x):
    return x

@asc.kernel
def k(x):
    x[0] = h(x[0])
