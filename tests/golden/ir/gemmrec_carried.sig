../ir/gemmrec.py	carried(f32[:, ::1], f32[:, ::1], f32[:, ::1])
