#!/usr/bin/env python3
"""Checks that README.md's table of variables is exactly `overpass-info --markdown`, i.e. that
the docs match the one config table. With --fix, rewrites the table in README.md instead."""
import re
import subprocess
import sys

info, readme = sys.argv[1], sys.argv[2]
table = subprocess.run([info, "--markdown"], check=True, capture_output=True, text=True).stdout
text = open(readme).read()
pattern = re.compile(r"(<!-- variables:[^\n]*-->\n)(.*?)(<!-- end of variables -->)", re.S)
match = pattern.search(text)
if not match:
    sys.exit("README.md has no variables block")
if "--fix" in sys.argv:
    open(readme, "w").write(text[:match.start(2)] + table + text[match.end(2):])
    print("README.md variables table updated")
elif match.group(2) != table:
    print("README.md's variables table differs from `overpass-info --markdown`; run\n"
          "  python3 tests/check_readme_variables.py build/tools/overpass-info README.md --fix")
    sys.exit(1)
else:
    print("README.md variables table matches the config table")
