#!/usr/bin/env python3
"""include/quadnav_version.h is committed, not generated: its numbers must
equal the project version in meson.build (argv[1]) and agree with each
other."""
import re
import sys

version, header = sys.argv[1], sys.argv[2]
text = open(header).read()
got = {}
for key in ("MAJOR", "MINOR", "PATCH"):
    m = re.search(r"#define QN_VERSION_%s (\d+)\b" % key, text)
    got[key] = m.group(1) if m else None
m = re.search(r'#define QN_VERSION_STRING "([^"]*)"', text)
string = m.group(1) if m else None
want = version.split(".")
problems = []
if [got["MAJOR"], got["MINOR"], got["PATCH"]] != want[:3]:
    problems.append(f"QN_VERSION_MAJOR/MINOR/PATCH are {got}, meson.build says {version}")
if string != version:
    problems.append(f'QN_VERSION_STRING is "{string}", meson.build says "{version}"')
for p in problems:
    print(f"{header}: {p}", file=sys.stderr)
print(f"{2 - len(problems)} passed, {len(problems)} failed")
sys.exit(1 if problems else 0)
