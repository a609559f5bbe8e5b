#!/usr/bin/env python3
"""The layers of Overpass, checked on every #include (docs/ARCHITECTURE.md, "Layers").

cmake/layers.txt is the one list of layers, their folders and the layers each may use; the build
gives each layer's library only those (cmake/layers.cmake). This test reads the same list and
checks every C, C++ and CUDA file of the repository, each of which must lie in a layer's folder:
each `#include "..."` must name an existing
header of the file's own layer or of a layer its layer may use, and a test-only header may be
included only by tests/ and the files the list names. It fails naming the file, the line and the
forbidden edge.
"""
import argparse
import os
import re
import sys

SOURCES = (".c", ".cc", ".h", ".cu", ".def")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_layers(path):
    layers, test_only = {}, {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            if fields[0] == "test-only":
                if len(fields) < 2:
                    sys.exit(f"{path}:{number}: test-only needs a header")
                test_only[fields[1]] = set(fields[2:])
                continue
            if len(fields) < 2:
                sys.exit(f"{path}:{number}: a layer needs a folder")
            layers[fields[0]] = (fields[1].rstrip("/"), set(fields[2:]))
    for name, (_, uses) in layers.items():
        for u in uses - set(layers):
            sys.exit(f"{path}: layer {name} uses {u}, which is not a layer")
    return layers, test_only


def layer_of(path, layers):
    """The layer whose folder holds `path` (the deepest one), or None."""
    best = None
    for name, (folder, _) in layers.items():
        if path.startswith(folder + "/") and (best is None or len(folder) > len(layers[best][0])):
            best = name
    return best


def check(source, layers, test_only):
    problems = []
    for top, dirs, files in os.walk(source):
        dirs[:] = [d for d in dirs if not d.startswith(".") and not d.startswith("build")
                   and d != "out"]
        for name in files:
            if not name.endswith(SOURCES):
                continue
            path = os.path.relpath(os.path.join(top, name), source)
            own = layer_of(path, layers)
            if own is None:
                problems.append(f"{path}: in no layer's folder (cmake/layers.txt)")
                continue
            allowed = layers[own][1] | {own}
            with open(os.path.join(source, path), errors="replace") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    header = m.group(1)
                    where = f"{path}:{number}: includes \"{header}\""
                    if "/" not in header or header.startswith("."):  # beside the file
                        local = os.path.normpath(os.path.join(os.path.dirname(path), header))
                        if not os.path.isfile(os.path.join(source, local)):
                            problems.append(f"{where}: no such file beside it")
                        continue
                    if not os.path.isfile(os.path.join(source, header)):
                        problems.append(f"{where}: no such file in the repository")
                        continue
                    if header in test_only and own != "tests" and path not in test_only[header]:
                        problems.append(f"{where}: a test-only header (cmake/layers.txt), "
                                        f"included by layer {own}")
                        continue
                    target = layer_of(header, layers)
                    if target is not None and target not in allowed:
                        uses = " ".join(sorted(layers[own][1])) or "no other layer"
                        problems.append(f"{where}: layer {own} may not use layer {target} "
                                        f"(cmake/layers.txt: {own} may use {uses})")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--source", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   help="the repository root (default: this script's)")
    a = p.parse_args()
    layers, test_only = read_layers(os.path.join(a.source, "cmake", "layers.txt"))
    problems = check(a.source, layers, test_only)
    for line in problems:
        print(line)
    if problems:
        print(f"check_layers: {len(problems)} include(s) break the layers of cmake/layers.txt")
        return 1
    print(f"check_layers: every include follows cmake/layers.txt ({len(layers)} layers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
