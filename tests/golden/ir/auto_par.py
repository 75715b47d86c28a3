import asc


# a float sum in a plain range loop: stays serial, in Python's order
# (docs/parallelize.md, "Reductions and their order")
@asc.kernel
def total(x, out):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    out[0] = s


# a running sum stored at every step is loop-carried: stays serial
@asc.kernel
def prefix(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
        y[i] = s
