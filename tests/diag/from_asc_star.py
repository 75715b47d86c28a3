# expect: 2:17: error: 'from asc import *' is not supported; import the names you use
from asc import *

@kernel
def k(x):
    pass
