"""Build the `asc` package: the asc._asc extension over libasc.

libasc itself is built with CMake from the repository root (two levels up)
unless ASC_BUILD_DIR names a build directory that already has libasc.so.
The shared library is copied into the package and found through an
$ORIGIN rpath, so the installed package does not depend on the build tree.
libasc's own shared dependencies other than glibc (hwloc, libuv, xxhash
and what they need, e.g. libudev) are copied beside it too; libasc's
RUNPATH is $ORIGIN, so the wheel needs no -dev package on the target
(docs/decisions.md).  Its jemalloc is already inside libasc.

    pip install ./bindings/python                 # from the repository root
    ASC_BUILD_DIR=build python3 setup.py build_ext --inplace   # development
"""
import os
import re
import shutil
import subprocess
import sys
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


class BuildExt(build_ext):
    """build_ext that first makes sure libasc.so exists."""

    def libasc_build_dir(self):
        given = os.environ.get("ASC_BUILD_DIR")
        if given:
            bdir = Path(given).resolve()
            if not (bdir / "libasc.so").exists():
                raise RuntimeError(f"ASC_BUILD_DIR={given} has no libasc.so; "
                                   f"run cmake --build {given} first")
            return bdir
        need_tool("cmake", "CMake")
        need_tool(os.environ.get("CC", "cc").split()[0], "C compiler")
        bdir = Path(self.build_temp).resolve() / "libasc"
        jobs = str(os.cpu_count() or 2)
        run = subprocess.check_call
        run([
            "cmake", "-S", str(ROOT), "-B", str(bdir),
            "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF",
            "-DASC_BUILD_EXAMPLES=OFF", "-DASC_BUILD_BENCH=OFF"])
        run(["cmake", "--build", str(bdir), "--target", "asc",
                               "-j", jobs])
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
        dest = Path(self.get_ext_fullpath("asc._asc")).parent / SONAME
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.exists() or dest.is_symlink():
            dest.unlink()
        shutil.copy2(lib, dest)
        for name, path in shared_deps(lib):
            shutil.copy2(path, dest.parent / name)
        # libasc_mpi (asc.distributed loads it with ctypes), when built.
        mpi = bdir / "libasc_mpi.so"
        if mpi.exists():
            mdest = dest.parent / ("libasc_mpi.so." + VERSION.split(".")[0])
            if mdest.exists() or mdest.is_symlink():
                mdest.unlink()
            shutil.copy2(os.path.realpath(mpi), mdest)


cflags = ["-std=gnu11", "-fvisibility=hidden", "-Wall", "-Wextra", "-Wshadow",
          "-Wmissing-prototypes", "-Wno-missing-field-initializers"]
if os.environ.get("ASC_PY_WERROR"):
    cflags.append("-Werror")

ext = Extension(
    "asc._asc",
    sources=["asc/_asc.c", "asc/_asc_stream.c", "asc/_asc_array.c",
             "asc/_asc_kernel.c", "asc/_asc_args.c"],
    depends=["asc/_asc.h", "asc/_asc_kernel.h"],
    extra_compile_args=cflags,
    extra_link_args=["-Wl,-rpath,$ORIGIN"],
)

setup(
    version=VERSION,
    packages=["asc"],
    package_data={"asc": [SONAME, "py.typed", "lib*.so.*"]},
    include_package_data=False,
    exclude_package_data={"asc": ["*.c", "*.h"]},
    ext_modules=[ext],
    cmdclass={"build_ext": BuildExt},
)
