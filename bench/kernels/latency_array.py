# The 30-line array kernel of docs/latency.md: numpy code of the kind a
# user writes in one function (normalise, score, mix, reduce), for the
# cold-compile and cache-hit figures of `python -m asc profile-compile`.
import numpy as np

import asc


@asc.kernel
def score_rows(x, w, bias, out):
    mu = np.mean(x, axis=1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=1, keepdims=True)
    z = (x - mu) / np.sqrt(var + 1e-5)
    z = z * w + bias
    g = 0.5 * z * (1.0 + np.tanh(0.7978845608 * (z + 0.044715 * z ** 3)))
    m = np.max(g, axis=1, keepdims=True)
    e = np.exp(g - m)
    p = e / np.sum(e, axis=1, keepdims=True)
    h = -np.sum(p * np.log(p + 1e-12), axis=1)
    lo = np.min(x, axis=1)
    hi = np.max(x, axis=1)
    span = hi - lo
    rng = np.where(span > 0.0, span, 1.0)
    scaled = (x - lo[:, None]) / rng[:, None]
    t = np.clip(scaled, 0.05, 0.95)
    a = np.sum(t * p, axis=1)
    b = np.sqrt(np.sum(z * z, axis=1)) / x.shape[1]
    c = np.abs(a - b)
    s = np.sum(np.where(z > 0.0, 1.0, -1.0) * np.minimum(np.abs(z), 3.0), axis=1)
    cs = np.cumsum(p, axis=1)
    q = np.sum(cs < 0.5, axis=1)
    out[:, 0] = h
    out[:, 1] = a
    out[:, 2] = b
    out[:, 3] = c
    out[:, 4] = s
    out[:, 5] = q
    out[:, 6] = span
    out[:, 7] = np.mean(p, axis=1)
