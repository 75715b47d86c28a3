../ir/gemmrec.py	product_fast(f32[:, ::1], f32[:, ::1], f32[:, ::1])
