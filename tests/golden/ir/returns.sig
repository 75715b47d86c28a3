returns.py	scale_and_sum(f64[::1], float)
