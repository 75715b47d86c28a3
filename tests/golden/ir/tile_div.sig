../ir/tile.py	transpose_div(i32[:, ::1], i32[:, ::1], i32)
