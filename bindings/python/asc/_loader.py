"""Importing asc._asc, and the one platform problem that can stop it.

libasc links Debian's jemalloc, whose thread-local state uses the
initial-exec TLS model: it must live in the static TLS block that glibc
sizes when the process starts.  A library loaded later with dlopen (every
Python extension) finds too little room and fails with "cannot allocate
memory in static TLS block".  glibc's tunable
glibc.rtld.optional_static_tls, set before the process starts, reserves the
room.  When the import fails for that reason in a script, `python -m`, or
`python -c` run, asc sets the tunable and re-executes the same command
line once (the process keeps its pid and its arguments); in interactive
sessions (REPL, IPython, Jupyter) it raises ImportError saying what to set
instead.  ASC_NO_REEXEC=1 turns the re-execution off.  docs/python.md
explains the setting.

Debian's jemalloc also defines C++ operator new/delete and needs
libstdc++.  If libstdc++ is first loaded as part of libasc's dependency
group, its own references to operator new resolve to jemalloc's while
other C++ code in the process (LLVM in numba, for one) frees with glibc:
"free(): invalid pointer".  Loading libstdc++ on its own first keeps its
allocator its own, so asc loads it before the extension.
"""
import os
import sys

TUNABLE = "glibc.rtld.optional_static_tls=65536"

_HOW = ("start Python with GLIBC_TUNABLES=" + TUNABLE + " in the environment "
        "(or LD_PRELOAD=libjemalloc.so.2); see docs/python.md")


def _interactive():
    return (hasattr(sys, "ps1") or sys.flags.interactive
            or "IPython" in sys.modules or "ipykernel" in sys.modules)


def _can_reexec():
    argv = getattr(sys, "orig_argv", None)
    return (bool(argv) and sys.executable and not _interactive()
            and sys.argv and sys.argv[0] not in ("", "-")
            and not os.environ.get("ASC_NO_REEXEC")
            and not os.environ.get("ASC_TLS_REEXEC"))


def _preload_libstdcxx():
    import ctypes
    try:
        ctypes.CDLL("libstdc++.so.6")
    except OSError:
        pass  # no C++ runtime on the system: then jemalloc cannot need it


def load_extension():
    _preload_libstdcxx()
    try:
        from . import _asc
        return _asc
    except ImportError as exc:
        if "static TLS" not in str(exc):
            raise
        if not _can_reexec():
            raise ImportError(f"asc: libasc could not be loaded ({exc}); {_HOW}") from exc
    tunables = os.environ.get("GLIBC_TUNABLES")
    os.environ["GLIBC_TUNABLES"] = f"{tunables}:{TUNABLE}" if tunables else TUNABLE
    os.environ["ASC_TLS_REEXEC"] = "1"
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os.execv(sys.executable, sys.orig_argv)
