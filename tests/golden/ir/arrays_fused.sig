arrays.py	fused(f32[:], f32[:], f32[:], f32[:])
