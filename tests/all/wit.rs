//! The typed `write` export and `definition`, as a host that links the WIT
//! world sees them.

use serde_json::{Value, json};
use write_tool::{ErrorCode, Operation, TypedStatus};

use crate::support::{Project, tool};

#[test]
fn typed_write_mirrors_the_json_envelope() {
    let p = Project::new();
    p.write("t.txt", "one\n");
    let typed = tool().write(p.root(), "t.txt", "one\ntwo\n", false);
    assert!(matches!(typed.status, TypedStatus::Success));
    let data = typed.data.as_ref().expect("data");
    assert!(data.applied);
    assert!(matches!(data.operation, Operation::Update));
    assert_eq!(
        data.diff_preview,
        "--- a/t.txt\n+++ b/t.txt\n@@ -1 +1,2 @@\n one\n+two\n"
    );
    assert_eq!(typed.text, "Updated 't.txt' (+1/-0 lines, 8 bytes).");
    assert_eq!(typed.stats.bytes_written, Some(8));
    assert_eq!(typed.stats.original_size, Some(4));
    assert_eq!(typed.stats.lines_added, Some(1));
    assert_eq!(typed.context.cwd, ".");
    assert_eq!(typed.context.path_resolved.as_deref(), Some("t.txt"));
    let echo: Value = serde_json::from_str(&typed.context.params_input).unwrap();
    assert_eq!(
        echo,
        json!({"path": "t.txt", "content": "one\ntwo\n", "dry_run": false})
    );
    assert!(typed.error.is_none());
    assert_eq!(p.read_string("t.txt"), "one\ntwo\n");
}

#[test]
fn typed_errors_carry_the_code() {
    let p = Project::new();
    let typed = tool().write(p.root(), "../x", "x", false);
    assert!(matches!(typed.status, TypedStatus::Error));
    assert!(typed.data.is_none());
    assert_eq!(typed.stats.bytes_written, None);
    let error = typed.error.expect("error");
    assert!(matches!(error.code, ErrorCode::AccessDenied));
    assert_eq!(error.message, "Path must be within project root.");
    assert_eq!(typed.text, error.message);
    let dry = tool().write(p.root(), "d.txt", "x", true);
    assert!(matches!(dry.status, TypedStatus::Partial));
    assert!(!p.exists("d.txt"));
}

#[test]
fn definition_is_the_contract_schema_with_the_lock_parameters() {
    let definition: Value = serde_json::from_str(&tool().definition().unwrap()).unwrap();
    assert_eq!(definition["name"], "Write");
    assert!(
        definition["description"]
            .as_str()
            .unwrap()
            .starts_with("Writes a file to the local filesystem.")
    );
    let params = &definition["parameters"];
    assert_eq!(params["type"], "object");
    assert_eq!(params["required"], json!(["path", "content"]));
    let props = params["properties"].as_object().unwrap();
    let names: Vec<&str> = props.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "path",
            "content",
            "dry_run",
            "expected_mtime_ms",
            "expected_size_bytes",
            "expected_sha256",
            "base",
            "create_only",
            "keep_format",
            "report_sha256",
            "encoding"
        ]
    );
    assert_eq!(props["dry_run"]["default"], false);
    assert_eq!(props["expected_mtime_ms"]["type"], "integer");
}
