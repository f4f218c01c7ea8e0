//! UTF-16 text, a piece at a time through `encoding_rs`'s `mem` converters.

/// `bytes` (UTF-16 after its mark) as text; `None` when they are not
/// UTF-16 (an odd length, a lone surrogate).
///
/// A piece at a time through `encoding_rs`'s `mem` converters, whose ASCII
/// path takes a word at a time; its UTF-16 decoder takes a byte at a time.
pub(super) fn decode_utf16(bytes: &[u8], little: bool) -> Option<String> {
    let (pairs, []) = bytes.as_chunks::<2>() else {
        return None;
    };
    let unit = |pair: &[u8; 2]| {
        if little {
            u16::from_le_bytes(*pair)
        } else {
            u16::from_be_bytes(*pair)
        }
    };
    let mut text = String::with_capacity(pairs.len());
    let mut units = [0u16; UTF16_PIECE];
    // Room for a piece at the most UTF-8 bytes a unit makes.
    let mut piece_text = "\0".repeat(3 * UTF16_PIECE);
    let mut rest = pairs;
    while !rest.is_empty() {
        let mut len = rest.len().min(UTF16_PIECE);
        // A surrogate pair is never split between pieces.
        if len < rest.len() && (0xD800..0xDC00).contains(&unit(&rest[len - 1])) {
            len -= 1;
        }
        let (piece, tail) = rest.split_at(len);
        for (unit_slot, pair) in units.iter_mut().zip(piece) {
            *unit_slot = unit(pair);
        }
        let units = &units[..len];
        if encoding_rs::mem::utf16_valid_up_to(units) != len {
            return None;
        }
        let written = encoding_rs::mem::convert_utf16_to_str(units, &mut piece_text);
        text.push_str(&piece_text[..written]);
        rest = tail;
    }
    Some(text)
}

/// Append `text` in UTF-16 to `out`, a piece at a time.
pub(super) fn push_utf16(out: &mut Vec<u8>, text: &str, little: bool) {
    let mut units = [0u16; UTF16_PIECE + 1];
    let mut rest = text;
    while !rest.is_empty() {
        let (piece, tail) = rest.split_at(rest.floor_char_boundary(UTF16_PIECE));
        let len = encoding_rs::mem::convert_str_to_utf16(piece, &mut units);
        push_units(out, &units[..len], little);
        rest = tail;
    }
}

/// Append `units` to `out` in little- or big-endian order.
pub(super) fn push_units(out: &mut Vec<u8>, units: &[u16], little: bool) {
    let start = out.len();
    out.resize(start + 2 * units.len(), 0);
    let pairs = out[start..].chunks_exact_mut(2).zip(units);
    // One loop per order, so that each compiles to plain stores.
    if little {
        pairs.for_each(|(pair, unit)| pair.copy_from_slice(&unit.to_le_bytes()));
    } else {
        pairs.for_each(|(pair, unit)| pair.copy_from_slice(&unit.to_be_bytes()));
    }
}

/// How many bytes of text [`encode`] converts to UTF-16 at a time.
const UTF16_PIECE: usize = 4096;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::detect::decode;
    use crate::format::*;
    use encoding_rs::{UTF_16BE, UTF_16LE};

    #[test]
    fn utf16_round_trips_with_its_bom() {
        for encoding in [TextEncoding::Utf16Le, TextEncoding::Utf16Be] {
            let bytes = encode("h\u{e9}llo \u{1F600}\r\n", encoding).unwrap();
            let decoded = decode(&bytes);
            assert_eq!(decoded.encoding, Some(encoding));
            assert_eq!(decoded.text, "h\u{e9}llo \u{1F600}\r\n");
        }
        assert_eq!(
            encode("A", TextEncoding::Utf16Le).unwrap(),
            &b"\xFF\xFEA\x00"[..]
        );
        assert_eq!(
            encode("A", TextEncoding::Utf16Be).unwrap(),
            &b"\xFE\xFF\x00A"[..]
        );
    }

    #[test]
    fn long_utf16_matches_std_across_pieces() {
        // Characters of every UTF-8 length, so that some straddle the
        // pieces the encoder converts at a time.
        let text = "ab\u{e9}\u{20ac}\u{1F600}\n".repeat(3 * UTF16_PIECE / 7);
        let units = std::iter::once(0xFEFF).chain(text.encode_utf16());
        let le: Vec<u8> = units.clone().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = units.flat_map(u16::to_be_bytes).collect();
        assert_eq!(encode(&text, TextEncoding::Utf16Le).unwrap(), &le[..]);
        assert_eq!(encode(&text, TextEncoding::Utf16Be).unwrap(), &be[..]);
    }

    #[test]
    fn utf16_decodes_as_encoding_rs_does_across_pieces() {
        // A surrogate pair at every position around the pieces' boundary,
        // in both byte orders, against encoding_rs's own decoder.
        for before in UTF16_PIECE - 3..UTF16_PIECE + 2 {
            let text = format!("{}\u{1F600}é\n", "a".repeat(before));
            for (encoding, codec) in [
                (TextEncoding::Utf16Le, UTF_16LE),
                (TextEncoding::Utf16Be, UTF_16BE),
            ] {
                let bytes = encode(&text, encoding).unwrap();
                let little = encoding == TextEncoding::Utf16Le;
                let expected = codec
                    .decode_without_bom_handling_and_without_replacement(&bytes[2..])
                    .unwrap();
                assert_eq!(decode_utf16(&bytes[2..], little).unwrap(), expected);
            }
        }
        // Not UTF-16: an odd length, a lone high or low surrogate anywhere.
        assert_eq!(decode_utf16(b"a\0b", true), None);
        for units in [
            &[0x61, 0xD83D][..],
            &[0xD83D, 0x61],
            &[0xDE00, 0x61],
            &[0x61, 0xDE00],
        ] {
            let mut bytes: Vec<u8> = units.iter().flat_map(|u: &u16| u.to_le_bytes()).collect();
            assert_eq!(decode_utf16(&bytes, true), None, "{units:x?}");
            // The same past the first piece.
            bytes.splice(
                0..0,
                "a".repeat(UTF16_PIECE)
                    .encode_utf16()
                    .flat_map(u16::to_le_bytes),
            );
            assert_eq!(decode_utf16(&bytes, true), None, "{units:x?} after a piece");
        }
        let mut bytes = vec![0xFF, 0xFE];
        bytes.extend(
            "a".repeat(UTF16_PIECE - 1)
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        );
        bytes.extend(0xD83D_u16.to_le_bytes());
        assert!(
            decode(&bytes).encoding.is_none(),
            "a lone surrogate at the end"
        );
    }
}
