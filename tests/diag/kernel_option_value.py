# expect: 4:19: error: kernel option 'debug' must be True or False
import asc

@asc.kernel(debug="yes")
def k(x):
    pass
