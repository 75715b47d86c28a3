# mode: types
# signature: k(f32[1], int, f32)
# expect: 9:10: error: parameter 'alpha' is annotated float but the signature gives int
# expect: 9:24: error: parameter 'n' is annotated int but the signature gives float32
import asc


@asc.kernel
def k(a, alpha: float, n: int):
    a[0] = alpha * n
