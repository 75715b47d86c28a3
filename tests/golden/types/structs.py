# signature: structs(f32[1])
import asc


class Point:
    x: asc.float32
    y: asc.float32
    tag: asc.int32 = 0


@asc.kernel
def structs(a):
    p = Point(a[0], a[1])
    q = Point(1.0, 2.0, 7)
    p.x = p.x + q.y
    q.tag = 3
    a[2] = p.x * p.y + q.tag
