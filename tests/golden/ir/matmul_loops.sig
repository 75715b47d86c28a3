matmul.py	matmul_i64(i64[:, :], i64[:, :], i64[:, :])
