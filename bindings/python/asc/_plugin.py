"""What asc.torch and asc.jax share: a kernel's parameters split into the
operator's inputs and outputs, and the default rule for the outputs'
shapes (docs/plugins.md)."""
import hashlib
import os
import shlex
import subprocess
import tempfile


class Param:
    __slots__ = ("name", "tensor", "dtype", "ndim", "written", "generic")

    def __init__(self, d):
        self.name = d["name"]
        self.tensor = d["kind"] == "tensor"
        self.dtype = None if d["dtype"] == "generic" else d["dtype"]
        self.ndim = d["ndim"]
        self.written = bool(d.get("written"))
        self.generic = bool(d["generic"])


class Signature:
    """A kernel's parameters as an operator sees them: `outputs` are
    allocated by the operator and returned, `mutates` are inputs the kernel
    writes in place, every other parameter is a read-only input."""

    def __init__(self, kernel, outputs=None, mutates=(), like=None):
        self.kernel = kernel
        self.params = [Param(d) for d in kernel.params]
        names = [p.name for p in self.params]
        mutates = tuple(mutates)
        for n in mutates:
            if n not in names:
                raise ValueError(f"kernel {_kname(kernel)!r} has no parameter {n!r}")
        if outputs is None:
            outputs = tuple(p.name for p in self.params
                            if p.tensor and p.written and p.name not in mutates)
        elif isinstance(outputs, str):
            outputs = (outputs,)
        outputs = tuple(outputs)
        for n in outputs:
            if n not in names:
                raise ValueError(f"kernel {_kname(kernel)!r} has no parameter {n!r}")
            if not self.param(n).tensor:
                raise ValueError(f"output {n!r} of kernel {_kname(kernel)!r} is a scalar parameter")
            if n in mutates:
                raise ValueError(f"{n!r} cannot be both an output and mutated")
        for p in self.params:
            if p.tensor and p.written and p.name not in outputs and p.name not in mutates:
                raise ValueError(
                    f"kernel {_kname(kernel)!r} writes parameter {p.name!r}: "
                    f"name it in outputs= (allocated and returned) or in "
                    f"mutates= (written in place)")
        self.outputs = outputs
        self.mutates = mutates
        self.inputs = tuple(p for p in self.params if p.name not in outputs)
        tensors = [p.name for p in self.inputs if p.tensor]
        like = dict(like or {})
        for n in outputs:
            if n not in like:
                if not tensors:
                    raise ValueError(
                        f"kernel {_kname(kernel)!r}: output {n!r} has no tensor "
                        f"input to take its shape from; give like= or a "
                        f"shape function")
                like[n] = tensors[0]
            elif like[n] not in tensors:
                raise ValueError(f"like[{n!r}] = {like[n]!r} is not a tensor input")
        self.like = like

    def param(self, name):
        return next(p for p in self.params if p.name == name)

    def input_index(self, name):
        return [p.name for p in self.inputs].index(name)

    def kernel_args(self, inputs, outputs):
        """The kernel's arguments in parameter order."""
        by_name = dict(zip((p.name for p in self.inputs), inputs))
        by_name.update(zip(self.outputs, outputs))
        return [by_name[p.name] for p in self.params]


def _kname(kernel):
    return getattr(kernel, "__name__", None) or repr(kernel)


def build_shared(name, source, include_dirs, extra_key=""):
    """Compiles one C file into a shared object linked to libasc, once per
    content: the result is kept in the kernel cache directory
    ($ASC_CACHE_DIR, ...) under plugins/.  Returns its path."""
    from . import include_dir, library_path
    from .__main__ import _cache_dir
    cc = shlex.split(os.environ.get("ASC_CC", "").strip() or "cc")
    lib = library_path()
    h = hashlib.sha256()
    for part in (source.encode(), " ".join(cc).encode(), extra_key.encode(),
                 lib.encode()):
        h.update(part)
        h.update(b"\0")
    for d in [include_dir()] + list(include_dirs):
        for root, _, files in sorted(os.walk(d)):
            for f in sorted(files):
                if f.endswith(".h"):
                    with open(os.path.join(root, f), "rb") as fh:
                        h.update(fh.read())
    out_dir = os.path.join(_cache_dir(), "plugins")
    os.makedirs(out_dir, mode=0o700, exist_ok=True)
    out = os.path.join(out_dir, f"{name}-{h.hexdigest()[:24]}.so")
    if os.path.exists(out):
        return out
    with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
        src = os.path.join(tmp, name + ".c")
        with open(src, "w") as f:
            f.write(source)
        so = os.path.join(tmp, name + ".so")
        argv = cc + ["-std=gnu11", "-O2", "-fPIC", "-shared", "-Wall", src,
                     "-o", so, "-I", include_dir()]
        for d in include_dirs:
            argv += ["-I", d]
        libdir = os.path.dirname(lib)
        argv += [lib, f"-Wl,-rpath,{libdir}"]
        r = subprocess.run(argv, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"building {name} failed ({' '.join(argv)}):\n"
                               f"{r.stdout}{r.stderr}")
        os.replace(so, out)
    return out
