matmul.py	matmul_f32(f32[:, :], f32[:, :], f32[:, :])
