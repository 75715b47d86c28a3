arrays.py	row_sums(f32[:,::1], f64[::1])
