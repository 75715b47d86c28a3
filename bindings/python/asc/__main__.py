"""python -m asc --version | info | profile-compile FILE --args EXPR: what
this installation of asc uses; where a kernel's first call spends its time
(docs/latency.md)."""
import os
import shlex
import shutil
import subprocess
import sys

import asc

# The flags libasc adds to every kernel compile (src/jit/cc.c,
# default_flags; -O3 unless a kernel asks otherwise), before $ASC_CFLAGS.
KERNEL_FLAGS = ("-O3 -std=gnu11 -fPIC -shared -march=native -fno-math-errno "
                "-ffp-contract=off -fwrapv -pipe")


def _cache_dir():
    # As src/jit/cache.c finds it.
    d = os.environ.get("ASC_CACHE_DIR")
    if d:
        return d
    x = os.environ.get("XDG_CACHE_HOME", "")
    if x.startswith("/"):
        return os.path.join(x, "asc")
    return os.path.join(os.path.expanduser("~"), ".cache", "asc")


def _compiler():
    spec = os.environ.get("ASC_CC", "").strip()
    argv = shlex.split(spec) if spec else ["cc"]
    where = shutil.which(argv[0])
    if where is None:
        return f"{' '.join(argv)} (not found: install one, or set ASC_CC)"
    try:
        first = subprocess.run(argv + ["--version"], capture_output=True, text=True,
                               timeout=10).stdout.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        first = "?"
    src = "ASC_CC" if spec else "default; set ASC_CC to change"
    return f"{' '.join(argv)} -> {where} ({first}) [{src}]"


def info():
    p = asc._asc.device_properties(0)
    lines = [
        f"asc {asc.__version__} (distribution libasc) in {os.path.dirname(asc.__file__)}",
        f"device: {p['name']}, {p['cores']} cores, {p['numa_nodes']} NUMA node(s), "
        f"SIMD {p['simd_width']} bytes, {asc._asc.device_count()} device(s)",
        f"C compiler: {_compiler()}",
        f"cache dir: {_cache_dir()}",
        f"kernel flags: {KERNEL_FLAGS}"
        + (f" + ASC_CFLAGS={os.environ['ASC_CFLAGS']}" if os.environ.get("ASC_CFLAGS") else ""),
    ]
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv in (["--version"], ["-V"]):
        print(f"asc {asc.__version__}")
        return 0
    if argv == ["info"]:
        print(info())
        return 0
    if argv[:1] == ["profile-compile"]:
        from asc import _latency
        return _latency.main(argv[1:])
    print("usage: python -m asc --version | info | profile-compile FILE --args EXPR",
          file=sys.stderr)
    return 0 if argv in (["-h"], ["--help"]) else 2


if __name__ == "__main__":
    sys.exit(main())
