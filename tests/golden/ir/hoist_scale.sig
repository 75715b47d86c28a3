../ir/hoist.py	scale(f32[:, ::1], f32[:, ::1], f32[:])
