use super::*;

fn tree(text: &str) -> Node {
    match parse("t.yaml", text) {
        Ok(Some(n)) => n,
        other => panic!("{text:?}: {other:?}"),
    }
}

fn map(n: &Node) -> &[(Node, Node)] {
    match &n.value {
        Value::Map(m) => m,
        _ => panic!("not a map: {n:?}"),
    }
}

fn yaml_err(text: &str) -> String {
    match parse("t.yaml", text) {
        Err(d) => d.to_string(),
        Ok(n) => panic!("{text:?} parsed: {n:?}"),
    }
}

#[test]
fn positions_and_values() {
    let n = tree("a: x\nb:\n  - 1\n  - 0755\nc: {d: true, e: ~}\nf: no\ng: 1_000\n");
    let m = map(&n);
    assert_eq!(n.pos, Pos::new(1, 1));
    assert_eq!(m[0].0.pos, Pos::new(1, 1));
    assert_eq!(m[0].1.pos, Pos::new(1, 4));
    assert_eq!(m[0].1.value, Value::Str("x".into()));
    let Value::Seq(items) = &m[1].1.value else {
        panic!("{:?}", m[1].1)
    };
    assert_eq!(items[0].pos, Pos::new(3, 5));
    assert_eq!(items[0].value, Value::Int(1));
    // Leading zeros and underscores stay text.
    assert_eq!(items[1].value, Value::Str("0755".into()));
    assert_eq!(m[4].1.value, Value::Str("1_000".into()));
    let c = map(&m[2].1);
    assert_eq!(c[0].1.value, Value::Bool(true));
    assert_eq!(c[1].1.value, Value::Null);
    // YAML 1.1 booleans stay text.
    assert_eq!(m[3].1.value, Value::Str("no".into()));
}

#[test]
fn numbers_keep_their_spelling() {
    let n = tree(
        "a: 1.50\nb: 0x10\nc: 1e999\nd: 123456789012345678901234567890\ne: -3\nf: &x 7\ng: *x\n",
    );
    let texts: Vec<String> = map(&n)
        .iter()
        .map(|(_, v)| v.text().unwrap_or_default())
        .collect();
    assert_eq!(
        texts,
        [
            "1.50",
            "0x10",
            "1e999",
            "123456789012345678901234567890",
            "-3",
            "7",
            "7"
        ]
    );
}

#[test]
fn columns_inside_strings() {
    let n = tree("a: x, y\nb: 'x, y'\nc: \"x\\ty\"\nd: |\n  x, y\n");
    let m = map(&n);
    assert_eq!(m[0].1.pos_at(3), Pos::new(1, 7));
    assert_eq!(m[1].1.pos_at(3), Pos::new(2, 8));
    // An escape changes the text: no column inside it is trusted.
    assert_eq!(m[2].1.pos_at(2), Pos::new(3, 4));
    assert_eq!(m[3].1.pos_at(3), m[3].1.pos);
}

#[test]
fn empty_documents() {
    assert_eq!(parse("t.yaml", ""), Ok(None));
    assert_eq!(parse("t.yaml", "# nothing\n\n"), Ok(None));
    assert_eq!(parse("t.yaml", "---\n...\n"), Ok(None));
}

#[test]
fn syntax_errors_have_the_parsers_position() {
    // An unclosed flow list: the parser points at its `[`.
    assert_eq!(
        yaml_err("a: [1, 2\n"),
        "t.yaml:1:4: invalid YAML: unclosed bracket '['"
    );
    // `key: value: value` is not YAML.
    assert_eq!(
        yaml_err("a: b: c\n"),
        "t.yaml:1:5: invalid YAML: mapping values are not allowed in this context"
    );
    assert_eq!(
        yaml_err("a: 1\n---\nb: 2\n"),
        "t.yaml:3:1: a second YAML document starts here; a file holds exactly one"
    );
    assert_eq!(
        yaml_err("a: *nope\n"),
        "t.yaml:1:4: invalid YAML: alias references unknown anchor"
    );
}

#[test]
fn budget() {
    let deep = format!("a: {}{}\n", "[".repeat(40), "]".repeat(40));
    let e = yaml_err(&deep);
    assert!(e.starts_with("t.yaml:1:"), "{e}");
    assert!(e.contains("too large or too deeply nested"), "{e}");
    // A billion laughs.
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 0..9 {
        let prev = if i == 0 {
            "a".to_string()
        } else {
            format!("b{}", i - 1)
        };
        let refs = vec![format!("*{prev}"); 10].join(", ");
        bomb.push_str(&format!("b{i}: &b{i} [{refs}]\n"));
    }
    let e = yaml_err(&bomb);
    assert!(e.starts_with("t.yaml:"), "{e}");
    let big = "a: b\n".repeat(MAX_FILE_SIZE / 5 + 1);
    assert_eq!(
        yaml_err(&big),
        format!(
            "t.yaml:1:1: the file is {} bytes; the limit is 1 MiB (1048576 bytes)",
            big.len()
        )
    );
}

fn keys(text: &str, known: &[&'static str]) -> (Vec<&'static str>, Vec<String>) {
    let n = tree(text);
    let mut sink = Sink::new("t.yaml");
    let got = known_entries(map(&n), known, "key", &mut sink)
        .iter()
        .map(|e| e.key)
        .collect();
    let diags = sink.into_sorted().iter().map(ToString::to_string).collect();
    (got, diags)
}

#[test]
fn key_checks() {
    let known = ["unit", "depends-on", "exec-start", "type"];
    let (got, diags) = keys(
        "unit: a\ndepend-on: b\nunit: c\n[x]: 1\nExec_Start: x\nzzz: 1\ntyp: x\n",
        &known,
    );
    assert_eq!(got, ["unit"]);
    assert_eq!(
        diags,
        [
            "t.yaml:2:1: unknown key `depend-on`; did you mean `depends-on`?",
            "t.yaml:3:1: duplicate key `unit` (first given at line 1, column 1)",
            "t.yaml:4:1: a key must be a name, found a list",
            "t.yaml:5:1: unknown key `Exec_Start`; did you mean `exec-start`?",
            "t.yaml:6:1: unknown key `zzz`",
            "t.yaml:7:1: unknown key `typ`; did you mean `type`?",
        ]
    );
    let (_, diags) = keys("1: a\ntrue: b\n", &known);
    assert_eq!(
        diags,
        [
            "t.yaml:1:1: a key must be a name, found a number `1`",
            "t.yaml:2:1: a key must be a name, found a boolean `true`"
        ]
    );
}

#[test]
fn suggestions() {
    let c = [
        "depends-on",
        "depends-ms",
        "waits-for",
        "exec-start",
        "exec-stop",
        "unit",
    ];
    assert_eq!(suggest("dependson", &c), Some("depends-on"));
    assert_eq!(suggest("depends_ms", &c), Some("depends-ms"));
    assert_eq!(suggest("wiats-for", &c), Some("waits-for"));
    assert_eq!(suggest("ExecStart", &c), Some("exec-start"));
    assert_eq!(suggest("Unit", &c), Some("unit"));
    assert_eq!(suggest("after", &c), None);
    assert_eq!(suggest("", &c), None);
}

proptest::proptest! {
    #[test]
    fn parse_never_panics(s in "\\PC*") {
        let _ = parse("t.yaml", &s);
    }

    #[test]
    fn parse_never_panics_on_yamlish_text(
        s in "([a-z]{0,3}|[-:,#&*!|>'\"\\[\\]{}? \n\t]){0,60}"
    ) {
        let _ = parse("t.yaml", &s);
    }
}
