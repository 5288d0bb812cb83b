//! systemd unit-file text through fleet's parser and the translator: never
//! panics; fleet's canonical text of the options parses back to the same
//! canonical text (a unit's hash survives a trip through etcd); a unit the
//! translator gives has no value the key table refuses (which keys a type
//! takes is the translator's own mapping: `Type=forking` without
//! `PIDFile=` is a unit there).
//!
//! One exception to the round trip, which fleet has too (go-systemd's
//! lexer): a value ending in `\` at the very end of the text keeps no
//! newline, but written out with its newline it reads as a continuation.
#![no_main]

use flotilla_units::keys::{validate, What};
use flotilla_systemd::{parse, translate_file};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let unit = parse(text);
    let canonical = unit.canonical_text();
    if !unit.options.iter().any(|o| o.value.ends_with('\\')) {
        assert_eq!(
            parse(&canonical).canonical_text(),
            canonical,
            "from {text:?}"
        );
    }
    let translated = translate_file("fuzz.service", "fuzz.service", text);
    if let Some(spec) = translated.spec {
        if let Err(problems) = validate(spec) {
            for p in problems {
                assert!(!matches!(p.what, What::Invalid(..)), "{p}");
            }
        }
    }
});
