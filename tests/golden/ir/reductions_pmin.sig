reductions.py	vmin(f64[::1])
