"""write-tool: the file-changing tool AI code agents call, as a library.

The package carries the write-tool component (``write_tool.wasm``, the same
bytes ``write-tool component`` writes) and runs it on the PyPI ``wasmtime``
package. The component can touch one directory, the project root: it is
preopened, and nothing else is (but the journal, outside the root, when one
is given)::

    from write_tool import WriteTool

    tool = WriteTool("/path/to/project")
    result = tool.write("hello.txt", "hi\\n")
    print(result.status, result.text)

Every method answers with a :class:`Result`: the envelope's ``status``
(``"success"``, ``"partial"`` or ``"error"``), the ``text`` a model reads,
``data`` and ``error``. :meth:`WriteTool.call` takes any request the
component reads (a tool call of any provider's shape, or the arguments)
and answers with the envelope as a ``dict``. The envelope and every rule
are in the project's ``docs/contract.md``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Dict, Mapping, Optional, Sequence, Union

from wasmtime import Engine, Store, WasiConfig
from wasmtime.component import Component, Linker

__all__ = ["WriteTool", "Result", "RootError", "COMPONENT"]

#: The component's file inside the package.
COMPONENT = "write_tool.wasm"
#: The interface the component's world exports.
_INTERFACE = "tool"
#: The preopen's name the component is told is its journal, never a root.
_JOURNAL = "journal"

PathLike = Union[str, "os.PathLike[str]"]


class RootError(ValueError):
    """The root (or the journal) is not a directory the tool can use.

    The message is the one the ``write-tool`` CLI gives for the same root.
    """


@dataclass(frozen=True)
class Result:
    """One envelope: what a call did, for a program and for a model."""

    #: ``"success"`` (written), ``"partial"`` (a dry run, or a cut preview)
    #: or ``"error"`` (nothing changed on disk).
    status: str
    #: What a model reads.
    text: str
    #: The envelope's ``data``: the diff, the lock values, the change id …
    data: Dict[str, Any] = field(default_factory=dict)
    #: ``{"code": …, "message": …}`` when ``status`` is ``"error"``.
    error: Optional[Dict[str, str]] = None
    #: The whole envelope, as the component answered.
    envelope: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        """Whether the call did what it was asked (a dry run included)."""
        return self.status != "error"

    @classmethod
    def of(cls, envelope: Mapping[str, Any]) -> "Result":
        return cls(
            status=envelope.get("status", "error"),
            text=envelope.get("text", ""),
            data=dict(envelope.get("data") or {}),
            error=envelope.get("error"),
            envelope=dict(envelope),
        )


def _directory(path: PathLike, what: str) -> str:
    """``path`` made absolute, or the CLI's refusal of it."""
    given = os.fspath(path)
    try:
        real = os.path.realpath(given, strict=True)
    except OSError as e:
        # The CLI's words for the same root (Rust's `io::Error`).
        raise RootError(
            f"{what} is not a usable directory: {given}: {e.strerror} (os error {e.errno})"
        ) from None
    if not os.path.isdir(real):
        raise RootError(f"{what} is not a usable directory: {given}: not a directory")
    return real


def _inside(path: str, directory: str) -> bool:
    return os.path.commonpath([path, directory]) == directory


def _journal(root: str, base: PathLike) -> str:
    """The root's own journal below ``base``, made private where missing.

    ``base`` holds one journal per root, named as the CLI names it (the
    first 16 bytes of the SHA-256 of the root's real path, in hex): a tool
    on another root given the same ``base`` cannot revert this root's
    changes into its own. A base inside the root (a model could rewrite
    the journal there) or holding the root (a call could write the
    journals) is refused before anything is made, and so is one that
    another user owns or others may write.
    """
    wanted = os.path.realpath(os.fspath(base))
    if _inside(wanted, root):
        raise RootError(
            f"the journal {wanted} lies inside the root {root}: "
            "a model could reach it there; keep it outside"
        )
    if _inside(root, wanted):
        raise RootError(
            f"the root {root} lies inside the journal {wanted}: "
            "a call could write the journals there; keep them apart"
        )
    os.makedirs(wanted, mode=0o700, exist_ok=True)
    wanted = _directory(wanted, "the journal")
    stat = os.stat(wanted)
    if stat.st_uid != os.getuid() or stat.st_mode & 0o022:
        raise RootError(
            f"the journal {wanted} is another user's or others may write it: "
            "give a directory of your own that only you can write"
        )
    key = hashlib.sha256(os.fsencode(root)).hexdigest()[:32]
    own = os.path.join(wanted, key)
    os.makedirs(own, mode=0o700, exist_ok=True)
    return own


