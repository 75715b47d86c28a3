../ir/wavefront.py	gathered_row(f64[:, ::1], f64[:, ::1], i64[::1], i64)
