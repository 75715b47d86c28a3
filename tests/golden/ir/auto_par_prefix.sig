../ir/auto_par.py	prefix(f32[1], f32[1])
