# expect: 4:13: error: unknown kernel option 'fast' (expected debug, boundscheck or fastmath)
import asc

@asc.kernel(fast=True)
def k(x):
    pass
