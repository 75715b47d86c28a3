seed_conv2d.py	conv2d(f32[4:s], f32[4:s], f32[4:s])
