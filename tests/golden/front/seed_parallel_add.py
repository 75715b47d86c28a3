import pyasc as asc

@asc.kernel
def parallel_add(a, b, c):
    size = a.shape[0]
    asc.parallel_for(size, lambda i: c[i] = a[i] + b[i])
