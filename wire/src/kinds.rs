//! The request kinds the tool takes, listed once (`docs/contract.md#requests`):
//! each kind's names, the shape by which its arguments alone are known as
//! it, and how a host offers it to a model. The component reads this list
//! to tell a call's kind; the host reads it for the MCP tool list's
//! annotations and for the tools handed to a model's API.
//!
//! A kind's shape is declared, not found by the order of a ladder of
//! checks: no two kinds claim the same set of keys (the tests try every
//! set of the keys that tell kinds apart), and arguments that no kind
//! claims are a `Write`'s.

use serde_json::{Map, Value};

/// What a request does. Each has one module in the component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// Write one file whole.
    Write,
    /// Edit one existing file: old text replaced, or lines inserted.
    Edit,
    /// A patch of several files.
    Patch,
    /// Write several files, all or none.
    WriteMany,
    /// Undo a change, or every change since a checkpoint.
    Revert,
    /// Mark a point to revert to.
    Checkpoint,
    /// Show a file or directory, changing nothing.
    View,
    /// Add text at the end of a file, creating it.
    Append,
    /// A command of Anthropic's text editor tool.
    TextEditor,
    /// The host's own looks at the journal: history, verify, gc.
    Journal,
}

/// One name a kind answers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Name {
    /// The name as a call spells it.
    pub name: &'static str,
    /// The title an MCP server lists it under; `None` for a name it does
    /// not list (a second name a model knows, a host's own request).
    pub title: Option<&'static str>,
    /// Handed to a model's API among the tool definitions
    /// (`schema --provider`): the names a model is offered once each.
    pub handed: bool,
}

/// How a kind is offered: the MCP annotations of every name it lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    /// It changes nothing.
    pub read_only: bool,
    /// It may replace or remove what is there.
    pub destructive: bool,
    /// The same call twice does what it did once.
    pub idempotent: bool,
}

/// One way a kind's arguments alone are recognised: every key in `has`
/// present and none of `lacks`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clause {
    /// Keys that must be present.
    pub has: &'static [&'static str],
    /// Keys that must be absent.
    pub lacks: &'static [&'static str],
}

/// A request kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    /// What it does.
    pub op: Op,
    /// The names a call may carry, its own first.
    pub names: &'static [Name],
    /// The arguments alone are this kind when any clause holds; a kind
    /// with none is only ever called by name.
    pub shape: &'static [Clause],
    /// How it is offered.
    pub hints: Hints,
}

impl Kind {
    /// The kind's own name.
    pub fn name(&self) -> &'static str {
        self.names[0].name
    }

    /// Whether arguments with `has` keys are this kind by shape.
    pub fn claims(&self, has: impl Fn(&str) -> bool) -> bool {
        self.shape
            .iter()
            .any(|c| c.has.iter().all(|k| has(k)) && !c.lacks.iter().any(|k| has(k)))
    }
}

const fn name(name: &'static str, title: &'static str, handed: bool) -> Name {
    Name {
        name,
        title: Some(title),
        handed,
    }
}

const fn unlisted(name: &'static str) -> Name {
    Name {
        name,
        title: None,
        handed: false,
    }
}

const fn clause(has: &'static [&'static str], lacks: &'static [&'static str]) -> Clause {
    Clause { has, lacks }
}

/// What a tool that changes files in the root says of itself.
const CHANGES: Hints = Hints {
    read_only: false,
    destructive: true,
    idempotent: false,
};

/// Every kind, in the order the tool's lists name them (the tools a
/// model's API is handed among them).
pub const KINDS: &[Kind] = &[
    Kind {
        op: Op::Write,
        names: &[
            name("Write", "Write file", true),
            name("write_file", "Write file (write_file)", false),
        ],
        // What no other kind claims.
        shape: &[],
        hints: Hints {
            idempotent: true,
            ..CHANGES
        },
    },
    Kind {
        op: Op::Edit,
        names: &[
            name("Edit", "Edit file", true),
            unlisted("MultiEdit"),
            name("edit_file", "Edit file (edit_file)", false),
        ],
        shape: &[
            clause(&["edits"], &["patch", "journal", "command"]),
            clause(&["edits", "content"], &["patch", "journal"]),
            clause(&["old_string"], &["patch", "journal", "command"]),
            clause(&["old_string", "content"], &["patch", "journal"]),
        ],
        hints: CHANGES,
    },
    Kind {
        op: Op::Patch,
        names: &[name("apply_patch", "Apply a patch", false)],
        shape: &[
            clause(&["patch"], &["journal", "command"]),
            clause(&["patch", "content"], &["journal"]),
        ],
        hints: CHANGES,
    },
    Kind {
        op: Op::View,
        names: &[
            name("view", "View a file or directory", true),
            unlisted("Read"),
        ],
        shape: &[clause(&["view_range"], VIEW_LACKS)],
        // Plan modes and read-only approval modes admit exactly the tools
        // that say this (`docs/contract.md#view`).
        hints: Hints {
            read_only: true,
            destructive: false,
            idempotent: true,
        },
    },
    Kind {
        op: Op::WriteMany,
        names: &[name("write_many", "Write several files", true)],
        shape: &[
            clause(
                &["writes"],
                &["old_string", "edits", "patch", "journal", "command"],
            ),
            clause(
                &["writes", "content"],
                &["old_string", "edits", "patch", "journal"],
            ),
        ],
        hints: Hints {
            idempotent: true,
            ..CHANGES
        },
    },
    Kind {
        op: Op::Revert,
        names: &[name("revert", "Undo a change", true)],
        shape: &[
            clause(&["change_id"], REVERT_LACKS),
            clause(&["to"], REVERT_LACKS),
        ],
        hints: CHANGES,
    },
    Kind {
        op: Op::Checkpoint,
        names: &[name("checkpoint", "Set a checkpoint", true)],
        shape: &[clause(&["checkpoint"], CHECKPOINT_LACKS)],
        hints: Hints {
            destructive: false,
            ..CHANGES
        },
    },
    Kind {
        op: Op::Append,
        names: &[
            name("append", "Append to a file", true),
            unlisted("append_file"),
        ],
        // Its arguments are a write's: only its name tells it apart.
        shape: &[],
        // What was there stays, and a second call adds the text again.
        hints: Hints {
            destructive: false,
            ..CHANGES
        },
    },
    Kind {
        op: Op::TextEditor,
        names: &[
            unlisted("str_replace_based_edit_tool"),
            unlisted("str_replace_editor"),
        ],
        // Known by its `command`, unless the call also carries a `content`,
        // which makes it a write: every kind before the revert holds
        // either without a `command` or with a `content`.
        shape: &[clause(&["command"], &["content"])],
        hints: CHANGES,
    },
    Kind {
        op: Op::Journal,
        names: &[unlisted("journal")],
        shape: &[
            clause(&["journal"], &["command"]),
            clause(&["journal", "content"], &[]),
        ],
        hints: Hints {
            destructive: false,
            ..CHANGES
        },
    },
];

