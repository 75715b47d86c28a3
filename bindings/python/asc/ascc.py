"""ascc, the ahead-of-time compiler (docs/ascc.md), as the wheel ships it.

    python -m asc.ascc --help
    asc-ascc --signature 'vadd(f32[:], f32[:], f32[:])' -o vadd.so vadd.py

The program is asc/_ascc (beside the libraries it loads); this runs it
with the arguments given, in place of the Python process.
"""
import os
import sys
from pathlib import Path


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    exe = Path(__file__).resolve().with_name("_ascc")
    if not os.access(exe, os.X_OK):
        sys.exit(f"asc-ascc: {exe} is missing: this asc package was built "
                 "without ascc (a CMake build has it as build/ascc)")
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, ["ascc", *args])


if __name__ == "__main__":
    main()
