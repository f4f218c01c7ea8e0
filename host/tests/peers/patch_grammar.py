"""Check the freeform apply_patch grammar against the tool's own parser.

Usage: patch_grammar.py WRITE_TOOL ROOT

The grammar is read from the tool's definition (`write-tool schema`,
`custom_tools`), as a host hands it to OpenAI, and parsed with Lark. Then:

- hand-written patches the tool applies are patches the grammar admits;
- malformed patches the tool refuses are refused by the grammar too;
- 400 random patches drawn from the grammar's own rules (seeded) are each
  admitted by Lark and parsed by the tool (`serve`, dry runs): an answer
  may say a file is missing, never that the patch does not parse.

Random texts avoid one thing on purpose: a context line whose whole text is
a marker (" *** End Patch"), which the tool reads as the marker, with the
whitespace around it forgiven (docs/contract.md#patch says so).
"""

import json
import random
import subprocess
import sys

from lark import Lark
from lark.exceptions import LarkError

MARKERS = ("*** End Patch", "*** End of File", "*** Add File:", "*** Delete File:",
           "*** Update File:", "*** Move to:")


def grammar(binary, root):
    out = subprocess.run([binary, "--root", root, "schema"], check=True, capture_output=True)
    definition = json.loads(out.stdout)
    [tool] = definition["custom_tools"]
    assert tool["type"] == "custom" and tool["name"] == "apply_patch", tool
    assert tool["format"]["type"] == "grammar" and tool["format"]["syntax"] == "lark", tool
    return tool["format"]["definition"]


def admits(parser, patch):
    try:
        parser.parse(patch)
        return True
    except LarkError:
        return False


GOOD = [
    "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch\n",
    "*** Begin Patch\n*** Add File: a.txt\n+\n+x\n*** End Patch",
    "*** Begin Patch\n*** Delete File: old.txt\n*** End Patch\n",
    "*** Begin Patch\n*** Update File: src/app.py\n*** Move to: src/main.py\n@@ def greet():\n"
    "-    print(\"Hi\")\n+    print(\"Hello\")\n*** End Patch\n",
    "*** Begin Patch\n*** Update File: a.c\n /***\n- * old\n+ * new\n@@\n x\n-y\n+z\n"
    "*** End of File\n*** End Patch\n",
    "*** Begin Patch\n*** Update File: a\n@@ fn a()\n-1\n@@ fn b()\n-2\n+3\n"
    "*** Add File: b\n+b\n*** Delete File: c\n*** End Patch\n",
]

BAD = [
    "*** Begin Patch\n*** Update File: a\n*** End Patch\n",  # no hunk
    "*** Begin Patch\n*** Update File: a\n@@\n*** End Patch\n",  # a hunk with no line
    "*** Begin Patch\n*** Update File: a\n@@\n-x\n?y\n*** End Patch\n",  # no prefix
    "*** Begin Patch\n*** Add File: a\n+x\n",  # no end
    "*** Begin Patch\n*** End Patch\n",  # no file
    "*** Begin Patch\n*** Frobnicate: a\n*** End Patch\n",
]


def text(rng, allow_empty=True):
    """A line's text: mostly code-like, sometimes starting with what a
    marker starts with, never a whole marker."""
    pieces = ["x", "def f():", "    return 1", "*", "***", " *** note", "@@", "@", "+", "-",
              "\t", "é", "//", "#", "*** End", "  ", "{", "}", ";", "0"]
    n = rng.randint(0 if allow_empty else 1, 5)
    line = "".join(rng.choice(pieces) for _ in range(n))
    if not allow_empty and not line:
        line = "x"
    if line.strip().startswith(MARKERS):
        line = "x" + line
    return line


def path(rng):
    return "/".join(rng.choice(["src", "a", "b.txt", "dir x", "é.py", "m"])
                    for _ in range(rng.randint(1, 3)))


def hunk_lines(rng):
    out = []
    for _ in range(rng.randint(1, 6)):
        out.append(rng.choice(" -+") + text(rng) + "\n")
    return out


def random_patch(rng):
    lines = ["*** Begin Patch\n"]
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(["add", "delete", "update"])
        if kind == "add":
            lines.append(f"*** Add File: {path(rng)}\n")
            lines += ["+" + text(rng) + "\n" for _ in range(rng.randint(1, 4))]
        elif kind == "delete":
            lines.append(f"*** Delete File: {path(rng)}\n")
        else:
            lines.append(f"*** Update File: {path(rng)}\n")
            if rng.random() < 0.2:
                lines.append(f"*** Move to: {path(rng)}\n")
            for i in range(rng.randint(1, 3)):
                if i > 0 or rng.random() < 0.7:
                    lines.append("@@\n" if rng.random() < 0.4 else f"@@ {text(rng, False)}\n")
                lines += hunk_lines(rng)
                if rng.random() < 0.1:
                    lines.append("*** End of File\n")
    lines.append("*** End Patch" + ("\n" if rng.random() < 0.8 else ""))
    return "".join(lines)


def main(binary, root):
    parser = Lark(grammar(binary, root), start="start", parser="earley", lexer="dynamic")
    for patch in GOOD:
        assert admits(parser, patch), patch
    for patch in BAD:
        assert not admits(parser, patch), patch

    rng = random.Random(20261127)
    patches = [random_patch(rng) for _ in range(400)]
    for patch in patches:
        assert admits(parser, patch), patch
    serve = subprocess.Popen([binary, "--root", root, "serve"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, encoding="utf-8")
    unparsed = []
    for patch in GOOD + patches:
        request = {"name": "apply_patch", "arguments": {"input": patch, "dry_run": True}}
        serve.stdin.write(json.dumps(request) + "\n")
        serve.stdin.flush()
        answer = json.loads(serve.stdout.readline())
        if "does not parse" in answer["text"]:
            unparsed.append((patch, answer["text"]))
    serve.stdin.close()
    assert serve.wait(timeout=60) == 0
    assert not unparsed, unparsed[:3]
    print(f"patch grammar: ok ({len(GOOD) + len(patches)} patches)")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
