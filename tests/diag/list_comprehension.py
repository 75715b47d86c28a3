# expect: 6:30: error: a condition ('if') in a comprehension is not supported in kernels: the comprehension is unrolled at compile time and its length must not depend on values (use a conditional expression, `x if c else y`, as the element)
import asc

@asc.kernel
def k(x, n):
    y = [i for i in range(4) if i > 1]
