../ir/hoist.py	self_first(f64[:], i64)
