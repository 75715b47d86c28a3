../ir/gemmrec.py	accumulate(f64[:, :], f64[:, :], f64[:, :])
