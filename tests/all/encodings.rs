//! Every encoding the detector can return, and x-mac-cyrillic, which it
//! cannot: a short and a long file in each, in its own script, written
//! back unchanged and with one line edited (`docs/contract.md#format`).
//!
//! A write either puts exactly the right bytes on disk (the file's own
//! encoding, or one that writes its text the same; the lines left alone
//! byte for byte) or is refused with
//! `INVALID_PARAM` naming the file's encoding among the candidates, and
//! changes nothing; the same write then names it with `encoding` and
//! succeeds. It never writes in a wrong encoding.

use encoding_rs::Encoding;
use serde_json::json;

use crate::support::Project;

/// A sentence in each script, and the encodings that hold it.
fn scripts() -> Vec<(&'static str, Vec<&'static Encoding>)> {
    use encoding_rs::*;
    vec![
        (
            "Le café où nous étions était fermé; à bientôt, Grüße aus Köln.",
            vec![WINDOWS_1252],
        ),
        (
            "Příliš žluťoučký kůň úpěl ďábelské ódy; zażółć gęślą jaźń.",
            vec![WINDOWS_1250, ISO_8859_2],
        ),
        (
            "Съешь же ещё этих мягких французских булок, да выпей чаю.",
            vec![WINDOWS_1251, KOI8_U, IBM866, ISO_8859_5, X_MAC_CYRILLIC],
        ),
        (
            "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία των ανθρώπων.",
            vec![WINDOWS_1253, ISO_8859_7],
        ),
        (
            "Pijamalı hasta yağız şoföre çabucak güvendi.",
            vec![WINDOWS_1254],
        ),
        (
            "דג סקרן שט בים מאוכזב ולפתע מצא חברה",
            vec![WINDOWS_1255, ISO_8859_8],
        ),
        (
            "نص حكيم له سر قاطع وذو شأن عظيم مكتوب على ثوب أخضر",
            vec![WINDOWS_1256, ISO_8859_6],
        ),
        (
            "Įlinkdama fechtuotojo špaga sublykčiojusi pragręžė apvalų arbūzą.",
            vec![WINDOWS_1257, ISO_8859_13, ISO_8859_4],
        ),
        (
            // windows-1258 writes Vietnamese with combining tone marks.
            "Tiê\u{301}ng Viê\u{323}t co\u{301} dâ\u{301}u râ\u{301}t đe\u{323}p.",
            vec![WINDOWS_1258],
        ),
        (
            "เป็นมนุษย์สุดประเสริฐเลิศคุณค่า กว่าบรรดาฝูงสัตว์เดรัจฉาน",
            vec![WINDOWS_874],
        ),
        (
            "日本語の文章です。いろはにほへと、ちりぬるを。",
            vec![SHIFT_JIS, EUC_JP, ISO_2022_JP],
        ),
        ("数据处理和分析，我们的工作。", vec![GBK]),
        ("資料處理與分析，我們的工作。", vec![BIG5]),
        ("다람쥐 헌 쳇바퀴에 타고파.", vec![EUC_KR]),
    ]
}

/// A short file (three lines, one with the script) and a long one (code
/// with the script in many comments), each with its text after one line
/// is edited: an ASCII line in the short one, a line of the script in the
/// long one.
fn texts(sentence: &str) -> [(String, String); 2] {
    let short = format!("// {sentence}\nlet x = 1;\nlet y = 2;\n");
    let short_edited = format!("// {sentence}\nlet x = 10;\nlet y = 2;\n");
    let mut long = String::new();
    for i in 0..200 {
        long.push_str(&format!("fn step_{i}() -> u32 {{ {i} }}\n"));
        if i % 10 == 0 {
            long.push_str(&format!("// {i}: {sentence}\n"));
        }
    }
    let long_edited = long.replacen(
        &format!("// 100: {sentence}\n"),
        &format!("// 100: {sentence} {sentence}\n"),
        1,
    );
    assert_ne!(long, long_edited);
    [(short, short_edited), (long, long_edited)]
}

fn encoded(text: &str, encoding: &'static Encoding) -> Vec<u8> {
    let (bytes, _, unmappable) = encoding.encode(text);
    assert!(!unmappable, "{text:?} in {}", encoding.name());
    bytes.into_owned()
}

