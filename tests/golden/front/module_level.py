"""Module docstring."""
import asc
import math as m
import numpy as np
from asc import prange, float32 as f32
from asc import kernel, func as helper_deco

TILE = 64
HALF = TILE // 2
SCALE: float = 1.5 * TILE
NEG = -TILE
FLAG = not False
BIG = 2 ** 70
NAMES = ["a", "b"]

class Point:
    """A struct of scalars."""
    x: asc.float32
    y: asc.float32 = 0.0

class Host(object):
    def method(self):
        return [i for i in range(3)]

@helper_deco
def norm(p, scale=1.0):
    return m.sqrt(p.x * p.x + p.y * p.y) * scale

@asc.func
def twice(v):
    return 2 * norm(Point(v, y=v))

@kernel(debug=True, boundscheck=False)
def k1(out: asc.Tensor[asc.float32, 1], n: asc.ConstExpr[int]) -> None:
    """Kernel docstring."""
    for i in prange(n):
        out[i] = f32(twice(TILE) + HALF + SCALE + NEG + FLAG)

@asc.jit
def k2(out):
    out[0] = norm(Point(x=1.0), scale=2.0)

def host_main():
    a = np.zeros(3)
    k1(a, 3)
    print(f"{a}")

if __name__ == "__main__":
    host_main()
