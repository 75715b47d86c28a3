# mode: types
# signature: k(f32[1])
# expect: 9:9: error: unsupported operand types for <<: float32 and a Python int literal
import asc


@asc.kernel
def k(a):
    x = a[0] << 2
