# expect: 7:5: error: 'tuple' is an illegal expression for augmented assignment
import asc

@asc.kernel
def k(x, n):
    a, b = 1, 2
    a, b += 1
