# Task described at https://exchangetuts.com/numpyfft-what-is-the-return-value-amplitude-phase-shift-or-angle-1640114164180507
# (a Q&A thread: the amplitude and phase of complex spectrum coefficients).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.abs, np.angle (and deg=True), (X * np.conj(X)).real, X.real / X.imag, rebuild r * exp(1j * p)."""
import numpy as np

import asc


@asc.kernel
def amp_phase(X):
    r = np.abs(X)
    p = np.angle(X)
    power = (X * np.conj(X)).real
    rebuilt = r * np.exp(1j * p)
    return r, p, np.angle(X, deg=True), power, X.real - X.imag, rebuilt


def args():
    rng = np.random.default_rng(27)
    return (rng.standard_normal(8) + 1j * rng.standard_normal(8),)


KERNEL = amp_phase
