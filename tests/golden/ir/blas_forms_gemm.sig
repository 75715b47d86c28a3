../ir/blas_forms.py	gemm(f64, f64, f64[:, :], f64[:, :], f64[:, :])
