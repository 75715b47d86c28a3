# expect: 7:7: error: lists in kernels have a fixed length ('.append()'): a list display is read as a tuple; write the list whole, as a display or a comprehension, or keep values that change in an array (np.empty(n), asc.local_array)
import asc

@asc.kernel
def k(x, n):
    y = [1, 2]
    y.append(3)
