../ir/wavefront.py	smooth_copy(f32[:, :], f32[:, :], i64)
