"""The write-tool component under wasmtime-py (PyPI `wasmtime`).

Usage: python write_tool.py write_tool.wasm ROOT [JOURNAL]

Get the component with `write-tool component -o write_tool.wasm`: it is the
same file the `write-tool` binary runs. ROOT is preopened as ".", the only
directory the component can write in. JOURNAL, a directory outside ROOT, is
granted as the journal (`docs/contract.md#journal`): every change is then
recorded with what it replaced, and can be reverted.
"""

import json
import sys

from wasmtime import Engine, Store, WasiConfig
from wasmtime.component import Component, Linker

INTERFACE = "tool"
# The preopen's name the component is told is its journal, never a root.
JOURNAL = "journal"


class WriteTool:
    def __init__(self, wasm_path, root, journal=None):
        self.engine = Engine()
        self.component = Component.from_file(self.engine, wasm_path)
        self.linker = Linker(self.engine)
        self.linker.add_wasip2()
        self.root = root
        self.journal = journal

    def _func(self, name):
        # A fresh store and instance per call, as the Rust host does: nothing
        # one call does can leak into the next.
        store = Store(self.engine)
        wasi = WasiConfig()
        wasi.preopen_dir(self.root, ".")
        if self.journal:
            wasi.preopen_dir(self.journal, JOURNAL)
            wasi.env = [("WRITE_TOOL_JOURNAL", JOURNAL)]
        store.set_wasi(wasi)
        instance = self.linker.instantiate(store, self.component)
        interface = instance.get_export_index(store, INTERFACE)
        index = instance.get_export_index(store, name, interface)
        return store, instance.get_func(store, index)

    def write(self, path, content, dry_run=False):
        """The typed export: returns a record with the envelope's fields."""
        store, func = self._func("write")
        return func(store, path, content, dry_run)

    def call(self, arguments):
        """The JSON export: a tool call or its arguments in, envelope out."""
        store, func = self._func("call")
        return json.loads(func(store, json.dumps(arguments)))

    def revert(self, change_id="", dry_run=False):
        """Undo a change (the latest when `change_id` is empty)."""
        store, func = self._func("revert")
        return func(store, change_id, dry_run)


def main(wasm_path, root, journal=None):
    tool = WriteTool(wasm_path, root, journal)

    env = tool.write("hello/from-python.txt", "written by wasmtime-py\n")
    print(env.status, "-", env.text)
    assert env.status == "success", env.text

    env = tool.call({"name": "Write", "arguments": {"path": "hello/from-python.txt", "content": "updated\n"}})
    print(env["status"], "-", env["text"])
    print(env["data"]["diff_preview"], end="")
    assert env["data"]["operation"] == "update", env

    # An edit, in the shape models are trained on: one place replaced, the
    # file's format kept (`docs/contract.md#edit`).
    env = tool.call({"name": "Edit", "arguments": {
        "file_path": "hello/from-python.txt", "old_string": "updated", "new_string": "edited"}})
    print(env["status"], "-", env["text"])
    # Matched exactly as sent: the answer's diff says where, and no more.
    assert env["status"] == "success" and "+edited" in env["data"]["diff_preview"], env
    with open(f"{root}/hello/from-python.txt") as f:
        assert f.read() == "edited\n"

    env = tool.call({"path": "../outside.txt", "content": "x"})
    # The message is the text, said once (`docs/contract.md#envelope`).
    print(env["status"], "-", env["error"]["code"], env["text"])
    assert env["error"]["code"] == "ACCESS_DENIED", env

    if not journal:
        return
    # The latest change, the edit, taken back.
    env = tool.revert()
    print(env.status, "-", env.text)
    assert env.status == "success", env.text
    # Two files at once, all or none, then both taken back by their id.
    env = tool.call({"writes": [
        {"path": "hello/a.txt", "content": "a\n"},
        {"path": "hello/b.txt", "content": "b\n"},
    ]})
    print(env["status"], "-", env["text"])
    assert env["data"]["operation"] == "many", env
    env = tool.revert(env["data"]["change_id"])
    print(env.status, "-", env.text)
    assert env.status == "success", env.text


if __name__ == "__main__":
    main(*sys.argv[1:4])
