../ir/wavefront.py	heat3d(f64[:, :, ::1], f64[:, :, ::1], i64)
