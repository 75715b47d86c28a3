"""Build the `asc` package: the asc._asc extension over libasc.

libasc itself is built with CMake from the repository root (two levels up)
unless ASC_BUILD_DIR names a build directory that already has libasc.so.
The shared library is copied into the package and found through an
$ORIGIN rpath, so the installed package does not depend on the build tree.

    pip install ./bindings/python                 # from the repository root
    ASC_BUILD_DIR=build python3 setup.py build_ext --inplace   # development
"""
import os
import re
import shutil
import subprocess
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
        bdir = Path(self.build_temp).resolve() / "libasc"
        jobs = str(os.cpu_count() or 2)
        subprocess.check_call([
            "cmake", "-S", str(ROOT), "-B", str(bdir),
            "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF",
            "-DASC_BUILD_EXAMPLES=OFF", "-DASC_BUILD_BENCH=OFF"])
        subprocess.check_call(["cmake", "--build", str(bdir), "--target", "asc",
                               "-j", jobs])
        return bdir

    def run(self):
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
             "asc/_asc_kernel.c"],
    depends=["asc/_asc.h"],
    extra_compile_args=cflags,
    extra_link_args=["-Wl,-rpath,$ORIGIN"],
)

setup(
    version=VERSION,
    packages=["asc"],
    package_data={"asc": [SONAME, "py.typed"]},
    include_package_data=False,
    exclude_package_data={"asc": ["*.c", "*.h"]},
    ext_modules=[ext],
    cmdclass={"build_ext": BuildExt},
)
