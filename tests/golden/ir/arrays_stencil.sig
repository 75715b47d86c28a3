arrays.py	stencil(f64[:,:], f64[:,:])
