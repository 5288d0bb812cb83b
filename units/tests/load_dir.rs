//! `load_dir`: which files it reads, in which order, and how it reports
//! files it cannot use. The fixed cases are in `tests/fixtures/yaml/mixed/`;
//! cases that cannot live in git (a dangling link, bad UTF-8, a huge file)
//! are made in a fresh temporary directory.

use flotilla_units::diag::Severity;
use flotilla_units::load::{load_dir, MAX_FILE_SIZE};
use std::path::{Path, PathBuf};

fn mixed() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/yaml/mixed")
}

/// The diagnostics with the directory part of the file names cut off.
fn shown(dir: &Path, diags: &[flotilla_units::diag::Diagnostic]) -> Vec<String> {
    let prefix = format!("{}/", dir.display());
    diags
        .iter()
        .map(|d| d.to_string().replacen(&prefix, "", 1))
        .collect()
}

/// A fresh, empty directory under the system's temporary directory,
/// removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let path =
            std::env::temp_dir().join(format!("flotilla-load-dir-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create a temporary directory");
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn reads_yaml_yml_and_service_files_in_name_order() {
    let dir = mixed();
    let loaded = load_dir(&dir).expect("readable");
    let names: Vec<&str> = loaded.units.iter().map(|(u, _)| u.name.as_str()).collect();
    // `c.yaml` has an error, so it is left out; `.hidden.yaml`, `notes.txt`
    // and `z.yaml~` are not unit files; `t@.service` is a template.
    assert_eq!(names, ["a", "b", "web.service"]);
    assert_eq!(
        shown(&dir, &loaded.diagnostics),
        [
            "c.yaml:3:1: unknown key `bogus`",
            "sub.yaml: warning: a directory, not a unit file; skipped",
            "t@.service: warning: a template unit (`name@.service`) is not loaded from the \
             units directory; copy it to `name@instance.service` to run an instance",
        ]
    );
    // Each unit's origin names its own file.
    for (u, o) in &loaded.units {
        let file = Path::new(&o.file);
        assert_eq!(file.parent(), Some(dir.as_path()), "{}", o.file);
        let stem = file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        assert!(u.name.starts_with(stem), "{} in {}", u.name, o.file);
    }
}

#[test]
fn the_service_file_goes_through_the_systemd_translator() {
    let loaded = load_dir(&mixed()).expect("readable");
    let (web, _) = loaded
        .units
        .iter()
        .find(|(u, _)| u.name == "web.service")
        .expect("web.service loaded");
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
fn a_missing_directory_is_an_io_error() {
    let err = load_dir(Path::new("/nonexistent/flotilla/units")).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
}

#[test]
fn an_empty_directory_loads_nothing() {
    let tmp = TempDir::new("empty");
    assert_eq!(load_dir(&tmp.0).expect("readable"), Default::default());
}

#[test]
fn files_it_cannot_use_are_diagnostics() {
    let tmp = TempDir::new("bad");
    let d = &tmp.0;
    // A link to nowhere.
    std::os::unix::fs::symlink(d.join("nowhere"), d.join("a-dangling.yaml")).expect("symlink");
    // Bad UTF-8 on line 2, after 7 good characters.
    std::fs::write(d.join("b-latin1.yaml"), b"unit: b\nexec-s\xe9: x\n").expect("write");
    // One byte over the limit.
    std::fs::write(d.join("c-huge.yaml"), vec![b'#'; MAX_FILE_SIZE + 1]).expect("write");
    // Exactly at the limit is fine (it is all a comment, so: empty).
    std::fs::write(d.join("d-limit.yaml"), vec![b'#'; MAX_FILE_SIZE]).expect("write");
    // A good one, to show the others do not stop it.
    std::fs::write(d.join("e-good.yaml"), "unit: e-good\nexec-start: /bin/e\n").expect("write");
    let loaded = load_dir(d).expect("readable");
    assert_eq!(
        loaded
            .units
            .iter()
            .map(|(u, _)| u.name.as_str())
            .collect::<Vec<_>>(),
        ["e-good"]
    );
    assert_eq!(
        shown(d, &loaded.diagnostics),
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

#[test]
fn symlinked_files_are_followed() {
    let tmp = TempDir::new("link");
    let d = &tmp.0;
    std::fs::write(d.join("real.txt"), "unit: linked\nexec-start: /bin/l\n").expect("write");
    std::os::unix::fs::symlink(d.join("real.txt"), d.join("linked.yaml")).expect("symlink");
    let loaded = load_dir(d).expect("readable");
    assert_eq!(loaded.diagnostics, []);
    assert_eq!(loaded.units.len(), 1);
}

#[test]
fn a_file_that_cannot_be_opened() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = TempDir::new("perm");
    let d = &tmp.0;
    let f = d.join("secret.yaml");
    std::fs::write(&f, "unit: secret\nexec-start: /bin/s\n").expect("write");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    let loaded = load_dir(d).expect("readable");
    if std::fs::read(&f).is_ok() {
        // Running as root: permissions do not apply, the file loads.
        assert_eq!(loaded.units.len(), 1);
    } else {
        assert_eq!(
            shown(d, &loaded.diagnostics),
            ["secret.yaml: cannot read the file: Permission denied (os error 13)"]
        );
    }
}
