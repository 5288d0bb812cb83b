//! Escaping against this machine's `systemd-escape` (package `systemd`,
//! installed by `scripts/test`), and round trips.

use flotilla_units::escape::{escape, escape_into_template, escape_path, unescape, unescape_path};
use proptest::prelude::*;
use std::process::Command;

/// `systemd-escape ARGS… -- INPUT`: its output, or `None` when it fails.
fn oracle(args: &[&str], input: &str) -> Option<String> {
    let out = Command::new("systemd-escape")
        .args(args)
        .arg("--")
        .arg(input)
        .output()
        .expect("systemd-escape (package systemd) runs");
    out.status.success().then(|| {
        String::from_utf8(out.stdout)
            .unwrap()
            .trim_end_matches('\n')
            .to_string()
    })
}

const INPUTS: &[&str] = &[
    "foo/bar",
    "/foo//bar/",
    ".hidden",
    "/.hidden",
    "a-b c",
    "ü",
    "",
    "a.b:c_d",
    "/",
    "/./a/../b",
    "x\\y",
    "-",
    "/dev/disk/by-label/root",
    "a..b",
    "/a/./b/.",
    "tab\there",
    "100%",
    "@x",
    "/var/lib/machines/büro",
    "..",
    "/..",
    "./rel",
    "a/",
    "foo-bar",
    "a\\x2db",
    "a\\x2",
    "\\x2efoo",
    "a-",
    "a--b",
    "a\\xzz",
    "dev-disk-by\\x2dlabel-x",
    "\\x2f",
    "-a",
    "\\x00",
];

#[test]
fn escaping_matches_systemd_escape() {
    for input in INPUTS {
        assert_eq!(Some(escape(input)), oracle(&[], input), "escape {input:?}");
        assert_eq!(
            escape_path(input).ok(),
            oracle(&["--path"], input),
            "escape --path {input:?}"
        );
        if input.contains("\\x00") {
            // systemd cuts the string at the NUL; flotilla refuses it.
            assert!(unescape(input).is_err() && unescape_path(input).is_err());
        } else {
            assert_eq!(
                unescape(input).ok(),
                oracle(&["-u"], input),
                "unescape {input:?}"
            );
            assert_eq!(
                unescape_path(input).ok(),
                oracle(&["-u", "--path"], input),
                "unescape --path {input:?}"
            );
        }
        assert_eq!(
            escape_into_template("foo@.service", input).ok(),
            oracle(&["--template=foo@.service"], input),
            "--template {input:?}"
        );
    }
}

proptest! {
    #[test]
    fn unescape_inverts_escape(s in "\\PC*") {
        prop_assert_eq!(unescape(&escape(&s)).unwrap(), s);
    }

    #[test]
    fn unescape_path_inverts_escape_path(parts in proptest::collection::vec("[^/\\x00]{1,8}", 1..5)) {
        prop_assume!(parts.iter().all(|p| p != "." && p != ".."));
        let path = format!("/{}", parts.join("/"));
        prop_assert_eq!(unescape_path(&escape_path(&path).unwrap()).unwrap(), path);
    }
}
