//! What the Write tool's component and its hosts agree on.
//!
//! The component (`write-tool-guest`, built from `write-tool-core`) answers
//! every call with an [`Envelope`]; the wasmtime host (`write-tool`) reads
//! that envelope back, makes its own when the component could not answer,
//! and looks at tool-call arguments before the call. Everything both sides
//! must read and write the same way lives here, once:
//!
//! - [`envelope`]: the envelope types, with their JSON form;
//! - [`ErrorCode`]: the stable error codes and their strings;
//! - [`echo`]: how arguments are echoed in `params_input`;
//! - [`request`]: which shapes of request are a tool call;
//! - [`kinds`]: the request kinds, their names and shapes, listed once;
//! - [`roots`]: how an absolute path is matched against a root's names;
//! - [`defaults`]: the limits a host gets when it sets none;
//! - [`settings`]: the host's settings, as environment variables;
//! - [`strict`]: JSON read without duplicate keys or trailing data;
//! - [`temps`]: the names of the component's temp files;
//! - [`messages`]: messages a host may recognise;
//! - [`printable`]: characters a terminal would act on, and their escapes;
//! - [`wit`]: the envelope's conversion into its WIT form;
//! - `schema` (feature `schema`): the envelope's JSON Schema, generated
//!   from the types that read it.
//!
//! The crate knows serde (and, for `schema`, schemars) and nothing else: no file system, no diff, no
//! parsing of the tool's parameters. The rules themselves are written down
//! in `docs/contract.md`.

#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod defaults;
pub mod echo;
pub mod envelope;
pub mod kinds;
pub mod messages;
pub mod printable;
pub mod request;
pub mod roots;
#[cfg(feature = "schema")]
pub mod schema;
pub mod settings;
pub mod strict;
pub mod temps;
pub mod wit;

mod code;
mod compact;

pub use code::ErrorCode;
pub use envelope::{
    Envelope, Form, LockValues, Operation, Status, View, ViewKind, Warning, WarningKind,
};
