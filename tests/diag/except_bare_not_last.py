# expect: 10:5: error: default 'except:' must be last
import asc

@asc.kernel
def k(x, n):
    try:
        pass
    except:
        pass
    except ValueError:
        pass
