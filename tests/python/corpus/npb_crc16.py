# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/crc16/crc16_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""CRC-16-CCITT over a uint8 array: scalar bit arithmetic, a parameter default, returns an int (npbench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def crc16(data, poly=0x8408):
    """CRC-16-CCITT."""
    crc = 0xFFFF
    for b in data:
        cur_byte = 0xFF & b
        for _ in range(0, 8):
            if (crc & 0x0001) ^ (cur_byte & 0x0001):
                crc = (crc >> 1) ^ poly
            else:
                crc >>= 1
            cur_byte >>= 1
    crc = (~crc & 0xFFFF)
    crc = (crc << 8) | ((crc >> 8) & 0xFF)

    return crc & 0xFFFF


def args():
    rng = np.random.default_rng(26)
    return (rng.integers(0, 256, 64, dtype=np.uint8),)


KERNEL = crc16
