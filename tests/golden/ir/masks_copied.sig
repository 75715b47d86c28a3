masks.py	masked_other_view(f64[:], bool[:])
