//! fleet's canonical unit text and unit hash.

use crate::{canonical_text, check_options, parse, unit_hash, LINE_MAX};
use flotilla_units::fleet::UnitOption;

fn o(s: &str, n: &str, v: &str) -> UnitOption {
    UnitOption {
        section: s.into(),
        name: n.into(),
        value: v.into(),
    }
}

const SLEEP_HASH: &str = "1c6fb6f3684bafb0c173d8b8b957ceff031180c1";

#[test]
fn the_spec_example_hash() {
    let u = parse("[Service]\nExecStart=/bin/sleep 100\n");
    assert_eq!(
        canonical_text(&u.options),
        "[Service]\nExecStart=/bin/sleep 100\n"
    );
    assert_eq!(unit_hash(&u.options), SLEEP_HASH);
    // From an option list (as the API and etcd carry it).
    assert_eq!(
        unit_hash(&[o("Service", "ExecStart", "/bin/sleep 100")]),
        SLEEP_HASH
    );
}

#[test]
fn comments_and_spacing_do_not_change_the_hash() {
    let variants = [
        "[Service]\nExecStart=/bin/sleep 100",
        "[Service]\r\nExecStart=/bin/sleep 100\r\n",
        "# a comment\n; another\n\n[Service]\n\n  ExecStart =   /bin/sleep 100   \n\n",
        "text before the first section\n[Service]\n# c\nExecStart=/bin/sleep 100\n# trailing\n",
        "[Service]\nnot an option\nExecStart=/bin/sleep 100\n",
    ];
    for v in variants {
        assert_eq!(unit_hash(&parse(v).options), SLEEP_HASH, "{v:?}");
    }
}

#[test]
fn canonical_form_table() {
    let cases: &[(&str, Vec<UnitOption>, &str)] = &[
        ("no options: empty text", vec![], ""),
        (
            "one section",
            vec![o("Unit", "Description", "Foo"), o("Unit", "BindsTo", "bar.service")],
            "[Unit]\nDescription=Foo\nBindsTo=bar.service\n",
        ),
        (
            "repeated names are kept",
            vec![o("Unit", "Description", "Foo"), o("Unit", "Description", "Bar")],
            "[Unit]\nDescription=Foo\nDescription=Bar\n",
        ),
        (
            "one blank line between sections, none at the end",
            vec![o("Unit", "Description", "Foo"), o("Service", "ExecStart", "/usr/bin/sleep infinity")],
            "[Unit]\nDescription=Foo\n\n[Service]\nExecStart=/usr/bin/sleep infinity\n",
        ),
        (
            "options grouped by section, sections in first-seen order",
            vec![
                o("Unit", "Description", "Foo"),
                o("Service", "ExecStart", "/usr/bin/sleep infinity"),
                o("Unit", "BindsTo", "bar.service"),
                o("X-Foo", "Bar", "baz"),
                o("Service", "ExecStop", "/usr/bin/sleep 1"),
            ],
            "[Unit]\nDescription=Foo\nBindsTo=bar.service\n\n[Service]\nExecStart=/usr/bin/sleep infinity\nExecStop=/usr/bin/sleep 1\n\n[X-Foo]\nBar=baz\n",
        ),
        ("UTF-8 is fine", vec![o("©", "µ☃", "ÇôrèÕ$")], "[©]\nµ☃=ÇôrèÕ$\n"),
        ("values are written as they are", vec![o("S", "A", "x \\\ny")], "[S]\nA=x \\\ny\n"),
    ];
    for (what, options, text) in cases {
        assert_eq!(canonical_text(options), *text, "{what}");
    }
}

#[test]
fn hashes_follow_the_canonical_text() {
    // The SHA1 of the empty text.
    assert_eq!(unit_hash(&[]), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    let a = [
        o("Unit", "Description", "x"),
        o("Service", "ExecStart", "/bin/true"),
    ];
    let b = [
        o("Service", "ExecStart", "/bin/true"),
        o("Unit", "Description", "x"),
    ];
    assert_ne!(unit_hash(&a), unit_hash(&b), "section order matters");
    let c = [
        o("Unit", "Description", "x"),
        o("Service", "ExecStart", "/bin/true"),
        o("Unit", "Wants", "y"),
    ];
    let d = [
        o("Unit", "Description", "x"),
        o("Unit", "Wants", "y"),
        o("Service", "ExecStart", "/bin/true"),
    ];
    assert_eq!(
        unit_hash(&c),
        unit_hash(&d),
        "options are grouped by section"
    );
    assert!(unit_hash(&c)
        .chars()
        .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    assert_eq!(unit_hash(&c).len(), 40);
}

#[test]
fn parsing_the_canonical_text_gives_the_grouped_options() {
    let opts = vec![
        o("Unit", "Description", "x"),
        o("Service", "ExecStart", "/bin/a \\\n b"),
        o("Unit", "Wants", "y"),
        o("X-Fleet", "Global", "true"),
    ];
    let back = parse(&canonical_text(&opts)).options;
    assert_eq!(
        back,
        vec![
            opts[0].clone(),
            opts[2].clone(),
            opts[1].clone(),
            opts[3].clone()
        ]
    );
}

#[test]
fn check_options_refuses_what_fleet_refused() {
    assert_eq!(
        check_options(&[o("Service", "ExecStart", "/bin/true")]),
        Ok(())
    );
    assert_eq!(check_options(&[]), Ok(()));
    // "ExecStart=" + value: 2047 bytes is fine, 2048 is not.
    let v = "x".repeat(LINE_MAX - 11);
    assert_eq!(check_options(&[o("Service", "ExecStart", &v)]), Ok(()));
    let v = "x".repeat(LINE_MAX - 10);
    assert_eq!(
        check_options(&[o("Service", "ExecStart", &v)]),
        Err("line too long (max 2048 bytes)".to_string())
    );
    assert_eq!(
        check_options(&[o("Ser]vice", "A", "1")]),
        Err("invalid section name \"Ser]vice\"".to_string())
    );
    assert_eq!(
        check_options(&[o("Ser\nvice", "A", "1")]),
        Err("invalid section name \"Ser\\nvice\"".to_string())
    );
    assert_eq!(
        check_options(&[o("Service", "Exec\nStart", "1")]),
        Err("unexpected newline encountered while parsing option name".to_string())
    );
}
