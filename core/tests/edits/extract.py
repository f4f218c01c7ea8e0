#!/usr/bin/env python3
"""Build `corpus.jsonl`: real edits, from consecutive versions of the same
files in crates of a cargo registry (`SOURCES.md`).

Each hunk between two versions of a file becomes one edit of the older
file, the way a model makes it: the lines it changes plus one or two lines
of context around them as the old text, and the same context around the
new lines as the new text. The test (`core/tests/edits.rs`) perturbs the
old text the way models err and measures who applies it where.

Usage: extract.py REGISTRY_SRC_DIR > corpus.jsonl
"""

import difflib
import json
import os
import random
import sys

PAIRS = [
    ("syn-3.0.9", "syn-3.0.10"),
    ("hashbrown-0.16.1", "hashbrown-0.17.1"),
    ("hashbrown-0.17.1", "hashbrown-0.17.2"),
    ("wit-parser-0.254.2", "wit-parser-0.258.3"),
    ("wit-component-0.254.2", "wit-component-0.258.3"),
    ("wasmparser-0.254.2", "wasmparser-0.258.3"),
    ("wasm-encoder-0.254.2", "wasm-encoder-0.258.3"),
    ("wasm-metadata-0.254.2", "wasm-metadata-0.258.3"),
    ("smallvec-1.16.5", "smallvec-1.16.6"),
    ("regex-syntax-0.8.11", "regex-syntax-0.8.12"),
    ("regex-automata-0.4.18", "regex-automata-0.4.19"),
    ("globset-0.4.21", "globset-0.4.22"),
    ("bstr-1.13.1", "bstr-1.14.0"),
    ("rand-0.9.5", "rand-0.10.3"),
    ("rand_core-0.9.5", "rand_core-0.10.1"),
    ("getrandom-0.3.4", "getrandom-0.4.3"),
    ("sha2-0.10.9", "sha2-0.11.1"),
    ("digest-0.10.7", "digest-0.11.3"),
    ("similar-2.7.0", "similar-3.2.1"),
    ("errno-0.3.14", "errno-0.3.15"),
    ("itoa-1.0.18", "itoa-1.0.19"),
]
SUFFIXES = (".rs", ".md", ".toml")
MIN_BYTES, MAX_BYTES = 400, 12_000
MAX_HUNK_LINES = 10
HUNKS_PER_FILE = 3
MAX_FILES = 90


def main(registry):
    rng = random.Random(20261126)
    candidates = []
    for old_dir, new_dir in PAIRS:
        base = os.path.join(registry, old_dir)
        if not os.path.isdir(base) or not os.path.isdir(os.path.join(registry, new_dir)):
            continue
        for top, _, names in sorted(os.walk(base)):
            for name in sorted(names):
                if not name.endswith(SUFFIXES) or name.endswith(".orig"):
                    continue
                rel = os.path.relpath(os.path.join(top, name), base)
                other = os.path.join(registry, new_dir, rel)
                if not os.path.isfile(other):
                    continue
                try:
                    a = open(os.path.join(base, rel), encoding="utf-8", newline="").read()
                    b = open(other, encoding="utf-8", newline="").read()
                except UnicodeDecodeError:
                    continue
                if a == b or not MIN_BYTES <= len(a.encode()) <= MAX_BYTES or "\r" in a:
                    continue
                candidates.append((f"{old_dir}/{rel}", a, b))
    rng.shuffle(candidates)
    files = 0
    for path, a, b in candidates:
        if files == MAX_FILES:
            break
        la, lb = a.splitlines(keepends=True), b.splitlines(keepends=True)
        ops = difflib.SequenceMatcher(None, la, lb, autojunk=False).get_opcodes()
        hunks = [
            op for op in ops
            if op[0] != "equal" and op[2] - op[1] <= MAX_HUNK_LINES and op[4] - op[3] <= MAX_HUNK_LINES
        ]
        if not hunks:
            continue
        rng.shuffle(hunks)
        cases = []
        for _, i1, i2, j1, j2 in hunks[:HUNKS_PER_FILE]:
            before, after = rng.choice((1, 2)), rng.choice((1, 2))
            s, e = max(0, i1 - before), min(len(la), i2 + after)
            old = "".join(la[s:e])
            new = "".join(la[s:i1]) + "".join(lb[j1:j2]) + "".join(la[i2:e])
            if not old.strip() or old == new:
                continue
            at = len("".join(la[:s]).encode())
            cases.append({"kind": "edit", "file": path, "at": at, "old": old, "new": new})
        if not cases:
            continue
        files += 1
        print(json.dumps({"kind": "file", "file": path, "text": a}, ensure_ascii=False))
        for case in cases:
            print(json.dumps(case, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1])
