#!/usr/bin/env python3
"""Extract `comments.tsv`: real comment lines from permissively licensed
source trees, for `core/tests/placeholders.rs` to measure false positives on.

Run once by hand where the trees below are installed; the output is
committed, and no test runs this script. Each tree, its version and its
licence are listed in SOURCES.md. For each language, every comment-only
line whose text is at most 80 bytes (the longest the detector looks at) is
a candidate; kept are all candidates with a word the detector keys on (up
to 700, the hard cases) and a seeded random 300 of the rest.
"""

import glob
import os
import random
import re
import sys

HOME = os.path.expanduser("~")
REG = glob.glob(f"{HOME}/.cargo/registry/src/*/")[0]
NODE = "/tmp/nodeex/node_modules/@bytecodealliance"

# language: (globs, comment openers, closers)
SOURCES = {
    "rust": (
        [f"{REG}{c}/src/**/*.rs" for c in (
            "tokio-1.54.1", "serde-1.0.229", "similar-3.2.1", "cap-std-4.0.3",
            "wasmtime-48.0.8", "clap-4.6.7", "rustix-1.1.6", "encoding_rs-0.8.44",
            "url-2.5.8", "anyhow-1.0.104", "globset-0.4.21", "tempfile-3.27.0")],
        ("//!", "///", "//", "/*", "*"), ("*/",)),
    "python": (["/usr/lib/python3.11/*.py", "/usr/lib/python3.11/*/*.py"], ("#",), ()),
    "javascript": ([f"{NODE}/*/**/*.js"], ("//", "/*", "*"), ("*/",)),
    "typescript": ([f"{NODE}/*/**/*.ts"], ("//", "/*", "*"), ("*/",)),
    "c": (["/usr/include/node/openssl/*.h"], ("/*", "*", "//"), ("*/",)),
    "c++": (["/usr/include/llvm-14/llvm/**/*.h"], ("///", "//", "/*", "*"), ("*/",)),
    "sql": (["/usr/share/postgresql/15/**/*.sql"], ("--",), ()),
    "yaml": (["/usr/lib/google-cloud-sdk/lib/googlecloudsdk/**/*.yaml"], ("#",), ()),
    "shell": (["/usr/lib/google-cloud-sdk/**/*.sh"], ("#",), ()),
    "html": (["/usr/share/doc/nodejs/api/*.html"], ("<!--",), ("-->",)),
    "css": ([f"{HOME}/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/share/doc/rust/html/**/*.css",
             "/usr/share/doc/nodejs/api/assets/*.css"], ("/*", "*"), ("*/",)),
}

KEYS = re.compile(
    r"\.\.\.|\u2026|\b(rest|remain\w*|existing|other|others|previous|prior|original|more|"
    r"everything|unchanged|omit\w*|same|keep|kept|snip\w*|brevity|as is|stays?|untouched|"
    r"elided|here)\b",
    re.IGNORECASE,
)


def comment_lines(path, openers, closers):
    try:
        text = open(path, encoding="utf-8").read()
    except (UnicodeDecodeError, OSError):
        return
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#!"):
            continue
        opener = next((o for o in openers if stripped.startswith(o)), None)
        if opener is None:
            continue
        body = stripped[len(opener):]
        for closer in closers:
            if body.rstrip().endswith(closer):
                body = body.rstrip()[: -len(closer)]
        body = body.strip()
        if not body or len(body.encode()) > 80 or "\t" in line:
            continue
        yield line.rstrip()


def main():
    rng = random.Random(26)
    out = sys.stdout
    for lang, (globs, openers, closers) in SOURCES.items():
        seen = set()
        for pattern in globs:
            for path in sorted(glob.glob(pattern, recursive=True)):
                for line in comment_lines(path, openers, closers):
                    seen.add(line)
        lines = sorted(seen)
        keyed = [l for l in lines if KEYS.search(l)]
        plain = [l for l in lines if not KEYS.search(l)]
        rng.shuffle(keyed)
        rng.shuffle(plain)
        chosen = sorted(keyed[:700]) + sorted(plain[:300])
        print(f"{lang}: {len(lines)} comment lines, {len(keyed)} keyed; kept {len(chosen)}",
              file=sys.stderr)
        for line in chosen:
            out.write(f"{lang}\t{line}\n")


if __name__ == "__main__":
    main()
