reductions.py	bsum(f64[:, ::1], f64[:, ::1])
