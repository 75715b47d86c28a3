seed_conv2d.py	conv2d(f32[4], f32[4], f32[4])
