//! The layering check on small made-up workspaces.

use super::rules::{check, Violation};

const DESIGN: &str = "\
| crate | may depend on |
| --- | --- |
| `flotilla-units` | nothing |
| `flotilla-init` | `flotilla-units` |

| crate | layer | top modules |
| --- | --- | --- |
| `flotilla-units` | 1 | `time` |
| `flotilla-units` | 2 | `spec` |
| `flotilla-units` | 3 | `graph` |
| `flotilla-units` | 4 | `planner` |
";

fn manifest(name: &str, deps: &str) -> String {
    format!("[package]\nname = \"{name}\"\n\n[dependencies]\n{deps}")
}

/// A workspace of `units/` (with `files` added) and `init/`.
fn workspace(files: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut all = vec![
        (
            "units/Cargo.toml".to_string(),
            manifest("flotilla-units", ""),
        ),
        (
            "init/Cargo.toml".to_string(),
            manifest("flotilla-init", "flotilla-units.workspace = true\n"),
        ),
        (
            "units/src/lib.rs".into(),
            "pub mod time;\npub mod spec;\npub mod graph;\npub mod planner;\n".into(),
        ),
        (
            "units/src/time.rs".into(),
            "pub fn now_is(x: u64) -> u64 { x }\n".into(),
        ),
        (
            "units/src/spec/mod.rs".into(),
            "use crate::time;\npub struct Spec;\n".into(),
        ),
        (
            "units/src/graph.rs".into(),
            "use crate::spec::Spec;\n".into(),
        ),
        (
            "units/src/planner/mod.rs".into(),
            "use crate::{graph, spec::Spec};\nmod rules;\n".into(),
        ),
        (
            "units/src/planner/rules.rs".into(),
            "use super::super::time::now_is;\n".into(),
        ),
        (
            "init/src/main.rs".into(),
            "use flotilla_units::spec::Spec;\nfn main() {}\n".into(),
        ),
    ];
    for (p, t) in files {
        all.retain(|(q, _)| q != p);
        all.push((p.to_string(), t.to_string()));
    }
    all
}

fn texts(found: &[Violation]) -> Vec<&str> {
    found.iter().map(|v| v.text.as_str()).collect()
}

#[test]
fn a_workspace_by_the_tables_has_no_violation() {
    assert_eq!(texts(&check(&workspace(&[]), DESIGN)), Vec::<&str>::new());
}

#[test]
fn a_back_import_names_file_line_and_layers() {
    let found = check(
        &workspace(&[(
            "units/src/spec/mod.rs",
            "use crate::time;\n\n/// x\nfn f() { crate::planner::rules::g() }\n",
        )]),
        DESIGN,
    );
    assert_eq!(
        found,
        vec![Violation {
            text: "units/src/spec/mod.rs: module layers: spec (2) may not use planner (4): units/src/planner/rules.rs".into(),
            line: 4,
        }]
    );
}

#[test]
fn an_import_in_a_comment_a_string_or_test_code_is_none() {
    let spec = "use crate::time;\n// use crate::planner;\n/* crate::planner::x */\n\
                const S: &str = \"crate::planner::x\";\n\
                #[cfg(test)]\nmod tests {\n    use crate::planner;\n}\n";
    assert_eq!(
        texts(&check(
            &workspace(&[("units/src/spec/mod.rs", spec)]),
            DESIGN
        )),
        Vec::<&str>::new()
    );
}

#[test]
fn a_circle_is_printed_whole() {
    // graph -> spec (allowed), spec -> graph (a back import), a circle of
    // two top modules; and a circle of three files inside `planner/`.
    let found = check(
        &workspace(&[
            ("units/src/spec/mod.rs", "use crate::graph::G;\n"),
            ("units/src/planner/mod.rs", "mod a;\nmod b;\nmod c;\n"),
            ("units/src/planner/a.rs", "use super::b;\n"),
            ("units/src/planner/b.rs", "use super::c::X;\n"),
            ("units/src/planner/c.rs", "fn f() { super::a::g() }\n"),
        ]),
        DESIGN,
    );
    assert_eq!(
        texts(&found),
        vec![
            "units/src/graph.rs: circle: units/src/graph.rs -> units/src/spec/mod.rs -> units/src/graph.rs",
            "units/src/planner/a.rs: circle: units/src/planner/a.rs -> units/src/planner/b.rs -> units/src/planner/c.rs -> units/src/planner/a.rs",
            "units/src/spec/mod.rs: module layers: spec (2) may not use graph (3): units/src/graph.rs",
        ]
    );
}

#[test]
fn a_folder_and_its_own_files_are_no_circle() {
    let found = check(
        &workspace(&[
            (
                "units/src/planner/mod.rs",
                "mod rules;\npub use rules::Rule;\npub struct P;\n",
            ),
            (
                "units/src/planner/rules.rs",
                "use super::P;\npub struct Rule;\n",
            ),
        ]),
        DESIGN,
    );
    assert_eq!(texts(&found), Vec::<&str>::new());
}

#[test]
fn a_long_file_is_measured_by_its_kind() {
    let long = "fn f() {}\n".repeat(801);
    let longer = "fn f() {}\n".repeat(1501);
    let found = check(
        &workspace(&[
            ("units/src/time.rs", &long),
            ("units/src/spec/tests.rs", &long),
            ("units/tests/model.rs", &longer),
        ]),
        DESIGN,
    );
    assert_eq!(
        found,
        vec![
            Violation {
                text: "units/src/time.rs: production file over 800 lines".into(),
                line: 801,
            },
            Violation {
                text: "units/tests/model.rs: test file over 1500 lines".into(),
                line: 1501,
            },
        ]
    );
}

#[test]
fn a_crate_uses_only_what_its_row_allows() {
    let found = check(
        &workspace(&[
            (
                "units/Cargo.toml",
                &format!(
                    "{}\n[dev-dependencies]\nflotilla-init = {{ path = \"../init\" }}\n",
                    manifest("flotilla-units", "flotilla-client.workspace = true\n")
                ),
            ),
            ("units/src/time.rs", "use flotilla_init::sys;\n"),
            ("units/tests/t.rs", "use flotilla_init::sys;\n"),
        ]),
        DESIGN,
    );
    assert_eq!(
        texts(&found),
        vec![
            "units/Cargo.toml: crate table: flotilla-units may not have flotilla-client as a dependency",
            "units/Cargo.toml: crate table: flotilla-units may not have flotilla-init as a dev-dependency",
            "units/src/time.rs: crate table: flotilla-units may not use flotilla-init",
            "units/tests/t.rs: crate table: flotilla-units may not use flotilla-init",
        ]
    );
}

#[test]
fn the_pure_model_touches_no_file_clock_or_process() {
    let time = "use std::{fs, time::SystemTime};\nuse std::net::IpAddr;\n\
                fn f() { let _ = std::time::Instant::now(); std::process::exit(1) }\n\
                #[cfg(test)]\nfn g() { std::fs::read(\"x\").unwrap(); }\n";
    let found = check(&workspace(&[("units/src/time.rs", time)]), DESIGN);
    assert_eq!(
        texts(&found),
        vec![
            "units/src/time.rs: pure model: uses Instant::now",
            "units/src/time.rs: pure model: uses std::fs",
            "units/src/time.rs: pure model: uses std::process",
            "units/src/time.rs: pure model: uses std::time::SystemTime",
        ]
    );
}
