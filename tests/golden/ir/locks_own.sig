../ir/locks.py	hist_own_locks(i64[1], i64[1])
