../ir/neg_index.py	wrap(f64[:], f64[:], i64)
