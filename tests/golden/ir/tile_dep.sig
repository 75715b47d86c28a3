../ir/tile.py	transpose_dep(f32[:, ::1], f32[:, ::1])