#[test]
fn every_encoding_is_kept_or_refused_never_guessed_wrong() {
    let p = Project::new();
    let (mut written, mut refused, mut cases) = (0, 0, 0);
    for (sentence, encodings) in scripts() {
        for &encoding in &encodings {
            let name = encoding.name().to_ascii_lowercase();
            for (n, (old, new)) in texts(sentence).into_iter().enumerate() {
                for content in [&old, &new] {
                    cases += 1;
                    let file = format!("{name}-{n}.txt");
                    let old_bytes = encoded(&old, encoding);
                    p.write(&file, &old_bytes);
                    let env = p.call(json!({"path": file, "content": content}));
                    let want = encoded(content, encoding);
                    match env.code() {
                        None => {
                            written += 1;
                            assert_eq!(
                                p.read(&file),
                                want,
                                "{name} {n}: {}\n{}",
                                env.text,
                                content
                            );
                            // Where two encodings agree on every character
                            // of the file (ISO-8859-7 and windows-1253 on
                            // plain Greek), either may be named: the bytes
                            // are the same.
                            let reported = Encoding::for_label(env.data().encoding.as_bytes())
                                .expect("a WHATWG name");
                            assert_eq!(encoded(content, reported), want, "{}", env.text);
                        }
                        Some("INVALID_PARAM") => {
                            refused += 1;
                            assert!(
                                env.text.contains("encoding is uncertain")
                                    && env.text.contains(&name),
                                "{name} {n}: {}",
                                env.text
                            );
                            assert_eq!(p.read(&file), old_bytes, "a refusal changes nothing");
                            let env =
                                p.call(json!({"path": file, "content": content, "encoding": name}));
                            env.assert_status("success");
                            assert_eq!(p.read(&file), want, "{name} {n}, named");
                        }
                        Some(other) => panic!("{name} {n}: {other}: {}", env.text),
                    }
                }
            }
        }
    }
    eprintln!("{cases} writes: {written} settled without help, {refused} refused and then named");
    assert!(
        written * 4 >= cases * 3,
        "{written} of {cases} writes settled without help ({refused} refused)"
    );
}

#[test]
fn a_file_the_content_cannot_settle_is_refused_with_its_candidates() {
    // One line of Russian, rewritten: nothing of the old text is left to
    // tell windows-1251 from the other Cyrillic encodings, and two words
    // are too few for the detector to be sure.
    let p = Project::new();
    let old = encoded("// Привет\nx = 1\n", encoding_rs::WINDOWS_1251);
    p.write("ru.txt", &old);
    let env = p.call(json!({"path": "ru.txt", "content": "// Пока\nx = 1\n"}));
    env.assert_error("INVALID_PARAM");
    assert!(env.text.contains("windows-1251"), "{}", env.text);
    assert!(env.text.contains("encoding"), "{}", env.text);
    assert_eq!(p.read("ru.txt"), old);
    // Named, it is written; as given, it becomes UTF-8.
    let env = p
        .call(json!({"path": "ru.txt", "content": "// Пока\nx = 1\n", "encoding": "windows-1251"}));
    env.assert_status("success");
    assert_eq!(
        p.read("ru.txt"),
        encoded("// Пока\nx = 1\n", encoding_rs::WINDOWS_1251)
    );
    let env = p.call(json!({"path": "ru.txt", "content": "// Ещё\nx = 1\n", "keep_format": false}));
    env.assert_status("success");
    assert_eq!(p.read_string("ru.txt"), "// Ещё\nx = 1\n");
}

#[test]
fn an_encoding_the_file_is_not_in_or_that_does_not_exist_is_refused() {
    let p = Project::new();
    p.write("a.txt", b"caf\xE9\n");
    let env = p.call(json!({"path": "a.txt", "content": "café\n", "encoding": "utf-8"}));
    env.assert_error("INVALID_PARAM");
    assert!(env.text.contains("not valid utf-8"), "{}", env.text);
    let env = p.call(json!({"path": "a.txt", "content": "café\n", "encoding": "klingon"}));
    env.assert_error("INVALID_PARAM");
    assert!(env.text.contains("'klingon'"), "{}", env.text);
    assert_eq!(p.read("a.txt"), b"caf\xE9\n");
}

#[test]
fn a_seven_bit_iso_2022_jp_file_is_read_as_such() {
    let p = Project::new();
    let text = "件名: 日本語\nbody\n";
    let old = encoded(text, encoding_rs::ISO_2022_JP);
    assert!(old.is_ascii(), "7-bit: UTF-8 would take it for ASCII");
    p.write("mail.txt", &old);
    let new = "件名: 日本語です\nbody\n";
    let env = p.call(json!({"path": "mail.txt", "content": new}));
    env.assert_status("success");
    assert_eq!(env.data().encoding, "iso-2022-jp");
    assert_eq!(p.read("mail.txt"), encoded(new, encoding_rs::ISO_2022_JP));
}
