# Ported from numba/numba-examples (https://github.com/numba/numba-examples),
# file examples/finance/blackscholes/blackscholes_numba.py.
# Licence of the source: BSD-2-Clause, Copyright (c) 2017, Numba.
# Port: `@jit` -> `@asc.kernel` on the entry point, `@asc.func` on the helper;
# no other change to the kernel's statements (retyped, comments ours).
"""Black-Scholes option prices: math.* scalar code in a loop, np.empty_like outputs, returns both (numba-examples)."""
import math

import numpy as np

import asc


@asc.func
def cnd_numba(d):
    A1 = 0.31938153
    A2 = -0.356563782
    A3 = 1.781477937
    A4 = -1.821255978
    A5 = 1.330274429
    RSQRT2PI = 0.39894228040143267793994605993438
    K = 1.0 / (1.0 + 0.2316419 * math.fabs(d))
    ret_val = (RSQRT2PI * math.exp(-0.5 * d * d) *
               (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
    if d > 0:
        ret_val = 1.0 - ret_val
    return ret_val


@asc.kernel
def black_scholes_numba(stockPrice, optionStrike, optionYears, Riskfree, Volatility):
    callResult = np.empty_like(stockPrice)
    putResult = np.empty_like(stockPrice)

    S = stockPrice
    X = optionStrike
    T = optionYears
    R = Riskfree
    V = Volatility
    for i in range(len(S)):
        sqrtT = math.sqrt(T[i])
        d1 = (math.log(S[i] / X[i]) + (R + 0.5 * V * V) * T[i]) / (V * sqrtT)
        d2 = d1 - V * sqrtT
        cndd1 = cnd_numba(d1)
        cndd2 = cnd_numba(d2)

        expRT = math.exp((-1. * R) * T[i])
        callResult[i] = (S[i] * cndd1 - X[i] * expRT * cndd2)
        putResult[i] = (X[i] * expRT * (1.0 - cndd2) - S[i] * (1.0 - cndd1))

    return callResult, putResult


def args():
    rng = np.random.default_rng(39)
    n = 16
    return (rng.uniform(5.0, 30.0, n), rng.uniform(1.0, 100.0, n), rng.uniform(0.25, 10.0, n),
            0.02, 0.30)


KERNEL = black_scholes_numba
