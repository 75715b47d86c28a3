../ir/blas_forms.py	scaled(f64, f64[:, :], f64[:])
