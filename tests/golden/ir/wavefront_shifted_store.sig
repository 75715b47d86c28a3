../ir/wavefront.py	shifted_store(f64[:, ::1], f64[:, ::1], i64)
