../ir/hoist.py	checked(f64[::1], f64[::1], i64)
