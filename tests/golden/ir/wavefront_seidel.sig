../ir/wavefront.py	seidel(f64[:, ::1], i64)