/// What the journal's kinds and a view must lack, in one list read by
/// its heads: a revert, a checkpoint and a view are never called with
/// `content`, nor with the keys of the kinds that change files (the first
/// seven); a checkpoint not with a revert's keys either (nine), a view not
/// with a checkpoint's (all ten).
const LACKS: [&str; 10] = [
    "content",
    "command",
    "writes",
    "old_string",
    "edits",
    "patch",
    "journal",
    "change_id",
    "to",
    "checkpoint",
];
const REVERT_LACKS: &[&str] = LACKS.split_at(7).0;
const CHECKPOINT_LACKS: &[&str] = LACKS.split_at(9).0;
const VIEW_LACKS: &[&str] = &LACKS;

/// The kind a call's `name` names, if any.
pub fn named(name: &str) -> Option<&'static Kind> {
    KINDS
        .iter()
        .find(|kind| kind.names.iter().any(|n| n.name == name))
}

/// The kind arguments without a name are, by their keys: the one kind
/// whose shape claims them, or `Write`.
pub fn recognise(args: &Map<String, Value>) -> &'static Kind {
    KINDS
        .iter()
        .find(|kind| kind.claims(|key| args.contains_key(key)))
        .unwrap_or(&KINDS[0])
}

/// The kind that does `op`.
pub fn of(op: Op) -> &'static Kind {
    KINDS.iter().find(|kind| kind.op == op).unwrap_or(&KINDS[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key some shape names.
    fn keys() -> Vec<&'static str> {
        let mut keys: Vec<&str> = KINDS
            .iter()
            .flat_map(|k| k.shape.iter())
            .flat_map(|c| c.has.iter().chain(c.lacks))
            .copied()
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// Every set of those keys, as the predicate "this key is present".
    fn every_set() -> impl Iterator<Item = Vec<&'static str>> {
        let keys = keys();
        (0u32..1 << keys.len()).map(move |bits| {
            keys.iter()
                .enumerate()
                .filter(|(i, _)| bits & (1 << i) != 0)
                .map(|(_, k)| *k)
                .collect()
        })
    }

    #[test]
    fn no_two_kinds_claim_the_same_keys() {
        assert!(keys().len() >= 11, "{:?}", keys());
        for set in every_set() {
            let claiming: Vec<&str> = KINDS
                .iter()
                .filter(|kind| kind.claims(|key| set.contains(&key)))
                .map(Kind::name)
                .collect();
            assert!(claiming.len() <= 1, "{set:?} is claimed by {claiming:?}");
        }
    }

    /// The order-sensitive checks the shapes replaced: what they told
    /// every set of keys, the shapes still tell it.
    fn ladder(has: impl Fn(&str) -> bool) -> &'static str {
        if has("command") && !has("content") {
            "str_replace_based_edit_tool"
        } else if has("journal") {
            "journal"
        } else if has("patch") {
            "apply_patch"
        } else if has("edits") || has("old_string") {
            // `MultiEdit` and `Edit`, which read the same.
            "Edit"
        } else if has("writes") {
            "write_many"
        } else if (has("change_id") || has("to")) && !has("content") {
            "revert"
        } else if has("checkpoint") && !has("content") {
            "checkpoint"
        } else if has("view_range") && !has("content") {
            "view"
        } else {
            "Write"
        }
    }

    #[test]
    fn the_shapes_tell_every_set_of_keys_what_the_ladder_told() {
        for set in every_set() {
            let args: Map<String, Value> =
                set.iter().map(|k| ((*k).to_owned(), Value::Null)).collect();
            assert_eq!(
                recognise(&args).name(),
                ladder(|key| set.contains(&key)),
                "{set:?}"
            );
        }
    }

    #[test]
    fn every_name_is_one_kinds_and_every_op_has_one_kind() {
        let mut names: Vec<&str> = KINDS
            .iter()
            .flat_map(|k| k.names.iter().map(|n| n.name))
            .collect();
        let all = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all, "a name given twice");
        for kind in KINDS {
            assert_eq!(of(kind.op), kind);
            assert_eq!(named(kind.name()), Some(kind));
        }
        assert_eq!(named("Delete"), None);
        assert_eq!(of(Op::Write).name(), "Write");
    }
}
