# expect: 4:2: error: kernel decorators apply to functions, not classes
import asc

@asc.kernel
class P:
    x: int
