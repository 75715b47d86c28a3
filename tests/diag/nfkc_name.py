# mode: types
# signature: k(i64[1])
# expect: 11:12: error: name 'xy' is not defined
import asc


@asc.kernel
def k(b):
    # full-width ｘ is x after NFKC (PEP 3131), and the error names it so
    ｘ = 1
    b[0] = ｘｙ + x
