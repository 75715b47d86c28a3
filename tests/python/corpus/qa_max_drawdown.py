# Task described at https://nbviewer.org/github/YongBeomKim/TradingPython/blob/main/stock-port/02_asset_allocation.ipynb
# (a notebook: maximum drawdown of a price series from its running maximum).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.multiply.accumulate of returns, np.maximum.accumulate, argmin/argmax of a slice, the drawdown series."""
import numpy as np

import asc


@asc.kernel
def drawdown(returns):
    prices = 100.0 * np.multiply.accumulate(1.0 + returns)
    running_max = np.maximum.accumulate(prices)
    idx_lower = np.argmin(prices - running_max)
    idx_upper = np.argmax(prices[:idx_lower])
    mdd = (prices[idx_lower] - prices[idx_upper]) / prices[idx_upper]
    return prices / running_max - 1.0, mdd


def args():
    return (np.array([0.2, 0.083, -0.23, -0.35, 0.23, 0.25, 0.2, 0.17, 0.14]),)


KERNEL = drawdown
