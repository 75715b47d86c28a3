reductions.py	dot(f64[::1], f64[::1])
