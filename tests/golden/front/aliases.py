import pyasc
import asc as A
from pyasc import kernel as K, jit
import math as M
from math import sqrt as root, pi

@pyasc.kernel
def k1(x):
    x[0] = pyasc.sin(1.0) + A.cos(2.0) + root(M.e) + pi

@A.jit
def k2(x):
    x[0] = 1

@K(debug=False)
def k3(x):
    sum = 0
    input = 1
    range = 3
    x[0] = sum + input + range

@jit
def k4(p):
    p.x = 1.0
    p.y += 2.0
