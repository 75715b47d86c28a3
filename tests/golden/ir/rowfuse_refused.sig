../ir/rowfuse.py	centered_total(f64[:, :])
