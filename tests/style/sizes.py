#!/usr/bin/python3
"""sizes.py SRC [--summary] - the size limits of docs/design.md ("a file per concern"):
no C source or header in sim/, models/ or topologies/ over 800 lines, no
function over 120 lines (from its opening brace to its closing one).

Functions are found by brace matching at file level, after removing string
and character literals and comments, which is enough for this code base's
one style (STYLE.md: a function's opening brace on its own line). Prints
every breach as FILE:LINE and exits 1, or prints the largest file and
function and exits 0. --summary also prints, per folder, its files, lines,
largest file, functions, how many are over the limit and the largest (the
before/after figures of a restructuring: run it on `git archive REV` too)."""
import glob
import os
import re
import sys

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 120
FOLDERS = ("sim", "models", "topologies")


def strip(text):
    """text without comments and literals, line structure kept"""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(\\.|[^"\\\n])*"|\'(\\.|[^\'\\\n])*\'', '""', text)


def functions(path):
    """(lines, name, first line) of every top-level brace block that follows a ')'"""
    lines = strip(open(path, errors="replace").read()).split("\n")
    found, depth, start, name = [], 0, None, None
    for i, line in enumerate(lines):
        if depth == 0 and line.startswith("{"):
            j = i - 1
            while j >= 0 and "(" not in lines[j]:
                j -= 1
            m = re.search(r"(\w+)\s*\(", lines[j]) if j >= 0 else None
            start, name = i, m.group(1) if m else "?"
        depth += line.count("{") - line.count("}")
        if depth == 0 and start is not None and "}" in line:
            found.append((i - start + 1, name, start + 1))
            start = None
    return found


def summary(src):
    """one line per folder of sim/ (its subfolders), models/, topologies/"""
    sim = sorted(os.path.join("sim", d) for d in os.listdir(os.path.join(src, "sim"))
                 if os.path.isdir(os.path.join(src, "sim", d)))
    folders = sim + [f for f in FOLDERS if f != "sim"]
    for folder in folders:
        paths = sorted(glob.glob(os.path.join(src, folder, "**", "*.[ch]"), recursive=True))
        if not paths:
            continue
        lines = [(sum(1 for _ in open(p, errors="replace")), os.path.relpath(p, src))
                 for p in paths]
        fns = [(n, name) for p in paths for n, name, _ in functions(p)]
        over = sum(1 for n, _ in fns if n > MAX_FUNCTION_LINES)
        big = max(fns) if fns else (0, "-")
        print(f"{folder}: {len(paths)} files, {sum(n for n, _ in lines)} lines, largest "
              f"{max(lines)[1]} ({max(lines)[0]}); {len(fns)} functions, {over} over "
              f"{MAX_FUNCTION_LINES} lines, largest {big[1]} ({big[0]})")


def main(src):
    breaches, biggest_file, biggest_fn = [], (0, ""), (0, "")
    for folder in FOLDERS:
        for path in sorted(glob.glob(os.path.join(src, folder, "**", "*.[ch]"), recursive=True)):
            rel = os.path.relpath(path, src)
            n = sum(1 for _ in open(path, errors="replace"))
            biggest_file = max(biggest_file, (n, rel))
            if n > MAX_FILE_LINES:
                breaches.append(f"{rel}:1: {n} lines, more than {MAX_FILE_LINES}")
            for length, name, line in functions(path):
                biggest_fn = max(biggest_fn, (length, f"{name} ({rel}:{line})"))
                if length > MAX_FUNCTION_LINES:
                    breaches.append(f"{rel}:{line}: {name} is {length} lines, more than "
                                    f"{MAX_FUNCTION_LINES}")
    for b in breaches:
        print(b)
    if not biggest_file[0] or not biggest_fn[0]:
        print(f"sizes.py: no sources or no functions found under {src}")
        return 1
    print(f"largest file {biggest_file[1]} ({biggest_file[0]} lines), "
          f"largest function {biggest_fn[1]} ({biggest_fn[0]} lines)")
    return 1 if breaches else 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--summary"]
    root = args[0] if args else "."
    if "--summary" in sys.argv[1:]:
        summary(root)
    sys.exit(main(root))
