//! The workspace against the layering of `docs/design.md` ("Layering"):
//! the tables are read from that page, so the page and this test cannot
//! drift apart.

use super::rules;
use super::tracked;

/// Today's violations, each the exact text the check prints (without the
/// line, so that an edit above a line does not change it). The list only
/// shrinks: a violation not on it fails the test, and so does a listed one
/// that no longer occurs. Empty: the house keeps its layering.
const KNOWN_VIOLATIONS: &[&str] = &[];

#[test]
fn the_workspace_keeps_its_layering() {
    let files = tracked::files(|f| f.ends_with(".rs") || f.ends_with("Cargo.toml"));
    let design = std::fs::read_to_string(tracked::workspace().join("docs/design.md"))
        .expect("docs/design.md");
    let found = rules::check(&files, &design);
    let new: Vec<String> = found
        .iter()
        .filter(|v| !KNOWN_VIOLATIONS.contains(&v.text.as_str()))
        .map(|v| {
            let (file, rule) = v.text.split_once(": ").unwrap_or((&v.text, ""));
            format!("{file}:{}: {rule}", v.line)
        })
        .collect();
    let gone: Vec<&str> = KNOWN_VIOLATIONS
        .iter()
        .copied()
        .filter(|k| !found.iter().any(|v| v.text == *k))
        .collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "docs/design.md, \"Layering\", is broken by:\n{}\n\
         and these of KNOWN_VIOLATIONS no longer occur (take them off the list):\n{}",
        new.join("\n"),
        gone.join("\n"),
    );
}

/// The integration tests build as at most this many binaries
/// (docs/design.md, "Tests"): each links the workspace once, and they run
/// one after another.
const TEST_BINARIES: usize = 12;

#[test]
fn the_integration_tests_are_at_most_twelve_binaries() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(tracked::workspace())
        .output()
        .expect("cargo metadata");
    assert!(out.status.success(), "cargo metadata failed");
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("its JSON");
    let binaries: Vec<String> = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|p| {
            p["targets"]
                .as_array()
                .into_iter()
                .flatten()
                .map(move |t| (p, t))
        })
        .filter(|(_, t)| {
            t["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "test"))
        })
        .map(|(p, t)| format!("{} {}", p["name"], t["name"]))
        .collect();
    assert!(
        binaries.len() <= TEST_BINARIES,
        "{} integration-test binaries, at most {TEST_BINARIES}: group them by what they need\n{}",
        binaries.len(),
        binaries.join("\n")
    );
}
