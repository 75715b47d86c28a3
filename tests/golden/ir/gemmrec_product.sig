../ir/gemmrec.py	product(f32[:, ::1], f32[:, ::1], f32[:, ::1])
