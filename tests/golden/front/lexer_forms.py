"""Lexical forms: numbers, strings, line joining, comments, tabs."""
import asc

# integer forms
A = 0
B = 1_000_000
C = 0x_FF + 0XfF
D = 0o17 + 0O7
E = 0b1010 + 0B1
F = 00
# float forms
G = 1.
H = .5
I = 1e-3
J = 1_0.2_5E+1_0
K = 3.14e0

@asc.kernel
def strings(x):
    assert x.ndim == 1, 'single quoted'
    assert x.ndim == 1, "double \"quoted\" \t\x41\u00e9\101\n"
    assert x.ndim == 1, r'raw \n stays' u"unicode prefix"
    assert x.ndim == 1, """triple
quoted"""
    assert x.ndim == 1, '''other triple'''  # trailing comment
    y = (1 +
         2)   # implicit joining inside brackets
    z = 1 + \
        2
    w = x[0] if False else x[
        0]
    if y:
        pass

@asc.kernel
def tabs(x):
	if x.ndim:
		x[0] = 1
	else:
	        x[0] = 2
