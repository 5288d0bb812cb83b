//! `load_files`: the files of a units directory, as the init read them,
//! turned into units and diagnostics. Which files the init reads, and in
//! which order, is tested in the init (`init/src/unitdir.rs`), which does
//! the reading.

use crate::load::{load_files, FileRead};
use flotilla_units::diag::Severity;
use flotilla_units::load::MAX_FILE_SIZE;

fn file(name: &str, text: &[u8]) -> (String, FileRead) {
    (format!("/u/{name}"), FileRead::Bytes(text.to_vec()))
}

fn shown(diags: &[flotilla_units::diag::Diagnostic]) -> Vec<String> {
    diags
        .iter()
        .map(|d| d.to_string().replacen("/u/", "", 1))
        .collect()
}

#[test]
fn yaml_and_service_files_load_in_the_order_given() {
    let loaded = load_files([
        file("b.yml", b"unit: b\nexec-start: /bin/b\n"),
        file("a.yaml", b"unit: a\nexec-start: /bin/a\n"),
        file(
            "web.service",
            b"[Unit]\nDescription=Web\n\n[Service]\nExecStart=/usr/bin/web --port 80",
        ),
        file("c.yaml", b"unit: c\nexec-start: /bin/c\nbogus: 1\n"),
        file("t@.service", b"[Service]\nExecStart=/bin/t %i\n"),
        ("/u/sub.yaml".to_string(), FileRead::Directory),
    ]);
    let names: Vec<&str> = loaded.units.iter().map(|(u, _)| u.name.as_str()).collect();
    assert_eq!(names, ["b", "a", "web.service"]);
    assert_eq!(
        shown(&loaded.diagnostics),
        [
            "c.yaml:3:1: unknown key `bogus`",
            "t@.service: warning: a template unit (`name@.service`) is not loaded from the \
             units directory; copy it to `name@instance.service` to run an instance",
            "sub.yaml: warning: a directory, not a unit file; skipped",
        ]
    );
    // Each unit's origin names its own file.
    for (u, o) in &loaded.units {
        assert!(o.file.starts_with(&format!("/u/{}", &u.name[..1])), "{o:?}");
    }
    let (web, _) = &loaded.units[2];
    assert_eq!(
        web.exec_start.as_ref().map(|c| c.argv.to_vec()),
        Some(vec![
            "/usr/bin/web".to_string(),
            "--port".into(),
            "80".into()
        ])
    );
    assert_eq!(web.description.as_deref(), Some("Web"));
}

#[test]
fn nothing_loads_nothing() {
    assert_eq!(load_files([]), Default::default());
}

#[test]
fn files_it_cannot_use_are_errors() {
    let loaded = load_files([
        (
            "/u/a-dangling.yaml".to_string(),
            FileRead::Failed("No such file or directory (os error 2)".into()),
        ),
        // Bad UTF-8 on line 2, after 7 good characters.
        file("b-latin1.yaml", b"unit: b\nexec-s\xe9: x\n"),
        // One byte over the limit.
        file("c-huge.yaml", &vec![b'#'; MAX_FILE_SIZE + 1]),
        // Exactly at the limit is fine (it is all a comment, so: empty).
        file("d-limit.yaml", &vec![b'#'; MAX_FILE_SIZE]),
        // A good one, to show the others do not stop it.
        file("e-good.yaml", b"unit: e-good\nexec-start: /bin/e\n"),
    ]);
    assert_eq!(
        loaded
            .units
            .iter()
            .map(|(u, _)| u.name.as_str())
            .collect::<Vec<_>>(),
        ["e-good"]
    );
    assert_eq!(
        shown(&loaded.diagnostics),
        [
            "a-dangling.yaml: cannot read the file: No such file or directory (os error 2)",
            "b-latin1.yaml:2:7: the file is not valid UTF-8",
            "c-huge.yaml: the file is larger than 1 MiB (1048576 bytes); not read",
            "d-limit.yaml:1:1: the file is empty; a unit file is a YAML mapping with at least \
             `unit:` (and `exec-start:` unless the unit is virtual)",
        ]
    );
    assert!(loaded
        .diagnostics
        .iter()
        .all(|d| d.severity == Severity::Error));
}
