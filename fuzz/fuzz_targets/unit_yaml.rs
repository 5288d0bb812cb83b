//! The YAML unit loader on any text: never panics, reports at most
//! `MAX_DIAGNOSTICS` problems at positions inside the text, gives a unit
//! exactly when it reports no error, and a unit it gives is one the key
//! table accepts as is and one that survives the JSON a transient unit or
//! a cluster unit travels in.
#![no_main]

use flotilla_units::diag::Severity;
use flotilla_units::keys::validate;
use flotilla_units::load::{parse_yaml, MAX_DIAGNOSTICS};
use flotilla_units::spec::UnitSpec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let parsed = parse_yaml("fuzz.yaml", text);
    let errors = parsed
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    assert!(parsed.diagnostics.len() <= MAX_DIAGNOSTICS + 1);
    assert_eq!(
        parsed.spec.is_some(),
        errors == 0,
        "{:?}",
        parsed.diagnostics
    );
    // YAML ends a line at LF, CR LF or a lone CR.
    let breaks = text.replace("\r\n", "\n").matches(['\n', '\r']).count();
    let lines = u32::try_from(breaks).unwrap_or(u32::MAX).saturating_add(1);
    for d in &parsed.diagnostics {
        assert!(
            d.pos.line <= lines,
            "{d} is past the end of the text ({lines} lines)"
        );
    }
    if let Some(spec) = parsed.spec {
        assert_eq!(validate(spec.clone()).as_ref(), Ok(&spec));
        let json = serde_json::to_string(&spec).expect("a unit encodes");
        let back: UnitSpec = serde_json::from_str(&json).expect("a unit decodes");
        assert_eq!(back, spec);
    }
});
