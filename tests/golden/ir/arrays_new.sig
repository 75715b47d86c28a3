arrays.py	new_array(f64[:], f64[:], f64[:])
