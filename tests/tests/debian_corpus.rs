//! Issue 10's corpus figure: `init --check` over a copy of this machine's
//! `/lib/systemd/system` (Debian's own unit files and links, unchanged, of
//! the packages the test command installs), as one search directory. It
//! prints, for each kind it reads (`.service`, `.socket`, `.timer`,
//! `.target`, `.path`, `.mount`), how many files there are, how many are refused
//! (an error names the file) and how many load with a key ignored (a
//! warning `KEY= is not supported, ignored`), and the ignored keys by
//! count; docs/performance.md records the figure.
//!
//! What it asserts: the check runs to its summary; every error names a
//! file of the copy (no problem without its file); and no kind the
//! loader reads is refused for a reason that is not one of the known ones
//! listed here, each a fact of the file itself, not of flotilla.
//!
//! A second test checks the same copy for ordering cycles: systemd
//! reports none on Debian's own units (those of `systemd`, `udev`,
//! `systemd-timesyncd`, `ifupdown`, `openssh-server`, `cron`, `rsyslog`,
//! `dbus`, which scripts/test installs), and neither may flotilla, whose
//! `Requires=`/`Wants=`/`BindsTo=` order nothing, as systemd's.

use flotilla_tests::init::{copy_tree, TestDir};
use std::collections::{BTreeMap, BTreeSet};

/// The kinds the loader reads.
const KINDS: [&str; 6] = ["service", "socket", "timer", "target", "path", "mount"];

/// Files refused for what they are: none. (Debian's
/// `initrd-switch-root.service` and `.target` want each other, the service
/// ordered before the target: a target is not ordered after such a unit,
/// as systemd's default target dependencies skip it.)
const KNOWN_REFUSALS: [&str; 0] = [];

#[test]
fn debians_unit_files_load() {
    let dir = TestDir::new();
    let lib = dir.join("lib");
    copy_tree("/lib/systemd/system", &lib);
    let files: Vec<String> = std::fs::read_dir(&lib)
        .expect("the copy")
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| KINDS.iter().any(|k| n.ends_with(&format!(".{k}"))))
        .collect();
    assert!(files.len() > 100, "Debian's units: {files:?}");
    let units = lib.display().to_string();
    let out = dir.run_init(&[
        "--check",
        "--units",
        &units,
        "--target",
        "multi-user.target",
    ]);
    let summary = out
        .stdout
        .lines()
        .last()
        .filter(|l| l.ends_with(" warning(s)"))
        .unwrap_or_else(|| panic!("no summary: {out:?}"));
    let prefix = format!("{units}/");
    let file_of = |line: &str| -> Option<String> {
        let rest = line.strip_prefix(&prefix)?;
        Some(rest.split(':').next()?.split('/').next()?.to_string())
    };
    let mut refused: BTreeSet<String> = BTreeSet::new();
    let mut ignoring: BTreeSet<String> = BTreeSet::new();
    let mut ignored: BTreeMap<String, usize> = BTreeMap::new();
    for line in out.stdout.lines() {
        let warning = line.contains(": warning: ");
        if !warning && line.starts_with('/') {
            let file = file_of(line).unwrap_or_else(|| panic!("an error of no file: {line}"));
            refused.insert(file);
        } else if let Some(key) = line
            .split(": warning: ")
            .nth(1)
            .and_then(|w| w.strip_suffix("= is not supported, ignored"))
        {
            *ignored.entry(key.to_string()).or_default() += 1;
            if let Some(f) = file_of(line) {
                ignoring.insert(f);
            }
        }
    }
    println!(
        "corpus: /lib/systemd/system, {} file(s) of the kinds read; {summary}",
        files.len()
    );
    println!("kind     files  refused  with a key ignored");
    for kind in KINDS {
        let of = |set: &BTreeSet<String>| {
            set.iter()
                .filter(|f| f.ends_with(&format!(".{kind}")))
                .count()
        };
        let n = files
            .iter()
            .filter(|f| f.ends_with(&format!(".{kind}")))
            .count();
        println!(
            "{kind:<8} {n:>5}  {:>7}  {:>18}",
            of(&refused),
            of(&ignoring)
        );
    }
    let mut by_count: Vec<(&String, &usize)> = ignored.iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let top: Vec<String> = by_count.iter().map(|(k, n)| format!("{k}= {n}")).collect();
    println!("ignored keys: {}", top.join(", "));
    let unknown: Vec<&String> = refused
        .iter()
        .filter(|f| !KNOWN_REFUSALS.contains(&f.as_str()))
        .collect();
    assert!(
        unknown.is_empty(),
        "refused beyond the known ones: {unknown:?}\n{}",
        out.stdout
    );
}

/// `init --check` over the copy of `/lib/systemd/system` reports no
/// ordering cycle and no dependency cycle (the check covers every unit of
/// the set, whatever the target). Each of the pairs that were cycles
/// while `Wants=` ordered (a unit that wants a target it is ordered
/// before, issue 26) is in the copy. The figure is printed.
#[test]
fn debians_units_have_no_ordering_cycle() {
    let dir = TestDir::new();
    let lib = dir.join("lib");
    copy_tree("/lib/systemd/system", &lib);
    let units = lib.display().to_string();
    for unit in [
        "networking.service",
        "systemd-networkd.service",
        "systemd-network-generator.service",
        "systemd-time-wait-sync.service",
        "systemd-timesyncd.service",
        "systemd-firstboot.service",
        "systemd-random-seed.service",
        "systemd-remount-fs.service",
        "systemd-tmpfiles-setup-dev.service",
    ] {
        assert!(lib.join(unit).exists(), "{unit} is not installed");
    }
    let out = dir.run_init(&[
        "--check",
        "--units",
        &units,
        "--target",
        "multi-user.target",
    ]);
    let cycles: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("ordering cycle") || l.contains("dependency cycle"))
        .collect();
    let summary = out.stdout.lines().last().unwrap_or_default();
    println!("cycles: {} ({summary})", cycles.len());
    assert!(cycles.is_empty(), "{}", cycles.join("\n"));
}
