# expect: 2:17: error: cannot import name 'nothing' from 'asc' (not a kernel builtin)
from asc import nothing
