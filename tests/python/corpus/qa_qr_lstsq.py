# Task described at http://channelflow.org/dokuwiki/doku.php?do=export_raw&id=gibson%3Ateaching%3Afall-2016%3Amath753%3Aqr-leastsquares
# (course notes: the least-squares solution of an oblong system through A = QR).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""Q, R = np.linalg.qr(A), np.linalg.solve(R, Q.T.dot(b)), the residual's np.linalg.norm."""
import numpy as np

import asc


@asc.kernel
def qr_least_squares(A, b):
    Q, R = np.linalg.qr(A)
    x = np.linalg.solve(R, Q.T.dot(b))
    return x, np.linalg.norm(A.dot(x) - b)


def args():
    rng = np.random.default_rng(26)
    return rng.standard_normal((6, 4)), rng.standard_normal(6)


KERNEL = qr_least_squares
