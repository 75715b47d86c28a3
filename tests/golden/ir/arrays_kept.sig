arrays.py	kept_array(f64[:], f64[:])
