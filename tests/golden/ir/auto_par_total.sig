../ir/auto_par.py	total(f32[1], f32[1])
