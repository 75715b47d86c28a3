../ir/neg_index.py	nowrap(f64[:], f64[:])
