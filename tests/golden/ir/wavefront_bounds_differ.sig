../ir/wavefront.py	bounds_differ(f64[:, ::1], f64[:, ::1], i64)
