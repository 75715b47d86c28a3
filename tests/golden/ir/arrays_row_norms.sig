arrays.py	row_norms(f64[:,::1], f64[::1])
