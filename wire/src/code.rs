//! Stable error codes (`docs/contract.md#errors`).

use std::fmt;

use serde::{Deserialize, Serialize};

/// The envelope's `error.code`. The strings are part of the contract: agents
/// and programs match on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum ErrorCode {
    /// A parameter is missing, of the wrong type or malformed.
    InvalidParam,
    /// The path leads outside the root, through an outward link, into a link
    /// loop, to a protected place, or to a file that is not a regular file.
    AccessDenied,
    /// The operating system refused the operation.
    PermissionDenied,
    /// The target is a directory.
    IsDirectory,
    /// An optimistic-lock parameter did not match the file on disk.
    Conflict,
    /// Disk full, quota, I/O error, or the host stopped the call.
    ExecutionError,
}

impl ErrorCode {
    /// Every code, in the order the contract lists them.
    pub const ALL: [ErrorCode; 6] = [
        ErrorCode::InvalidParam,
        ErrorCode::AccessDenied,
        ErrorCode::PermissionDenied,
        ErrorCode::IsDirectory,
        ErrorCode::Conflict,
        ErrorCode::ExecutionError,
    ];

    /// The code as it appears on the wire, e.g. `"INVALID_PARAM"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidParam => "INVALID_PARAM",
            ErrorCode::AccessDenied => "ACCESS_DENIED",
            ErrorCode::PermissionDenied => "PERMISSION_DENIED",
            ErrorCode::IsDirectory => "IS_DIRECTORY",
            ErrorCode::Conflict => "CONFLICT",
            ErrorCode::ExecutionError => "EXECUTION_ERROR",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_uses_the_wire_strings() {
        for code in ErrorCode::ALL {
            let json = serde_json::to_string(&code).expect("serialise");
            assert_eq!(json, format!("\"{}\"", code.as_str()));
            let back: ErrorCode = serde_json::from_str(&json).expect("deserialise");
            assert_eq!(back, code);
        }
    }
}
