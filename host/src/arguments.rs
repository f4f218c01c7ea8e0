//! The host's look at a call's arguments before the guest runs: only the
//! `path`, which it needs to put a replaced file's permission bits back.
//! The guest validates the arguments in full; nothing here decides whether
//! a call is valid.

/// The `path` argument of raw call input, read without materialising the
/// content (which can be many MiB): other fields are skipped, not built, and
/// reading stops as soon as `path` is found (agents usually send it first).
pub(crate) fn path_argument(arguments: &str) -> Option<String> {
    use serde::de::{Deserializer as _, IgnoredAny, MapAccess, Visitor};
    use serde_json::value::RawValue;

    /// What the scan found.
    enum Found<'a> {
        Path(String),
        Arguments(&'a RawValue),
    }

    /// Stops the parse (with an error) as soon as `path` is read; what was
    /// found goes into the slot, since the parse itself reports failure.
    struct Scan<'s, 'de>(&'s mut Option<Found<'de>>);

    impl<'de> Visitor<'de> for Scan<'_, 'de> {
        type Value = ();

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                match key.as_ref() {
                    "path" => {
                        *self.0 = Some(Found::Path(map.next_value()?));
                        return Err(serde::de::Error::custom("found"));
                    }
                    // A tool call's arguments, or a `tool_calls` item's
                    // function (whose own arguments hold the path).
                    "arguments" | "function" => {
                        *self.0 = Some(Found::Arguments(map.next_value()?));
                    }
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(())
        }
    }

    let mut found = None;
    let mut de = serde_json::Deserializer::from_str(arguments);
    // The result only says whether the scan stopped early; the slot says
    // what it saw. The guest validates the input in full anyway.
    let _ = (&mut de).deserialize_map(Scan(&mut found));
    match found? {
        Found::Path(path) => Some(path),
        Found::Arguments(raw) => {
            let inner = raw.get();
            if inner.starts_with('"') {
                let text: String = serde_json::from_str(inner).ok()?;
                path_argument(&text)
            } else {
                path_argument(inner)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_argument_forms() {
        assert_eq!(
            path_argument(r#"{"content":"x","path":"a/b"}"#).as_deref(),
            Some("a/b")
        );
        assert_eq!(
            path_argument(r#"{"name":"Write","arguments":{"path":"c","content":"x"}}"#).as_deref(),
            Some("c")
        );
        assert_eq!(
            path_argument(r#"{"name":"Write","arguments":"{\"path\":\"d\"}"}"#).as_deref(),
            Some("d")
        );
        assert_eq!(
            path_argument(
                r#"{"type":"function","function":{"name":"Write","arguments":"{\"path\":\"e\"}"}}"#
            )
            .as_deref(),
            Some("e")
        );
        assert_eq!(path_argument("not json"), None);
    }
}
