# expect: 11:9: error: class 'P' cannot be used in a kernel
import asc

class P:
    a: int
    def get(self):
        return self.a

@asc.kernel
def k(x):
    p = P(1)
