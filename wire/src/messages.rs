//! Messages a host may recognise in an envelope, to add what only it
//! knows (the CLI names its own flag for a host option).

/// The `INVALID_PARAM` message for empty content when the host does not
/// allow it.
pub const EMPTY_CONTENT: &str =
    "Content is empty; this tool does not write empty files (a host setting). Nothing was written.";

/// What the `INVALID_PARAM` message for content over the host's limit
/// says of it: "Content is N bytes, over this tool's content limit of M
/// bytes (a host setting); nothing was written."
pub const CONTENT_OVER_LIMIT: &str = "over this tool's content limit";

/// How the component's message begins when the host's settings
/// (`crate::settings`) are not usable; the rest says which and why.
pub const INVALID_SETTINGS: &str = "The host's settings are invalid: ";

/// The `EXECUTION_ERROR` message for a call that its client cancelled
/// before its commit point (`docs/contract.md#cancellation`).
pub const CANCELLED: &str = "The call was cancelled before its commit point; nothing was written.";

/// How a `view` of a path where nothing is begins its message after the
/// quoted path: "'a/b.txt' does not exist. …" (the file API answers it
/// 404).
pub const NOTHING_THERE: &str = "' does not exist. ";
