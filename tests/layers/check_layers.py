#!/usr/bin/env python3
"""The layers of ../shared/ARCHITECTURE.md, checked on the sources.

Every C++ source of the libraries lies in a folder of exactly one library, and no file
includes a header of a library above its own (tsl_tensor < tsl_ir < tsl_exec <
tsl_frontend < tsl_repl). CMake's PUBLIC/PRIVATE links make most upward includes fail to
build; this also catches those that would build anyway (a header-only include, a new
folder globbed into the wrong library, a file left at runtime/'s root). Each folder of
runtime/ and ir/ is named in its parent's README.

Usage: check_layers.py SOURCE_DIR   (exit status 1 with one line per problem)
"""
import os
import re
import sys

# Lowest first. A path belongs to the first library with a prefix of it.
LIBRARIES = [
    ("tsl_tensor", ["runtime/tensor/", "runtime/kernels/", "runtime/ops.def",
                    "runtime/fused_ops.def", "runtime/fused_ops.h"]),
    ("tsl_ir", ["ir/"]),
    ("tsl_exec", ["runtime/exec/", "runtime/fusion/", "runtime/memory/", "runtime/autograd/"]),
    ("tsl_repl", ["frontend/repl/"]),
    ("tsl_frontend", ["frontend/", "grammar/"]),
]
RANK = {"tsl_tensor": 0, "tsl_ir": 1, "tsl_exec": 2, "tsl_frontend": 3, "tsl_repl": 4}
SOURCE = (".cpp", ".h", ".cu", ".cuh", ".def", ".inc")
# Folders of the tree whose sources belong to no library (tools, tests, generated).
OUTSIDE = ("tests/", "bench/", "build", "scripts/", "examples/", "stdlib/", "docs/", "cmake/",
           ".")
INCLUDE = re.compile(r'\s*#\s*include\s+"([^"]+)"')


def library_of(path):
    for name, prefixes in LIBRARIES:
        if any(path == p or path.startswith(p) for p in prefixes):
            return name
    return None


def sources(root):
    for top in ("runtime", "ir", "frontend", "grammar"):
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for f in sorted(files):
                if f.endswith(SOURCE):
                    yield os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")


def problems(root):
    out = []
    for path in sources(root):
        lib = library_of(path)
        if lib is None:
            out.append(f"{path}: in no library's folder (ARCHITECTURE.md: a library is a "
                       "set of folders; runtime/'s root holds only the op tables)")
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = library_of(m.group(1))
                if target is not None and RANK[target] > RANK[lib]:
                    out.append(f"{path}:{number}: includes {m.group(1)}, of {target}, "
                               f"which is above {lib}")
    for parent in ("runtime", "ir"):
        readme_path = os.path.join(root, parent, "README.md")
        readme = open(readme_path, encoding="utf-8").read() if os.path.exists(readme_path) else ""
        for entry in sorted(os.listdir(os.path.join(root, parent))):
            if os.path.isdir(os.path.join(root, parent, entry)) and f"`{entry}/`" not in readme:
                out.append(f"{parent}/README.md: says nothing of the folder {entry}/")
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    found = problems(sys.argv[1])
    for p in found:
        print(p)
    print(f"check_layers: {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
