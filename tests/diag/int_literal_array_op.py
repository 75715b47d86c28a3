# mode: types
# signature: k(u8[1], u8[1])
# expect: 16:18: error: integer literal 300 does not fit in uint8
# expect: 17:28: error: integer literal -1 does not fit in uint8
# expect: 18:18: error: integer constant LIMIT = 256 does not fit in uint8
import numpy as np

import asc

LIMIT = 256


# a Python int the array's dtype cannot hold (numpy: OverflowError)
@asc.kernel
def k(a, out):
    out[:] = a + 300
    out[:] = np.clip(a, 2, -1)
    out[:] = a * LIMIT