class WriteTool:
    """The tool on one project root.

    ``root`` must be an existing directory: the only one the component can
    change. ``journal``, a directory of the user's outside the root (made,
    private, if missing), keeps each root's journal in a folder of its own:
    every change with what it replaced, so that :meth:`revert` can take it
    back. Without it nothing is recorded.

    The component is compiled once per ``WriteTool``; every call gets a
    fresh store and instance, as the ``write-tool`` host does, so that
    nothing one call does reaches the next.
    """

    def __init__(self, root: PathLike, journal: Optional[PathLike] = None) -> None:
        self.root = _directory(root, "a root")
        self.journal: Optional[str] = None
        if journal is not None:
            self.journal = _journal(self.root, journal)
        self._engine = Engine()
        wasm = resources.files(__name__).joinpath(COMPONENT).read_bytes()
        self._component = Component(self._engine, wasm)
        self._linker = Linker(self._engine)
        self._linker.add_wasip2()

    def _export(self, name: str):
        store = Store(self._engine)
        wasi = WasiConfig()
        wasi.preopen_dir(self.root, ".")
        if self.journal is not None:
            wasi.preopen_dir(self.journal, _JOURNAL)
            wasi.env = [("WRITE_TOOL_JOURNAL", _JOURNAL)]
        store.set_wasi(wasi)
        instance = self._linker.instantiate(store, self._component)
        interface = instance.get_export_index(store, _INTERFACE)
        index = instance.get_export_index(store, name, interface)
        return store, instance.get_func(store, index)

    def call(self, request: Mapping[str, Any]) -> Dict[str, Any]:
        """Run one request and answer with its envelope.

        ``request`` is a tool call (``{"name": "Write", "arguments": {…}}``,
        an Anthropic ``tool_use`` block, an OpenAI function call …) or the
        arguments alone. Bad input is an ``"error"`` envelope, not an
        exception.
        """
        store, func = self._export("call")
        answer = func(store, json.dumps(request))
        return json.loads(answer)

    def _run(self, name: str, arguments: Dict[str, Any]) -> Result:
        return Result.of(self.call({"name": name, "arguments": arguments}))

    def write(self, path: str, content: str, dry_run: bool = False) -> Result:
        """Write ``content`` to ``path`` (relative to the root), whole."""
        return self._run("Write", {"path": path, "content": content, "dry_run": dry_run})

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> Result:
        """Replace ``old`` with ``new`` in ``path``: the one place it
        matches, or every place with ``replace_all``."""
        return self._run(
            "Edit",
            {"file_path": path, "old_string": old, "new_string": new, "replace_all": replace_all},
        )

    def view(self, path: str, first: Optional[int] = None, last: Optional[int] = None) -> Result:
        """A file's lines (from ``first``, to ``last``; numbered from 1) or
        a directory's entries. Changes nothing."""
        arguments: Dict[str, Any] = {"path": path}
        if first is not None or last is not None:
            arguments["view_range"] = [first or 1, -1 if last is None else last]
        return self._run("view", arguments)

    def apply_patch(self, patch: str) -> Result:
        """Apply a patch in the ``apply_patch`` format (``*** Begin Patch``
        …): every file it names, or none."""
        return self._run("apply_patch", {"patch": patch})

    def write_many(self, writes: Sequence[Mapping[str, Any]]) -> Result:
        """Write several files as one change: all of them, or none. Each
        item is ``{"path": …, "content": …}``."""
        return self._run("write_many", {"writes": [dict(w) for w in writes]})

    def revert(self, change_id: Optional[str] = None, force: bool = False) -> Result:
        """Take back a change by its id (``Result.data["change_id"]``), or
        the latest one. Needs the journal."""
        arguments: Dict[str, Any] = {"force": force}
        if change_id:
            arguments["change_id"] = change_id
        return self._run("revert", arguments)

    def definition(self) -> Dict[str, Any]:
        """The write tool's definition (name, description, JSON Schema), to
        hand a model."""
        store, func = self._export("definition")
        return json.loads(func(store))
