seed_parallel_add.py	parallel_add(f32[1], f32[1], f32[1])
