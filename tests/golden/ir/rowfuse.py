# Reductions along the last axis with keepdims=True, computed once per row
# of the statement that reads them (docs/optimizer.md, "Fusion across
# statements": rows).
import numpy as np
import asc


# fused: the max into the exp statement, the sum into the division
@asc.kernel
def softmax(x):
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    s = np.sum(e, axis=-1, keepdims=True)
    return e / s


# refused: mu is read by two statements; var is fused
@asc.kernel
def layer_norm(x, g, b):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


# refused: read inside a whole reduction's argument
@asc.kernel
def centered_total(x):
    m = np.max(x, axis=-1, keepdims=True)
    return np.sum(x - m)
