# expect: 7:9: error: 'continue' outside loop
import asc

@asc.kernel
def k(x, n):
    if n:
        continue
