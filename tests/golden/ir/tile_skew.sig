../ir/tile.py	skew(f32[:, ::1])
