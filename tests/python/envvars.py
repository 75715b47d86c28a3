"""A context manager the tests share: environment variables set while a
kernel compiles and runs (pass switches such as ASC_WAVEFRONT=0 are read
when a kernel is compiled, and key the cache)."""
import os


class env:
    """`with env(ASC_X="0", ASC_Y=None):` sets ASC_X, removes ASC_Y, and
    puts both back as they were on leaving."""

    def __init__(self, **kw):
        self.kw = kw

    def __enter__(self):
        self.saved = {k: os.environ.get(k) for k in self.kw}
        for k, v in self.kw.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
