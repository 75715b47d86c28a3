# signature: annotated(f32[2], f64[1], i64=16, float, i32)
# signature: annotated(f32[2:s], f64[1], i64=3, float, i32)
import asc


@asc.kernel
def annotated(a: asc.Tensor[asc.float32, 2], b, n: asc.ConstExpr[int],
              alpha: float, k: asc.int32):
    acc: asc.float64 = 0
    acc = a[0, 0]
    scaled: asc.float32 = a[0, 1] * alpha
    idx: asc.int64 = k
    half = alpha * a[1, 1]
    tile = asc.local_array(n, asc.float32)
    tile[0] = scaled
    b[0] = acc + half + idx + n
