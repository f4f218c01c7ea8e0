//! The envelope in its WIT forms (`wit/write-tool.wit`, records `envelope`
//! and `view-envelope`): the same information as the JSON one, field for
//! field.
//!
//! The component (wit-bindgen) and the wasmtime host (wasmtime's bindgen)
//! each generate their own Rust types for the WIT record, with the same
//! names. [`envelope_into_wit!`](crate::envelope_into_wit) writes the one
//! conversion for either.

/// `impl From<write_tool_wire::Envelope> for $wit::Envelope` (and for
/// `$wit::ViewEnvelope`), where `$wit`
/// is the module that bindings generated for the WIT interface `tool`.
#[macro_export]
macro_rules! envelope_into_wit {
    ($wit:path) => {
        const _: () = {
            use $crate::{ErrorCode, Operation, Status, WarningKind};
            use $wit as wit;

            fn operation(op: Operation) -> wit::Operation {
                match op {
                    Operation::Create => wit::Operation::Create,
                    Operation::Update => wit::Operation::Update,
                    Operation::Delete => wit::Operation::Delete,
                    Operation::Many => wit::Operation::Many,
                    // A view answers in its own record (below); of the
                    // enum's cases, a checkpoint is the one that likewise
                    // changes no file.
                    Operation::Checkpoint | Operation::View => wit::Operation::Checkpoint,
                }
            }

            fn lock(lock: $crate::LockValues) -> wit::LockValues {
                wit::LockValues {
                    expected_mtime_ms: lock.expected_mtime_ms,
                    expected_size_bytes: lock.expected_size_bytes,
                    expected_sha256: lock.expected_sha256,
                }
            }

            fn status(status: Status) -> wit::Status {
                match status {
                    Status::Success => wit::Status::Success,
                    Status::Partial => wit::Status::Partial,
                    Status::Error => wit::Status::Error,
                }
            }

            fn error(e: $crate::envelope::ErrorBody) -> wit::ErrorInfo {
                wit::ErrorInfo {
                    code: match e.code {
                        ErrorCode::InvalidParam => wit::ErrorCode::InvalidParam,
                        ErrorCode::AccessDenied => wit::ErrorCode::AccessDenied,
                        ErrorCode::PermissionDenied => wit::ErrorCode::PermissionDenied,
                        ErrorCode::IsDirectory => wit::ErrorCode::IsDirectory,
                        ErrorCode::Conflict => wit::ErrorCode::Conflict,
                        // `ErrorCode` may gain codes; a WIT enum
                        // cannot grow without a new interface version.
                        _ => wit::ErrorCode::ExecutionError,
                    },
                    message: e.message,
                }
            }

            impl ::core::convert::From<$crate::Envelope> for wit::ViewEnvelope {
                fn from(env: $crate::Envelope) -> Self {
                    let view = env.data.and_then(|data| {
                        let view = data.view?;
                        let [first_line, last_line] = view.lines.unwrap_or([0, 0]);
                        Some(wit::ViewData {
                            kind: match view.kind {
                                $crate::ViewKind::File => wit::ViewKind::File,
                                $crate::ViewKind::Directory => wit::ViewKind::Directory,
                                $crate::ViewKind::Binary => wit::ViewKind::Binary,
                            },
                            first_line,
                            last_line,
                            total: view.total,
                            next_line: view.next_line,
                            encoding: data.encoding,
                            bom: data.bom,
                            line_endings: data.line_endings,
                            lock: data.lock.map(lock),
                            base: view.base,
                        })
                    });
                    wit::ViewEnvelope {
                        status: status(env.status),
                        view,
                        text: env.text,
                        time_ms: env.stats.time_ms,
                        path_resolved: env.context.path_resolved,
                        error: env.error.map(error),
                    }
                }
            }

            impl ::core::convert::From<$crate::Envelope> for wit::Envelope {
                fn from(env: $crate::Envelope) -> Self {
                    let write = env.stats.write;
                    wit::Envelope {
                        status: status(env.status),
                        data: env.data.map(|data| wit::Data {
                            applied: data.applied,
                            operation: operation(data.operation),
                            diff_preview: data.diff_preview,
                            diff_truncated: data.diff_truncated,
                            encoding: data.encoding,
                            bom: data.bom,
                            line_endings: data.line_endings,
                            lock: data.lock.map(lock),
                            warnings: data
                                .warnings
                                .into_iter()
                                .map(|w| wit::Warning {
                                    kind: match w.kind {
                                        WarningKind::OmissionPlaceholder => {
                                            wit::WarningKind::OmissionPlaceholder
                                        }
                                    },
                                    line: w.line,
                                    text: w.text,
                                })
                                .collect(),
                            change_id: data.change_id,
                            files: data
                                .files
                                .into_iter()
                                .map(|f| wit::FileResult {
                                    path: f.path,
                                    operation: operation(f.operation),
                                    bytes_written: f.bytes_written,
                                    lines_added: f.lines_added,
                                    lines_removed: f.lines_removed,
                                })
                                .collect(),
                            edits: data
                                .edits
                                .into_iter()
                                .map(|e| wit::EditMatch {
                                    tolerance: e.tolerance,
                                    lines: e.lines,
                                })
                                .collect(),
                        }),
                        text: env.text,
                        stats: wit::Stats {
                            time_ms: env.stats.time_ms,
                            bytes_written: write.map(|w| w.bytes_written),
                            original_size: write.map(|w| w.original_size),
                            new_size: write.map(|w| w.new_size),
                            lines_added: write.map(|w| w.lines_added),
                            lines_removed: write.map(|w| w.lines_removed),
                        },
                        context: wit::Context {
                            cwd: env.context.cwd,
                            params_input: env.context.params_input.to_string(),
                            path_resolved: env.context.path_resolved,
                        },
                        error: env.error.map(error),
                    }
                }
            }
        };
    };
}
