../ir/hoist.py	next_row(f64[:, :])
