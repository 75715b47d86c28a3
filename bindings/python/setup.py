"""Build the `asc` package: the asc._asc extension over libasc.

libasc itself is built with CMake from the repository root (two levels
up): its targets asc, ascc and, where CMake finds MPI, asc_mpi.  The wheel
is the same from any state of the tree: CMake and setuptools build in a
fresh temporary directory each time, and nothing is taken from the
package's source directory but its Python files and py.typed (an in-place
build, scripts/build-python.sh, leaves libraries there).  ASC_BUILD_DIR=DIR
reuses the CMake build directory DIR instead (configured there if it is
not yet), and says so.

The shared library is copied into the package and found through an
$ORIGIN rpath, so the installed package does not depend on the build tree.
libasc's own shared dependencies other than glibc (hwloc, libuv, xxhash
and what they need, e.g. libudev) are copied beside it too; libasc's
RUNPATH is $ORIGIN, so the wheel needs no -dev package on the target
(docs/decisions.md).  Its jemalloc is already inside libasc.  libasc_mpi
goes beside it (asc.distributed; the target needs Open MPI's libmpi), and
ascc as asc/_ascc (RUNPATH $ORIGIN; `asc-ascc` and `python -m asc.ascc`
run it).

    pip install ./bindings/python                 # from the repository root
    ASC_BUILD_DIR=build python3 setup.py build_ext --inplace   # development
"""
import atexit
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = Path(os.environ.get("ASC_SOURCE_DIR", HERE.parent.parent)).resolve()


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    m = re.search(r"project\(\s*libasc\s+VERSION\s+([0-9.]+)", text)
    if not m:
        raise RuntimeError(f"no project(libasc VERSION ...) in {ROOT}/CMakeLists.txt")
    return m.group(1)


VERSION = project_version()
SONAME = "libasc.so." + VERSION.split(".")[0]


# glibc's own libraries: always on the target, never bundled.
SYSTEM_LIBS = ("linux-vdso", "ld-linux", "libc.so", "libm.so", "libdl.so",
               "libpthread.so", "librt.so", "libresolv.so")


def need_tool(name, what):
    if shutil.which(name) is None:
        sys.exit(f"libasc: {what} '{name}' not found; run scripts/setup.sh "
                 f"(from the libasc repository) first")


def shared_deps(lib):
    """Paths of the non-glibc libraries lib loads, recursively (ldd)."""
    out = subprocess.run(["ldd", str(lib)], capture_output=True, text=True,
                         check=True).stdout
    deps = []
    for line in out.splitlines():
        parts = line.split()
        if "=>" in parts and len(parts) >= 3 and parts[2].startswith("/"):
            name = parts[0]
            if not name.startswith(SYSTEM_LIBS) and name != SONAME:
                deps.append((name, Path(parts[2])))
    return deps


def fresh_dir(what):
    """A new temporary directory, removed when this process ends."""
    d = tempfile.mkdtemp(prefix=f"libasc-{what}-")
    atexit.register(shutil.rmtree, d, ignore_errors=True)
    return d


def say(msg):
    print(f"libasc: {msg}", file=sys.stderr, flush=True)


