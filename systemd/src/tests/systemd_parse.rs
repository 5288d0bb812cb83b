//! The unit-file parser: fleet's rules (docs/fleet-compat.md "Unit files"), positions
//! and the diagnostics of `parse_checked`.

use crate::{parse, parse_checked, UnitFile, LINE_MAX};
use flotilla_units::diag::Pos;
use flotilla_units::fleet::UnitOption;

fn opts(u: &UnitFile) -> Vec<(String, String, String)> {
    u.options
        .iter()
        .map(|o| (o.section.clone(), o.name.clone(), o.value.clone()))
        .collect()
}

fn want(v: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    v.iter()
        .map(|(s, n, x)| (s.to_string(), n.to_string(), x.to_string()))
        .collect()
}

/// (section, name, value)
type Opt<'a> = (&'a str, &'a str, &'a str);

#[test]
fn parser_table() {
    let cases: &[(&str, &str, &[Opt])] = &[
        ("empty text: no options", "", &[]),
        ("only comments", "# a\n; b\n", &[]),
        (
            "one option",
            "[Service]\nExecStart=/bin/sleep 100\n",
            &[("Service", "ExecStart", "/bin/sleep 100")],
        ),
        (
            "# and ; comments anywhere, also indented",
            "# head\n[Unit]\n# c\nDescription=x\n; c2\n   # indented\nWants=y\n",
            &[("Unit", "Description", "x"), ("Unit", "Wants", "y")],
        ),
        (
            "a comment is a comment only at the start of a line",
            "[S]\nA=x # not a comment\nB=y ; nor this\n",
            &[("S", "A", "x # not a comment"), ("S", "B", "y ; nor this")],
        ),
        (
            "a comment ending in a backslash swallows the next line (go-systemd)",
            "[S]\n# c \\\nA=1\nB=2\n",
            &[("S", "B", "2")],
        ),
        (
            "continuation: backslash and newline stay in the value",
            "[S]\nExecStart=/bin/echo a \\\n   b \\\n   c\nX=1\n",
            &[
                ("S", "ExecStart", "/bin/echo a \\\n   b \\\n   c"),
                ("S", "X", "1"),
            ],
        ),
        (
            "continuation ended by a blank line keeps one trailing newline",
            "[S]\nA=x \\\n\nB=1\n",
            &[("S", "A", "x \\\n"), ("S", "B", "1")],
        ),
        (
            "continuation at the end of the text without newline",
            "[S]\nA=x\\",
            &[("S", "A", "x\\")],
        ),
        (
            "continuation at the end of the text with a newline",
            "[S]\nA=x\\\n",
            &[("S", "A", "x\\\n")],
        ),
        (
            "a backslash followed by spaces does not continue",
            "[S]\nA=x\\  \nB=1\n",
            &[("S", "A", "x\\"), ("S", "B", "1")],
        ),
        (
            "a continued line is taken whatever it looks like",
            "[S]\nA=x\\\n[T]\nB=1\n",
            &[("S", "A", "x\\\n[T]"), ("S", "B", "1")],
        ),
        (
            "repeated keys are all kept, in order, across repeated sections",
            "[S]\nA=1\nA=2\n[T]\nA=3\n[S]\nA=4\n",
            &[
                ("S", "A", "1"),
                ("S", "A", "2"),
                ("T", "A", "3"),
                ("S", "A", "4"),
            ],
        ),
        (
            "text before the first section is ignored",
            "junk line\nA=1\n  more junk\n[S]\nB=2\n",
            &[("S", "B", "2")],
        ),
        (
            "blank lines and whitespace around headers, names and values",
            "\n\n  [S]  \n\n\t A  =  1 \t\n\n",
            &[("S", "A", "1")],
        ),
        (
            "= inside values: the first = splits",
            "[S]\nEnvironment=A=1 B=2\nX==y=\n",
            &[("S", "Environment", "A=1 B=2"), ("S", "X", "=y=")],
        ),
        (
            "lines without = are skipped",
            "[S]\nnoeq\nA=1\n",
            &[("S", "A", "1")],
        ),
        (
            "CRLF line ends",
            "[S]\r\nA=1\r\nB=2\r\n",
            &[("S", "A", "1"), ("S", "B", "2")],
        ),
        (
            "empty values",
            "[S]\nA=\nB=   \n",
            &[("S", "A", ""), ("S", "B", "")],
        ),
        (
            "an empty name is kept, as fleet kept it",
            "[S]\n=v\n",
            &[("S", "", "v")],
        ),
        (
            "spaces inside names are kept",
            "[S]\nExec Start = x\n",
            &[("S", "Exec Start", "x")],
        ),
        (
            "section names are taken as written",
            "[X-Fleet]\nGlobal=true\n[ odd ]\nA=1\n",
            &[("X-Fleet", "Global", "true"), (" odd ", "A", "1")],
        ),
        (
            "text after ] is dropped",
            "[S] junk\nA=1\n",
            &[("S", "A", "1")],
        ),
        (
            "an unterminated header still starts a section",
            "[S\nA=1\n",
            &[("S", "A", "1")],
        ),
        (
            "quotes are not interpreted",
            "[S]\nA=\"x y\"\n",
            &[("S", "A", "\"x y\"")],
        ),
    ];
    for (what, text, expected) in cases {
        assert_eq!(opts(&parse(text)), want(expected), "{what}: {text:?}");
    }
}

