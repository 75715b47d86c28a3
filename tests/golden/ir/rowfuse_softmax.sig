../ir/rowfuse.py	softmax(f64[:, :])
