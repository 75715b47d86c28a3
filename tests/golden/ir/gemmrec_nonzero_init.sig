../ir/gemmrec.py	nonzero_init(f32[:, ::1], f32[:, ::1], f32[:, ::1])
