../ir/gemmrec.py	aliased(f32[:, ::1], f32[:, ::1])