#[test]
fn positions_are_line_and_column_of_each_name() {
    let u = parse("# c\n[Unit]\nDescription=x\n\n[Service]\n  ExecStart=/bin/a \\\n b\nUser=u\n");
    assert_eq!(
        u.positions,
        vec![Pos::new(3, 1), Pos::new(6, 3), Pos::new(8, 1)]
    );
    assert_eq!(u.pos(1), Pos::new(6, 3));
    assert_eq!(u.pos(9), Pos::default(), "unknown index: unknown position");
}

#[test]
fn unit_file_helpers() {
    let u = parse("[X-Fleet]\nConflicts=a\nConflicts=b\n[Service]\nExecStart=x\n");
    assert_eq!(
        u.values("X-Fleet", "Conflicts").collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert_eq!(u.last("X-Fleet", "Conflicts"), Some("b"));
    assert_eq!(u.last("X-Fleet", "Global"), None);
    let f = UnitFile::from_options(u.options.clone());
    assert!(f.positions.is_empty());
    assert_eq!(f.hash(), u.hash());
    assert_eq!(
        f.canonical_text(),
        "[X-Fleet]\nConflicts=a\nConflicts=b\n\n[Service]\nExecStart=x\n"
    );
}

fn rendered(file: &str, text: &str) -> Vec<String> {
    parse_checked(file, text)
        .1
        .iter()
        .map(|d| d.to_string())
        .collect()
}

#[test]
fn checked_diagnostics() {
    // Each bad line gets its diagnostic; the options are those of `parse`.
    let text =
        "junk\nmore junk\n[Service]\nExecStart=/bin/true\nnoeq here\n=v\n[X] trailing\n[Y\nA=1\n";
    let (u, _) = parse_checked("u/a.service", text);
    assert_eq!(u, parse(text));
    assert_eq!(
        rendered("u/a.service", text),
        [
            "u/a.service:1:1: warning: text before the first [section] is ignored",
            "u/a.service:5:1: warning: missing '=', line ignored",
            "u/a.service:6:1: warning: option without a name",
            "u/a.service:7:1: text after the section header [X]: \"trailing\"",
            "u/a.service:8:1: unterminated section header (no ']')",
        ]
    );
    // A clean file has none.
    assert!(rendered(
        "f",
        "# c\n[Service]\nExecStart=/bin/true\n\n[Install]\nWantedBy=x\n"
    )
    .is_empty());
}

#[test]
fn long_lines() {
    // 2047 bytes is fine; 2048 bytes or more is refused, as fleet and
    // systemd (LINE_MAX 2048 counting the newline) refuse it.
    let ok = format!("[S]\nA={}\n", "x".repeat(LINE_MAX - 3));
    assert!(rendered("f", &ok).is_empty());
    let bad = format!("[S]\nA={}\nB=1\n", "x".repeat(LINE_MAX - 2));
    assert_eq!(
        rendered("f", &bad),
        ["f:2:1: line too long: 2048 bytes (fleet and systemd refuse lines of 2048 bytes or more)"]
    );
    // The option is still parsed.
    assert_eq!(parse(&bad).options.len(), 2);
    // Continuation lines are checked too, and the CR of CRLF does not count.
    let cont = format!("[S]\nA=a\\\n{}\r\n", "y".repeat(LINE_MAX - 1));
    assert!(rendered("f", &cont).is_empty());
    let cont = format!("[S]\nA=a\\\n{}\n", "y".repeat(LINE_MAX));
    assert_eq!(rendered("f", &cont).len(), 1);
}

#[test]
fn unit_option_serializes_as_fleet_api() {
    let o = UnitOption {
        section: "Service".into(),
        name: "ExecStart".into(),
        value: "/bin/true".into(),
    };
    assert_eq!(
        serde_json::to_string(&o).unwrap(),
        r#"{"section":"Service","name":"ExecStart","value":"/bin/true"}"#
    );
}
