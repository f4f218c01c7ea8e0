//! Messages a host may recognise in an envelope, to add what only it
//! knows (the CLI names its own flag for a host option).

/// The `INVALID_PARAM` message for empty content when the host does not
/// allow it.
pub const EMPTY_CONTENT: &str = "Content cannot be empty.";

/// How the component's message begins when the host's settings
/// (`crate::settings`) are not usable; the rest says which and why.
pub const INVALID_SETTINGS: &str = "The host's settings are invalid: ";
