# expect: 12:9: error: class 'P' cannot be used in a kernel
import asc

class Base:
    a: int

class P(Base):
    b: int

@asc.kernel
def k(x):
    p = P(1)
