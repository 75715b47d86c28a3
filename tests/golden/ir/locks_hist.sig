../ir/locks.py	hist(i64[1], i64[1], i32[1])
