# mode: types
# signature: k(f32[1], i32[1])
# expect: 12:12: error: 'pick' returns int32 here but float32 elsewhere
# expect: 11:9: note: returns float32 here
import asc


@asc.func
def pick(a, b, first):
    if first:
        return a[0]
    return b[0]


@asc.kernel
def k(a, b):
    a[0] = pick(a, b, True)
