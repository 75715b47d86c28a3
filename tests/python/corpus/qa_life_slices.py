# Task described at http://tat.wright.name/game-of-life/
# (a blog post: a Game of Life where neighbour counts come from shifted slices).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""A helper returning a new board (eight slice +=, masks, .astype(int)); the kernel rebinds board to it in a loop."""
import numpy as np

import asc


@asc.func
def iterate(board):
    neighbour_count = np.zeros(board.shape)
    neighbour_count[1:, 1:] += board[:-1, :-1]
    neighbour_count[1:, :-1] += board[:-1, 1:]
    neighbour_count[:-1, 1:] += board[1:, :-1]
    neighbour_count[:-1, :-1] += board[1:, 1:]
    neighbour_count[:-1, :] += board[1:, :]
    neighbour_count[1:, :] += board[:-1, :]
    neighbour_count[:, :-1] += board[:, 1:]
    neighbour_count[:, 1:] += board[:, :-1]
    survive = (board == 1) & (neighbour_count < 4) & (neighbour_count > 1)
    born = (board == 0) & (neighbour_count == 3)
    return (survive | born).astype(int)


@asc.kernel
def run_life(board, steps):
    for i in range(steps):
        board = iterate(board)
    return board


def args():
    board = np.array([[0, 1, 0, 0, 0],
                      [0, 0, 1, 1, 0],
                      [0, 1, 1, 0, 0],
                      [0, 0, 0, 0, 0],
                      [1, 1, 1, 0, 0]])
    return board, 4


KERNEL = run_life
