../ir/hoist.py	rows(f64[:, :], f64[:], i64)
