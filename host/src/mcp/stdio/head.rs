//! The `id` and `method` of a line the transport cannot hand to rmcp (cut
//! short, nested too deep, not a message), so that it can still be
//! answered by its id.

use std::fmt;

use rmcp::model::RequestId;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};

/// A request's `id` and `method`, read field by field so that whatever
/// came before an error (a line cut short, `params` nested past serde_json's
/// limit) is still known. Other fields are skipped without recursion.
#[derive(Default)]
pub(super) struct Head {
    pub(super) id: Option<RequestId>,
    pub(super) method: Option<String>,
}

impl Head {
    pub(super) fn of(line: &[u8]) -> Head {
        let mut head = Head::default();
        let mut json = serde_json::Deserializer::from_slice(line);
        // An error only ends the reading; the fields read before it stay.
        let _ = HeadFields(&mut head).deserialize(&mut json);
        head
    }
}

struct HeadFields<'a>(&'a mut Head);

impl<'de> DeserializeSeed<'de> for HeadFields<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, json: D) -> Result<(), D::Error> {
        json.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for HeadFields<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut fields: A) -> Result<(), A::Error> {
        while let Some(key) = fields.next_key::<String>()? {
            match key.as_str() {
                "id" => self.0.id = Some(fields.next_value()?),
                "method" => self.0.method = Some(fields.next_value()?),
                _ => {
                    fields.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Head;
    use rmcp::model::NumberOrString;

    #[test]
    fn the_head_is_read_from_a_line_cut_short_or_nested_too_deep() {
        let cut = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"content":"abc"#;
        let head = Head::of(cut);
        assert_eq!(head.id, Some(NumberOrString::Number(7)));
        assert_eq!(head.method.as_deref(), Some("tools/call"));

        let deep = format!(
            r#"{{"jsonrpc":"2.0","method":"initialize","params":{}1{},"id":"x"}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let head = Head::of(deep.as_bytes());
        assert_eq!(head.id, Some(NumberOrString::String("x".into())));
        assert_eq!(head.method.as_deref(), Some("initialize"));

        assert!(Head::of(b"not json").id.is_none());
        assert!(
            Head::of(br#"{"method":"notifications/x","params":{"#)
                .id
                .is_none()
        );
    }
}
