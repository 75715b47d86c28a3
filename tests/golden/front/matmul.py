import asc


# a float32 product: the BLAS call (asc_krt.gemm), then the loops behind a
# test of its status (they run when no BLAS is loaded or ASC_BLAS=0)
@asc.kernel
def matmul_f32(a, b, out):
    c = a @ b
    out[:, :] = c


# integers: the loops only
@asc.kernel
def matmul_i64(a, b, out):
    out[:, :] = a @ b
