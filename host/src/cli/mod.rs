//! The `write-tool` command line: flags, inputs, outputs, and one function
//! per command.

pub(crate) mod commands;
pub(crate) mod flags;
pub(crate) mod input;
pub(crate) mod journal;
pub(crate) mod output;
pub(crate) mod serving;
pub(crate) mod subcommands;
