"""The installed package, tested where it was installed (a fresh virtual
environment, from the wheel `cargo xtask dist` built).

`WRITETOOL_CLI` names the `write-tool` binary: where the package and the
CLI are given the same bad request, they must answer with the same
envelope.
"""

import json
import os
import subprocess
from importlib import resources

import pytest

import write_tool
from write_tool import Result, RootError, WriteTool

CLI = os.environ["WRITETOOL_CLI"]


@pytest.fixture
def root(tmp_path):
    path = tmp_path / "root"
    path.mkdir()
    return path


@pytest.fixture
def journal(tmp_path):
    return tmp_path / "journal"


def clean_env():
    """The environment without the host settings the tests set for the
    package (which must not pass them on)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("WRITE_TOOL_")}


def cli_call(root, request):
    out = subprocess.run(
        [CLI, "--root", str(root), "--no-journal", "call"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        env=clean_env(),
    )
    # 1: the answer is an error envelope.
    assert out.returncode == 1, out.stderr
    return json.loads(out.stdout)


def test_the_package_is_installed_not_imported_from_the_tree():
    assert "site-packages" in write_tool.__file__
    assert resources.files("write_tool").joinpath("py.typed").is_file()
    assert WriteTool.write.__doc__ and WriteTool.__doc__


def test_write_view_edit_and_patch(root):
    tool = WriteTool(root)
    r = tool.write("src/a.py", "print(1)\n")
    assert isinstance(r, Result) and r.status == "success", r
    assert r.data["operation"] == "create"
    assert (root / "src/a.py").read_text() == "print(1)\n"

    r = tool.write("src/a.py", "print(2)\n", dry_run=True)
    assert r.status == "partial" and "+print(2)" in r.data["diff_preview"]
    assert (root / "src/a.py").read_text() == "print(1)\n"

    r = tool.view("src/a.py")
    assert r.status == "success" and "print(1)" in r.text, r
    (root / "three.txt").write_text("one\ntwo\nthree\n")
    r = tool.view("three.txt", first=2, last=2)
    assert r.status == "success" and "\ttwo" in r.text, r
    assert "one" not in r.text and "three" not in r.text.split("\n", 1)[1], r

    r = tool.edit("src/a.py", "print(1)", "print('one')")
    assert r.status == "success", r
    assert (root / "src/a.py").read_text() == "print('one')\n"

    r = tool.apply_patch(
        "*** Begin Patch\n*** Add File: lib/b.py\n+B = 2\n*** End Patch\n"
    )
    assert r.status == "success", r
    assert (root / "lib/b.py").read_text() == "B = 2\n"


def test_revert_with_a_journal_outside_the_root(root, journal):
    tool = WriteTool(root, journal=journal)
    assert journal.is_dir()
    first = tool.write("notes.txt", "first\n")
    second = tool.write("notes.txt", "second\n")
    assert second.data["change_id"] != first.data["change_id"]
    r = tool.revert()
    assert r.status == "success", r
    assert (root / "notes.txt").read_text() == "first\n"
    r = tool.revert(first.data["change_id"])
    assert r.status == "success", r
    assert not (root / "notes.txt").exists()

    r = tool.write_many([{"path": "m/1.txt", "content": "1\n"}, {"path": "m/2.txt", "content": "2\n"}])
    assert r.status == "success" and r.data["operation"] == "many", r
    assert (root / "m/2.txt").read_text() == "2\n"
    assert tool.revert(r.data["change_id"]).status == "success"
    assert not (root / "m/1.txt").exists() and not (root / "m/2.txt").exists()


def test_two_roots_on_one_journal_cannot_revert_each_others_changes(tmp_path, journal):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (b / "cfg.txt").write_text("b's own\n")
    (a / "cfg.txt").write_text("a's secret\n")
    change = WriteTool(a, journal=journal).write("cfg.txt", "a's new\n").data["change_id"]
    r = WriteTool(b, journal=journal).revert(change, force=True)
    assert r.status == "error", r
    assert (b / "cfg.txt").read_text() == "b's own\n"
    assert len(list(journal.iterdir())) == 2, "one journal per root"


def test_a_root_inside_the_journal_is_refused(tmp_path):
    base = tmp_path / "journals"
    (base / "project").mkdir(parents=True)
    with pytest.raises(RootError, match="inside the journal"):
        WriteTool(base / "project", journal=base)


def test_without_a_journal_there_is_nothing_to_revert(root):
    tool = WriteTool(root)
    tool.write("a.txt", "a\n")
    r = tool.revert()
    assert r.status == "error" and r.error["code"], r
    assert (root / "a.txt").read_text() == "a\n"


@pytest.mark.parametrize(
    "request_",
    [
        {"path": "../outside.txt", "content": "x"},
        {"path": ".git/config", "content": "x"},
        {"nothing": 1},
        {"name": "Edit", "arguments": {"file_path": "missing.txt", "old_string": "a", "new_string": "b"}},
    ],
    ids=["outside", "protected", "bad-request", "missing-file"],
)
def test_errors_are_the_clis_envelopes_and_change_nothing(root, request_):
    (root / ".git").mkdir()
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    ours = WriteTool(root).call(request_)
    assert ours["status"] == "error", ours
    assert ours == cli_call(root, request_)
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before
    assert not (root.parent / "outside.txt").exists()


def test_typed_errors_carry_the_envelope(root):
    r = WriteTool(root).write("../outside.txt", "x")
    assert not r.ok and r.error["code"] == "ACCESS_DENIED"
    assert r.text == "Path must be within project root."


def test_a_root_that_does_not_exist_gets_the_clis_words(tmp_path):
    missing = tmp_path / "missing"
    with pytest.raises(RootError) as raised:
        WriteTool(missing)
    cli = subprocess.run(
        [CLI, "--root", str(missing), "call"], input="{}", capture_output=True, text=True, env=clean_env()
    )
    assert cli.returncode == 2
    assert cli.stderr.strip() == f"write-tool: {raised.value}"


def test_a_file_is_not_a_root(tmp_path):
    file = tmp_path / "file"
    file.write_text("x")
    with pytest.raises(RootError, match="not a directory"):
        WriteTool(file)


def test_a_journal_inside_the_root_is_refused(root):
    with pytest.raises(RootError, match="inside the root"):
        WriteTool(root, journal=root / "journal")
    assert not (root / "journal").exists()


def test_the_definition_is_the_write_tools_schema(root):
    definition = WriteTool(root).definition()
    assert definition["name"] == "Write"
    schema = definition.get("input_schema") or definition.get("parameters") or definition.get("inputSchema")
    assert "path" in schema["properties"] and "path" in schema["required"], definition