class BuildExt(build_ext):
    """build_ext that first builds libasc, ascc and libasc_mpi."""

    def libasc_build_dir(self):
        given = os.environ.get("ASC_BUILD_DIR")
        need_tool("cmake", "CMake")
        if given:
            bdir = Path(given).resolve()
            say(f"reusing the CMake build in {bdir} (ASC_BUILD_DIR); its "
                "configuration decides what the package holds")
        else:
            bdir = Path(fresh_dir("cmake"))
            say(f"building libasc in a fresh directory, {bdir} "
                "(ASC_BUILD_DIR=DIR reuses a CMake build instead)")
        jobs = str(os.cpu_count() or 2)
        run = subprocess.check_call
        if not (bdir / "CMakeCache.txt").exists():
            # CMAKE_ARGS: more -D options for a fresh build (as
            # scikit-build reads it), after the defaults so they win
            extra = shlex.split(os.environ.get("CMAKE_ARGS", ""))
            if extra:
                say(f"CMAKE_ARGS: {' '.join(extra)}")
            run([
                "cmake", "-S", str(ROOT), "-B", str(bdir),
                "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF",
                "-DASC_BUILD_EXAMPLES=OFF", "-DASC_BUILD_BENCH=OFF", *extra])
        targets = ["asc", "ascc"]
        # cmake/mpi.cmake defines asc_mpi where it finds MPI
        if (bdir / "CMakeFiles" / "asc_mpi.dir").is_dir():
            targets.append("asc_mpi")
        else:
            say("no MPI found by CMake: the package has no libasc_mpi "
                "(asc.distributed needs it; apt install libopenmpi-dev)")
        run(["cmake", "--build", str(bdir), "--target", *targets, "-j", jobs])
        return bdir

    def run(self):
        need_tool(os.environ.get("CC", "cc").split()[0], "C compiler")
        bdir = self.libasc_build_dir()
        for ext in self.extensions:
            ext.include_dirs += [str(ROOT / "include"), str(bdir / "generated")]
            ext.library_dirs += [str(bdir)]
            ext.libraries += ["asc"]
        super().run()
        # Ship the library beside the extension ($ORIGIN rpath).
        lib = Path(os.path.realpath(bdir / "libasc.so"))
        pkg = Path(self.get_ext_fullpath("asc._asc")).parent
        pkg.mkdir(parents=True, exist_ok=True)
        ship = [(lib, SONAME)] + [(path, name) for name, path in shared_deps(lib)]
        # libasc_mpi (asc.distributed loads it with ctypes), when built.
        mpi = bdir / "libasc_mpi.so"
        if mpi.exists():
            ship.append((Path(os.path.realpath(mpi)),
                         "libasc_mpi.so." + VERSION.split(".")[0]))
        ship.append((bdir / "ascc", "_ascc"))
        # The public headers, for plugins built against this package
        # (asc.include_dir(): docs/plugins.md), and the source of asc.jax's
        # XLA handler, which is compiled where jax is installed.
        (pkg / "include" / "asc").mkdir(parents=True, exist_ok=True)
        for h in list((ROOT / "include" / "asc").glob("*.h")) + [
                bdir / "generated" / "asc" / "version.h"]:
            ship.append((h, f"include/asc/{h.name}"))
        xla = HERE / "asc" / "_xla_ffi.c"
        if (pkg / xla.name).resolve() != xla.resolve():   # not in place
            ship.append((xla, xla.name))
        for src, name in ship:
            dest = pkg / name
            if dest.exists() or dest.is_symlink():
                dest.unlink()
            shutil.copy2(src, dest)


cflags = ["-std=gnu11", "-fvisibility=hidden", "-Wall", "-Wextra", "-Wshadow",
          "-Wmissing-prototypes", "-Wno-missing-field-initializers"]
if os.environ.get("ASC_PY_WERROR"):
    cflags.append("-Werror")

# numpy's C API makes the arrays and scalars kernels return (the
# extension falls back to numpy's Python functions when built without it).
try:
    import numpy
    numpy_include, numpy_macros = [numpy.get_include()], [("ASCPY_NUMPY_CAPI", "1")]
except ImportError:
    numpy_include, numpy_macros = [], []

ext = Extension(
    "asc._asc",
    include_dirs=numpy_include,
    define_macros=numpy_macros,
    sources=["asc/_asc.c", "asc/_asc_stream.c", "asc/_asc_array.c",
             "asc/_asc_kernel.c", "asc/_asc_args.c"],
    depends=["asc/_asc.h", "asc/_asc_kernel.h"],
    extra_compile_args=cflags,
    extra_link_args=["-Wl,-rpath,$ORIGIN"],
)

# setuptools' own build directory is fresh too, so that files an earlier
# build left there (build/lib*/asc) never reach the wheel.
options = {"build": {"build_base": fresh_dir("setuptools")}}

setup(
    version=VERSION,
    packages=["asc"],
    # The libraries and ascc are copied in by BuildExt from this build's
    # CMake directory, never from asc/ (where an in-place build puts them).
    package_data={"asc": ["py.typed"]},
    include_package_data=False,
    exclude_package_data={"asc": ["*.c", "*.h"]},
    ext_modules=[ext],
    cmdclass={"build_ext": BuildExt},
    options=options,
)
