# signature: weak(f32[1], i32[1], f32[1])
# signature: weak(f16[1], i8[1], f16[1])
import asc

TILE = 64
SCALE = 0.25


@asc.kernel
def weak(x, k, out):
    # an int literal first, then a float32 sum: the sum is float32
    s = 0
    for i in range(x.shape[0]):
        s += x[i]
    # a float literal summing int32 values stays a weak float: float64
    t = 0.0
    for i in range(k.shape[0]):
        t += k[i]
    # a weak int that meets int64
    n = 0
    n = x.shape[0]
    # module constants are weak
    m = x[0] * TILE + SCALE
    count = TILE * 2
    out[0] = s * SCALE
