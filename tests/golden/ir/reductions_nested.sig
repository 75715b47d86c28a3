reductions.py	zscore(f64[:, ::1])
