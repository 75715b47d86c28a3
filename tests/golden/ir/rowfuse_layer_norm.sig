../ir/rowfuse.py	layer_norm(f64[:, :], f64[:], f64[:])
