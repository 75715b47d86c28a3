# mode: types
# signature: k(u64[1], i64[1], u64[1])
# expect: 11:14: error: unsupported operand types for &: uint64 and int64 (no integer type holds both
# expect: 12:14: error: unsupported operand types for <<: uint64 and int64 (no integer type holds both
import asc


# no integer type holds uint64 and int64: numpy raises TypeError
@asc.kernel
def k(w, q, out):
    out[:] = w & q
    out[0] = w[0] << q[0]
