../ir/tile.py	transpose_p(f32[:, ::1], f32[:, ::1])
