arrays.py	scale_rows(f32[:,:], f32, i64)
