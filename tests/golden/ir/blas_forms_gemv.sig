../ir/blas_forms.py	gemv_acc(f32[:], f32[:, :], f32[:])
