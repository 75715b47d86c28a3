../ir/tile.py	transpose(f32[:, ::1], f32[:, ::1])
