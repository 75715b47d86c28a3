# mode: types
# signature: k(f32[1])
# expect: 9:5: error: a parallel_for body takes one parameter (the index), not 2
import asc


@asc.kernel
def k(a):
    def body(i, j):
        a[i] = 0.0

    asc.parallel_for(a.shape[0], body)
