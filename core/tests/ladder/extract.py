#!/usr/bin/env python3
"""Build `corpus.jsonl`: real edits from the git history of four projects in
four languages the ladder was never tuned on (`SOURCES.md`).

Each hunk of a commit's change to a file becomes one edit of the file as it
was before the commit, the way a model writes one: the changed lines with
one or two lines of context above and below as the old text, the same
context around the new lines as the new text. The test
(`core/tests/ladder.rs`) perturbs the old text the way models err and
measures who applies it where.

Usage: extract.py MIRRORS_DIR > corpus.jsonl
where MIRRORS_DIR holds `<owner>+<name>/repo` git directories.
"""

import difflib
import json
import os
import random
import subprocess
import sys

REPOS = [
    ("psf+requests", "python", (".py",)),
    ("expressjs+express", "javascript", (".js",)),
    ("spf13+cobra", "go", (".go",)),
    ("DaveGamble+cJSON", "c", (".c", ".h")),
]
MIN_BYTES, MAX_BYTES = 600, 14_000
MAX_HUNK_LINES = 8
HUNKS_PER_FILE = 3
FILES_PER_REPO = 22


def git(repo, *args):
    return subprocess.run(
        ["git", "-C", repo, *args], check=True, capture_output=True
    ).stdout


def main(mirrors):
    rng = random.Random(20261127)
    for name, language, suffixes in REPOS:
        repo = os.path.join(mirrors, name, "repo")
        commits = git(repo, "log", "--no-merges", "--format=%H", "HEAD").decode().split()
        rng.shuffle(commits)
        seen = set()
        files = 0
        for commit in commits:
            if files == FILES_PER_REPO:
                break
            # Root commits have no before.
            if git(repo, "rev-list", "--parents", "-n1", commit).decode().count(" ") != 1:
                continue
            changed = git(
                repo, "diff-tree", "--no-commit-id", "--name-only", "-r", commit + "^", commit
            ).decode().split("\n")
            for path in changed:
                if files == FILES_PER_REPO:
                    break
                if not path.endswith(suffixes) or path in seen or "vendor/" in path or "/unity/" in path:
                    continue
                try:
                    a = git(repo, "show", f"{commit}^:{path}").decode("utf-8")
                    b = git(repo, "show", f"{commit}:{path}").decode("utf-8")
                except (subprocess.CalledProcessError, UnicodeDecodeError):
                    continue
                if a == b or "\r" in a or not MIN_BYTES <= len(a.encode()) <= MAX_BYTES:
                    continue
                la, lb = a.splitlines(keepends=True), b.splitlines(keepends=True)
                ops = difflib.SequenceMatcher(None, la, lb, autojunk=False).get_opcodes()
                hunks = [
                    op for op in ops
                    if op[0] != "equal"
                    and op[2] - op[1] <= MAX_HUNK_LINES
                    and op[4] - op[3] <= MAX_HUNK_LINES
                ]
                if not hunks:
                    continue
                rng.shuffle(hunks)
                key = f"{name}@{commit[:12]}/{path}"
                cases = []
                for _, i1, i2, j1, j2 in hunks[:HUNKS_PER_FILE]:
                    before, after = rng.choice((1, 2)), rng.choice((1, 2))
                    s, e = max(0, i1 - before), min(len(la), i2 + after)
                    old = "".join(la[s:e])
                    new = "".join(la[s:i1]) + "".join(lb[j1:j2]) + "".join(la[i2:e])
                    # At least two lines of old text: a model copies a
                    # region, not a fragment.
                    if e - s < 2 or not old.strip() or old == new:
                        continue
                    at = len("".join(la[:s]).encode())
                    cases.append({"kind": "edit", "file": key, "at": at, "old": old, "new": new})
                if not cases:
                    continue
                seen.add(path)
                files += 1
                print(json.dumps({"kind": "file", "file": key, "language": language, "text": a},
                                 ensure_ascii=False))
                for case in cases:
                    print(json.dumps(case, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1])
