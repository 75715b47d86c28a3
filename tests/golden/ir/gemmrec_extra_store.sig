../ir/gemmrec.py	extra_store(f32[:, ::1], f32[:, ::1], f32[:, ::1], f32[:, ::1])
