//! Messages a host may recognise in an envelope, to add what only it
//! knows (the CLI names its own flag for a host option).

/// The `INVALID_PARAM` message for empty content when the host does not
/// allow it.
pub const EMPTY_CONTENT: &str = "Content cannot be empty.";
