# Numpy-style array functions of bench/array_suite.py: whole functions
# written the way numpy users write them, each decorated with @asc.kernel
# and nothing else.  The suite runs each three ways: as asc compiles it,
# as plain Python on numpy (the kernel's .py_func) and through
# numba.njit(parallel=True) of that same function.  Functions that take
# arrays return new ones, as numpy code does, unless their point is an
# in-place update (heat_1d).
import numpy as np

import asc


# ------------------------------------------------- fused elementwise + sums

@asc.kernel
def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@asc.kernel
def exp_poly(a, b, c):
    return np.exp(-0.5 * a * a + 0.25 * a * b - 0.125 * c * c + 0.1 * b)


@asc.kernel
def gauss_loglik(x, mu, sigma):
    z = (x - mu) / sigma
    n = x.shape[0]
    return -0.5 * np.sum(z * z) - n * np.log(sigma) - 0.5 * n * np.log(2.0 * np.pi)


@asc.kernel
def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


@asc.kernel
def softplus(x):
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0.0)


@asc.kernel
def sigmoid_mean(x):
    return np.mean(1.0 / (1.0 + np.exp(-x)))


@asc.kernel
def clip_sqrt(x):
    return np.sqrt(np.clip(np.abs(x), 0.1, 10.0))


@asc.kernel
def hypot_mix(x, y):
    return np.sqrt(x * x + y * y) + np.abs(x - y)


@asc.kernel
def haversine(lat1, lon1, lat2, lon2):
    dlat = lat2 - lat1
    dlon = lon2 - lon1
    h = np.sin(0.5 * dlat) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin(0.5 * dlon) ** 2
    return 2.0 * 6371.0 * np.arcsin(np.sqrt(h))


@asc.kernel
def horner(x, coef):
    y = np.zeros_like(x) + coef[0]
    for k in range(1, coef.shape[0]):
        y = y * x + coef[k]
    return y


@asc.kernel
def linspace_wave(n):
    t = np.linspace(0.0, 1.0, n)
    return np.sin(2.0 * np.pi * 5.0 * t) * np.exp(-3.0 * t)


# --------------------------------------------------------- masks, where

@asc.kernel
def leaky_relu(x):
    return np.where(x > 0.0, x, 0.01 * x)


@asc.kernel
def soft_threshold(x, t):
    return np.where(x > t, x - t, np.where(x < -t, x + t, 0.0))


@asc.kernel
def count_between(x, lo, hi):
    return np.sum((x > lo) & (x < hi))


@asc.kernel
def mandelbrot_mask(c, maxiter):
    z = np.zeros_like(c)
    count = np.zeros(c.shape, np.int64)
    for _ in range(maxiter):
        inside = np.abs(z) < 2.0
        count[inside] += 1
        z[inside] = z[inside] ** 2 + c[inside]
    return count


@asc.kernel
def radial_means(data, radius, nbins):
    rmax = radius.max()
    res = np.zeros(nbins)
    for i in range(nbins):
        inside = (radius >= rmax * i / nbins) & (radius < rmax * (i + 1) / nbins)
        sel = data[inside]
        res[i] = sel.mean()
    return res


@asc.kernel
def masked_stats(x, lo):
    return np.sum(x[x > lo]), x[x > lo].max()


@asc.kernel
def keep_inside(z, c):
    # an escape-time step: the points still inside, and their constants
    keep = np.abs(z) <= 2.0
    return z[keep], c[keep]


# ------------------------------------------------------ normalisations

@asc.kernel
def minmax_scale(x):
    lo = np.min(x)
    return (x - lo) / (np.max(x) - lo)


@asc.kernel
def zscore_cols(a):
    return (a - a.mean(axis=0)) / a.std(axis=0)


@asc.kernel
def l2_rows(a):
    return a / np.sqrt(np.sum(a * a, axis=1))[:, None]


@asc.kernel
def softmax_rows(x):
    m = np.max(x, axis=1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=1, keepdims=True)


@asc.kernel
def logsumexp_rows(a):
    m = np.max(a, axis=1)
    return m + np.log(np.sum(np.exp(a - m[:, None]), axis=1))


@asc.kernel
def softmax_newaxis(x):
    m = x.max(axis=1)
    e = np.exp(x - m[:, None])
    return e / e.sum(axis=1)[:, None]


@asc.kernel
def layer_norm(x, gamma, beta):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * gamma + beta


@asc.kernel
def rms_norm(x, w):
    return x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + 1e-6) * w


@asc.kernel
def cosine_sim(x, y):
    return np.dot(x, y) / (np.linalg.norm(x) * np.linalg.norm(y))


# ----------------------------------------------------------- reductions

@asc.kernel
def col_sums(a):
    return a.sum(axis=0)


@asc.kernel
def row_max(a):
    return np.max(a, axis=1)


@asc.kernel
def mean_last(a):
    return a.mean(axis=2)


@asc.kernel
def argmax_rows(a):
    return np.argmax(a, axis=1)


@asc.kernel
def var_plus_std(x):
    return np.var(x) + np.std(x)


@asc.kernel
def total_variation(x):
    return np.sum(np.abs(x[1:] - x[:-1]))


@asc.kernel
def reverse_cumsum(x):
    return np.cumsum(x[::-1])[::-1]


# -------------------------------------------------------------- stencils

@asc.kernel
def smooth_1d(x):
    return 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:]


