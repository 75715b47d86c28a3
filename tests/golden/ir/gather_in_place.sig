masks.py	gather_dot(f64[:], i64[:], f64[:])
