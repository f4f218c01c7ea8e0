#!/usr/bin/env python3
"""Every answer of two write-tool binaries, compared byte for byte.

    python3 scripts/same-answers.py OLD/write-tool NEW/write-tool

Runs the same requests through `serve` (one JSON line in, one envelope
out) of each binary, on roots set up alike: the shapes of the bench's
W1-W7 (creates in new directories, updates small and large, a dry run, a
rewrite of every line, a pathological diff) and of its formats (CRLF,
windows-1252, UTF-16), every edit of the two edit corpora
(core/tests/edits, core/tests/ladder) on its file as the corpus has it,
views, patches, write_many, checkpoints and reverts, and refusals, in
the compact form and the full one. The values that differ run to run
(`time_ms`, `expected_mtime_ms`) are blanked; everything else must match,
or the differences are printed and it exits 1. A change that means to
alter an answer says so in its commit; this shows that a refactoring did
not.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WORKSPACE = os.path.dirname(HERE)
VOLATILE = re.compile(rb'"(time_ms|expected_mtime_ms)":\s*-?\d+')


def lines(n, word):
    return "".join(f"{word} line {i} of the file\n" for i in range(n))


def every(text, k):
    out = text.splitlines(keepends=True)
    return "".join(l.replace("line", "LINE") if i % k == 0 else l for i, l in enumerate(out))


def corpus(path):
    files, edits = {}, []
    with open(os.path.join(WORKSPACE, path), encoding="utf-8") as f:
        for line in f:
            item = json.loads(line)
            if item["kind"] == "file":
                files[item["file"]] = item["text"]
            else:
                edits.append(item)
    return files, edits


def steps():
    """(set-up, request) pairs: set-up writes files before the request."""
    kib, mib = lines(20, "small"), lines(20_000, "mid")
    hard = "".join("a\n" if i % 2 else "b\n" for i in range(100_000))
    for i in range(5):
        yield {}, {"path": f"w1/{i}/a/b/file.txt", "content": kib}
    yield {"w2.txt": kib}, {"path": "w2.txt", "content": every(kib, 3)}
    yield {"w3.txt": mib}, {"path": "w3.txt", "content": every(mib, 2000)}
    yield {"w5.txt": mib}, {"path": "w5.txt", "content": every(mib, 2000), "dry_run": True}
    yield {"w6.txt": mib}, {"path": "w6.txt", "content": every(mib, 1)}
    yield {"w7.txt": hard}, {"path": "w7.txt", "content": hard.replace("a", "c", 5000)}
    yield {"crlf.txt": kib.replace("\n", "\r\n")}, {"path": "crlf.txt", "content": every(kib, 2)}
    latin = "médium à été\n" * 200
    yield {"latin.txt": latin.encode("cp1252")}, {"path": "latin.txt", "content": latin.replace("à", "ô")}
    wide = b"\xff\xfe" + kib.encode("utf-16-le")
    yield {"wide.txt": wide}, {"path": "wide.txt", "content": every(kib, 4)}
    yield {}, {"path": "w2.txt", "content": kib, "envelope": "full"}
    # Refusals.
    for path in ["../outside.txt", "/etc/passwd", ".git/config", "a/../../x", ""]:
        yield {}, {"path": path, "content": "x\n"}
    yield {}, {"path": "w2.txt", "content": "x\n", "expected_size_bytes": 1}
    yield {}, {"path": "w2.txt", "content": "x\n", "create_only": True}
    yield {}, {"name": "Write", "arguments": {"path": "w2.txt"}}
    yield {}, {"nonsense": 1}
    # Views, a patch, write_many, checkpoints, a revert.
    yield {}, {"name": "view", "arguments": {"path": "w2.txt"}}
    yield {}, {"name": "view", "arguments": {"path": "."}}
    yield {}, {"name": "view", "arguments": {"path": "w3.txt", "offset": 100, "limit": 20}}
    yield {}, {"name": "checkpoint", "arguments": {"checkpoint": "before"}}
    patch = "*** Begin Patch\n*** Add File: p/new.txt\n+one\n*** Update File: w2.txt\n@@\n-small line 1 of the file\n+SMALL\n*** End Patch\n"
    yield {}, {"name": "apply_patch", "arguments": {"input": patch}}
    yield {}, {"name": "write_many", "arguments": {"files": [
        {"path": "m/a.txt", "content": "a\n"}, {"path": "m/b.txt", "content": "b\n"}]}}
    yield {}, {"name": "revert", "arguments": {"to": "before"}}
    yield {}, {"name": "Edit", "arguments": {"file_path": "crlf.txt",
        "old_string": "small line 3 of the file", "new_string": "three"}}
    yield {}, {"name": "MultiEdit", "arguments": {"file_path": "w2.txt", "edits": [
        {"old_string": "line 5", "new_string": "LINE 5"}, {"old_string": "nowhere", "new_string": "x"}]}}
    yield {}, {"type": "tool_use", "id": "toolu_1", "name": "str_replace_based_edit_tool",
        "input": {"command": "view", "path": "w2.txt", "view_range": [1, 3]}}
    # The corpora's edits, each on its file as the corpus has it.
    for path in ["core/tests/edits/corpus.jsonl", "core/tests/ladder/corpus.jsonl"]:
        files, edits = corpus(path)
        for n, edit in enumerate(edits):
            name = f"corpus/{n}.txt"
            yield {name: files[edit["file"]]}, {"name": "Edit", "arguments": {
                "file_path": name, "old_string": edit["old"], "new_string": edit["new"]}}


def answers(binary, work):
    root, journal = os.path.join(work, "root"), os.path.join(work, "journal")
    os.makedirs(root)
    os.makedirs(journal, mode=0o700)
    serve = subprocess.Popen(
        [binary, "--root", root, "--journal", journal, "serve"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    out = []
    for setup, request in steps():
        for name, content in setup.items():
            path = os.path.join(root, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            data = content.encode("utf-8") if isinstance(content, str) else content
            with open(path, "wb") as f:
                f.write(data)
        serve.stdin.write(json.dumps(request).encode() + b"\n")
        serve.stdin.flush()
        answer = serve.stdout.readline()
        if not answer:
            sys.exit(f"{binary}: serve ended at {request}")
        out.append((request, VOLATILE.sub(rb'"\1":0', answer)))
    serve.stdin.close()
    serve.wait()
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    old, new = sys.argv[1:]
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        first, second = answers(old, a), answers(new, b)
    differ = [(r, x, y) for (r, x), (_, y) in zip(first, second) if x != y]
    for request, x, y in differ[:10]:
        print(f"request: {json.dumps(request)[:200]}\n  old: {x[:400]!r}\n  new: {y[:400]!r}")
    statuses = {}
    for _, answer in second:
        status = json.loads(answer).get("status")
        statuses[status] = statuses.get(status, 0) + 1
    print(f"{len(first)} answers ({statuses}), {len(differ)} differ")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