@asc.kernel
def box_3x3(a):
    return (a[:-2, :-2] + a[:-2, 1:-1] + a[:-2, 2:] + a[1:-1, :-2] + a[1:-1, 1:-1]
            + a[1:-1, 2:] + a[2:, :-2] + a[2:, 1:-1] + a[2:, 2:]) / 9.0


@asc.kernel
def jacobi_step(a):
    b = a.copy()
    b[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
    return b


@asc.kernel
def heat_1d(u, steps, r):
    for _ in range(steps):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])


@asc.kernel
def laplace_rgb(img):
    lap = (img[:-2, 1:-1, :] + img[2:, 1:-1, :] + img[1:-1, :-2, :]
           + img[1:-1, 2:, :] - 4.0 * img[1:-1, 1:-1, :])
    return lap / np.max(np.abs(lap))


@asc.kernel
def harris(img, k):
    gx = 0.5 * (img[1:-1, 2:] - img[1:-1, :-2])
    gy = 0.5 * (img[2:, 1:-1] - img[:-2, 1:-1])
    xx = gx * gx
    yy = gy * gy
    xy = gx * gy
    # each product summed over a 3x3 window
    h = xx.shape[0] - 2
    w = xx.shape[1] - 2
    sxx = np.zeros((h, w))
    syy = np.zeros((h, w))
    sxy = np.zeros((h, w))
    for di in range(3):
        for dj in range(3):
            sxx += xx[di:di + h, dj:dj + w]
            syy += yy[di:di + h, dj:dj + w]
            sxy += xy[di:di + h, dj:dj + w]
    det = sxx * syy - sxy * sxy
    trace = sxx + syy
    return det - k * trace * trace


# ------------------------------------------- broadcasting, outer, shapes

@asc.kernel
def fill_planes(v):
    n = v.shape[0]
    out = np.zeros((n, n, 3))
    out[:, :, 0] = v[:, np.newaxis]
    out[:, :, 1] = v[np.newaxis, :]
    out[:, :, 2] = v[:, np.newaxis] * v[np.newaxis, :]
    return out.reshape(n * n, 3)


@asc.kernel
def outer_plus_col(x, y):
    return np.outer(x, y) + x[:, None]


@asc.kernel
def gauss_gram(x, y, gamma):
    return np.exp(-gamma * (x[:, None] - y[None, :]) ** 2)


@asc.kernel
def pairwise_bcast(p, q):
    d = p[:, None, :] - q[None, :, :]
    return np.sqrt(np.sum(d * d, axis=2))


@asc.kernel
def pairwise_gram(p, q):
    pp = np.sum(p * p, axis=1)
    qq = np.sum(q * q, axis=1)
    return np.sqrt(np.maximum(pp[:, None] + qq[None, :] - 2.0 * (p @ q.T), 0.0))


@asc.kernel
def sym_part(a):
    return 0.5 * (a + a.T)


@asc.kernel
def tanh_trace(a):
    t = 0.0
    for i in range(a.shape[0]):
        t += a[i, i]
    return a * np.tanh(t) + np.tanh(a)


@asc.kernel
def gather_scale(x, idx, w):
    return x[idx] * w


@asc.kernel
def spmv_csr(indptr, cols, vals, x):
    n = indptr.shape[0] - 1
    y = np.empty(n)
    for i in range(n):
        lo = indptr[i]
        hi = indptr[i + 1]
        y[i] = vals[lo:hi] @ x[cols[lo:hi]]
    return y


# ------------------------------------------------------------ histograms

@asc.kernel
def hist_bincount(x, nbins):
    idx = (x * nbins).astype(np.int64)
    return np.bincount(idx, minlength=nbins)


@asc.kernel
def hist_numpy(x, nbins):
    counts, edges = np.histogram(x, bins=nbins, range=(0.0, 1.0))
    return counts


@asc.kernel
def hist_masks(x, nbins):
    counts = np.zeros(nbins, np.int64)
    for b in range(nbins):
        lo = b / nbins
        hi = (b + 1) / nbins
        counts[b] = np.sum((x >= lo) & (x < hi))
    return counts


# --------------------------------------------------------------- complex

@asc.kernel
def complex_mix(z, w):
    return np.abs(z * w + np.exp(0.5 * z))


@asc.kernel
def phase_rotate(z, theta):
    return z * np.exp(1j * theta)


@asc.kernel
def small_cmatmul_loop(g, h, idx, out):
    for k in range(g.shape[0]):
        for a in range(h.shape[0]):
            gh = g[k, idx[a]] @ h[a]
            out[k] += gh @ np.conj(h[a])
    return out


# ------------------------------------------------------------------ BLAS

@asc.kernel
def gemm_ab(alpha, a, b, beta, c):
    return alpha * a @ b + beta * c


@asc.kernel
def gemv(a, x):
    return a @ x


@asc.kernel
def at_b(a, b):
    return a.T @ b


@asc.kernel
def chain3(a, b, c):
    return a @ b @ c


@asc.kernel
def dense_relu(x, w, b):
    return np.maximum(x @ w + b, 0.0)


@asc.kernel
def batch_layer(x, w, b):
    # eight inputs through a layer's weights (larger than the caches):
    # the product reads w once
    h = np.maximum(x @ w + b, 0.0)
    return h.sum(axis=1)


@asc.kernel
def covariance(x):
    d = x - np.mean(x, axis=0)
    return d.T @ d / (x.shape[0] - 1)


@asc.kernel
def np_cov(x):
    return np.cov(x.T)


@asc.kernel
def bicg_step(a, p, r):
    return r @ a, a @ p
