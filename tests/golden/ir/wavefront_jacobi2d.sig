../ir/wavefront.py	jacobi2d(f64[:, ::1], f64[:, ::1], i64)
