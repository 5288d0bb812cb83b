//! The workspace against the layering of `docs/design.md` ("Layering"):
//! the tables are read from that page, so the page and this test cannot
//! drift apart.

use super::rules;
use super::tracked;

/// Today's violations, each the exact text the check prints (without the
/// line, so that an edit above a line does not change it). The list only
/// shrinks: a violation not on it fails the test, and so does a listed one
/// that no longer occurs. Each is being removed on a branch of its own (the
/// systemd reader's own crate; init's and bus's circles and long files; the
/// cluster's HTTP circle).
const KNOWN_VIOLATIONS: &[&str] = &[
    "bus/src/hub.rs: circle: bus/src/hub.rs -> bus/src/jobs.rs -> bus/src/hub.rs",
    "bus/src/hub.rs: module layers: hub (4) may not use jobs (5): bus/src/jobs.rs",
    "bus/src/limits.rs: circle: bus/src/limits.rs -> bus/src/props.rs -> bus/src/limits.rs",
    "bus/src/props.rs: module layers: props (2) may not use limits (3): bus/src/limits.rs",
    "cluster/src/api.rs: circle: cluster/src/api.rs -> cluster/src/forward.rs -> cluster/src/serve.rs -> cluster/src/api.rs",
    "cluster/src/forward.rs: module layers: forward (6) may not use serve (8): cluster/src/serve.rs",
    "init/src/args.rs: circle: init/src/args.rs -> init/src/cmd.rs -> init/src/args.rs",
    "init/src/args.rs: module layers: args (3) may not use cmd (4): init/src/cmd.rs",
    "init/src/args.rs: production file over 800 lines",
    "init/src/pathstamp.rs: circle: init/src/pathstamp.rs -> init/src/unitdir.rs -> init/src/pathstamp.rs",
    "init/src/pathstamp.rs: module layers: pathstamp (7) may not use unitdir (8): init/src/unitdir.rs",
    "init/src/runtime/fdstore.rs: circle: init/src/runtime/fdstore.rs -> init/src/runtime/slots.rs -> init/src/runtime/fdstore.rs",
    "init/src/sys/adopt.rs: circle: init/src/sys/adopt.rs -> init/src/sys/unitrun.rs -> init/src/sys/freezer.rs -> init/src/sys/adopt.rs",
    "init/src/sys/cgroup.rs: circle: init/src/sys/cgroup.rs -> init/src/sys/slices.rs -> init/src/sys/cgroup.rs",
    "init/src/sys/fake/answers.rs: production file over 800 lines",
    "init/src/sys/loader.rs: module layers: sys (2) may not use args (3): init/src/args.rs",
    "init/src/sys/loader.rs: module layers: sys (2) may not use cmd (4): init/src/cmd.rs",
    "init/src/sys/loader.rs: module layers: sys (2) may not use unitdir (8): init/src/unitdir.rs",
    "init/src/sys/real.rs: production file over 800 lines",
    "init/src/sys/tests.rs: test file over 1500 lines",
    "units/src/context/clean.rs: module layers: context (3) may not use keys (6): units/src/keys/mod.rs",
    "units/src/context/clean.rs: module layers: context (3) may not use spec (5): units/src/spec/mod.rs",
    "units/src/context/credentials.rs: module layers: context (3) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/context/input.rs: module layers: context (3) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/context/limits.rs: module layers: context (3) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/context/mod.rs: module layers: context (3) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/context/slice.rs: module layers: context (3) may not use protocol (9): units/src/protocol/mod.rs",
    "units/src/context/slice.rs: module layers: context (3) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/exits.rs: circle: units/src/exits.rs -> units/src/spec/mod.rs -> units/src/exits.rs",
    "units/src/exits.rs: module layers: exits (2) may not use planner (10): units/src/planner/mod.rs",
    "units/src/exits.rs: module layers: exits (2) may not use spec (5): units/src/spec/mod.rs",
    "units/src/fleet_api.rs: module layers: fleet_api (11) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/graph/mod.rs: circle: units/src/graph/mod.rs -> units/src/spec/mod.rs -> units/src/planner/mod.rs -> units/src/graph/mod.rs",
    "units/src/graph/mod.rs: circle: units/src/graph/mod.rs -> units/src/targets.rs -> units/src/spec/mod.rs -> units/src/planner/mod.rs -> units/src/graph/mod.rs",
    "units/src/keys/mod.rs: module layers: keys (6) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/load/default_deps.rs: module layers: load (7) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/load/dir.rs: module layers: load (7) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/load/fileless.rs: circle: units/src/load/fileless.rs -> units/src/load/path.rs -> units/src/load/fileless.rs",
    "units/src/load/fileless.rs: module layers: load (7) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/load/files_stamp.rs: pure model: uses std::time::SystemTime",
    "units/src/load/instances.rs: module layers: load (7) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/load/orphan_dropins.rs: module layers: load (7) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/load/path.rs: module layers: load (7) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/load/path.rs: module layers: load (7) may not use systemd (12): units/src/systemd/system_conf.rs",
    "units/src/load/unit.rs: module layers: load (7) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/planner/conditions.rs: module layers: planner (10) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/planner/mod.rs: production file over 800 lines",
    "units/src/planner/timers.rs: module layers: planner (10) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/planner/timers.rs: module layers: planner (10) may not use systemd (12): units/src/systemd/tz.rs",
    "units/src/protocol/mod.rs: module layers: protocol (9) may not use systemd (12): units/src/systemd/civil.rs",
    "units/src/protocol/mod.rs: production file over 800 lines",
    "units/src/protocol/settings.rs: module layers: protocol (9) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/spec/extra.rs: module layers: spec (5) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/spec/mod.rs: circle: units/src/spec/mod.rs -> units/src/trigger/mod.rs -> units/src/spec/mod.rs",
    "units/src/spec/mod.rs: module layers: spec (5) may not use planner (10): units/src/planner/mod.rs",
    "units/src/spec/mod.rs: module layers: spec (5) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/spec/origin.rs: module layers: spec (5) may not use load (7): units/src/load/mod.rs",
    "units/src/systemd/unit_path.rs: production file over 800 lines",
    "units/src/trigger/mod.rs: module layers: trigger (4) may not use spec (5): units/src/spec/mod.rs",
    "units/src/trigger/mod.rs: module layers: trigger (4) may not use systemd (12): units/src/systemd/mod.rs",
    "units/src/trigger/socket.rs: module layers: trigger (4) may not use keys (6): units/src/keys/check.rs",
];

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
