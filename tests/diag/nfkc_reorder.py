# expect: 9:8: error: identifier 'á̕': U+0301 after this character needs Unicode normalisation that libasc does not do
import asc


@asc.kernel
def k(b):
    # two combining marks in a row would need canonical reordering: an
    # error rather than a name that differs from Python's
    á̕ = 1
