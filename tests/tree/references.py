#!/usr/bin/env python3
"""ctest "references": every reference in the tree resolves inside the tree.

Checked in every tracked text file:
  - relative links in Markdown files ([text](path)) point at an existing file or folder;
  - repository paths named in text (scripts/..., tools/..., tests/..., bench/..., engine/...,
    backends/..., docs/..., cmake/..., shaders/..., .ci/...) exist, relative to the root or to the
    naming file's folder; build outputs (CMakeFiles, *.o) and bench/out are not checked;
  - Markdown documents named in capitals (e.g. "X.md", two letters or more) exist in the tree.
Prints each unresolved reference as file:line and fails if there is any.
usage: references.py <repository root>"""
import os
import re
import subprocess
import sys

root = sys.argv[1]
listed = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard"],
                        capture_output=True, text=True, check=True).stdout.split("\n")
files = [f for f in listed if f and os.path.isfile(os.path.join(root, f))]
basenames = {os.path.basename(f) for f in files}
text_ext = (".md", ".txt", ".cmake", ".in", ".sh", ".py", ".cpp", ".hpp", ".h", ".c", ".cu", ".cuh", ".comp",
            ".glsl", ".inc", ".map", ".yml")

md_link = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
path_ref = re.compile(r"(?<![\w./-])((?:scripts|tools|tests|bench|engine|backends|docs|cmake|shaders|\.ci)/[\w./-]*\w)")
md_name = re.compile(r"(?<![\w/.-])([A-Z][A-Z_]+\.md)\b")


def exists(here, target):
    return os.path.exists(os.path.join(root, target)) or os.path.exists(os.path.join(root, here, target))


def skipped(target):
    return "CMakeFiles" in target or target.endswith(".o") or target.startswith("bench/out")


unresolved = []
for f in files:
    if not f.endswith(text_ext) and f != ".ci/run":
        continue
    try:
        text = open(os.path.join(root, f), encoding="utf-8").read()
    except UnicodeDecodeError:
        continue
    here = os.path.dirname(f)
    for n, line in enumerate(text.splitlines(), 1):
        if f.endswith(".md"):
            for m in md_link.finditer(line):
                t = m.group(1)
                if not re.match(r"[a-z]+:", t) and not exists(here, t):
                    unresolved.append(f"{f}:{n}: link to {t}")
        for m in path_ref.finditer(line):
            t = m.group(1)
            if not skipped(t) and not exists(here, t):
                unresolved.append(f"{f}:{n}: path {t}")
        for m in md_name.finditer(line):
            if m.group(1) not in basenames:
                unresolved.append(f"{f}:{n}: names {m.group(1)}, which is not in the tree")

print("\n".join(unresolved))
print(f"references: {len(files)} files checked, {len(unresolved)} unresolved reference(s)")
sys.exit(1 if unresolved else 0)
