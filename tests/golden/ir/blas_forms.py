import asc


# one gemm into C: alpha and beta the call's, no new array before it (the
# general code, a product into a new array and a loop, behind its status)
@asc.kernel
def gemm(alpha, beta, C, A, B):
    C[:] = alpha * A @ B + beta * C


# one gemv into y with beta 1, A.T a transpose flag
@asc.kernel
def gemv_acc(y, A, x):
    y += A.T @ x


# a returned product: the scale of the left operand is the call's alpha
@asc.kernel
def scaled(alpha, A, x):
    return alpha * A @ x
