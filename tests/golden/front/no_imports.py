@asc.kernel(boundscheck=True)
def scale(x, y, a):
    for i in asc.prange(x.shape[0]):
        y[i] = a * math.exp(x[i])
