//! Unit names (`docs/fleet-compat.md`), templates and instances, specifiers,
//! `[X-Fleet]` values and booleans.

use flotilla_units::fleet::{fleet_conflicts_values, fleet_values, parse_bool};
use flotilla_units::specifier::expand_specifiers;
use flotilla_units::unit_name::{
    instance, is_instance, is_template, prefix, template_of, validate_unit_name, UnitName,
    UNIT_SUFFIXES,
};

#[test]
fn good_names() {
    let long = format!("{}.service", "a".repeat(256 - ".service".len()));
    let mut good = vec![
        "a.service".to_string(),
        "web.service".into(),
        "foo@.service".into(),
        "foo@bar.service".into(),
        "foo@bar@baz.service".into(),
        "ssh@.socket".into(),
        "x@1.path".into(),
        "x@1.target".into(),
        "x@1.timer".into(),
        "a:b_c.d-e.timer".into(),
        "network-online.target".into(),
        "A9.service".into(),
        long,
    ];
    good.extend(UNIT_SUFFIXES.iter().map(|s| format!("unit.{s}")));
    for n in good {
        assert_eq!(validate_unit_name(&n), Ok(()), "{n}");
    }
}

#[test]
fn bad_names_and_the_rule_each_breaks() {
    let long = format!("{}.service", "a".repeat(257 - ".service".len()));
    let cases: Vec<(String, &str)> = vec![
        ("".into(), "unit name is empty"),
        (long, "unit name is longer than 256 characters (257)"),
        (
            "web".into(),
            r#"unit name "web" has no suffix such as .service"#,
        ),
        ("web.".into(), r#"unit name "web." ends with '.'"#),
        (
            "web.service.".into(),
            r#"unit name "web.service." ends with '.'"#,
        ),
        (
            "web.bar".into(),
            r#"unit name "web.bar" has an unknown suffix .bar (use one of automount, busname, device, mount, path, scope, service, slice, snapshot, socket, swap, target, timer)"#,
        ),
        (
            "web.Service".into(),
            r#"unit name "web.Service" has an unknown suffix .Service (use one of automount, busname, device, mount, path, scope, service, slice, snapshot, socket, swap, target, timer)"#,
        ),
        (
            ".service".into(),
            r#"unit name ".service" has nothing before the suffix"#,
        ),
        (
            "foo@.mount".into(),
            r#"unit name "foo@.mount": a template or instance must be a .path, .service, .socket, .target or .timer unit"#,
        ),
        (
            "foo@bar.device".into(),
            r#"unit name "foo@bar.device": a template or instance must be a .path, .service, .socket, .target or .timer unit"#,
        ),
        (
            "@foo.service".into(),
            r#"unit name "@foo.service" starts with '@'"#,
        ),
        (
            "@.service".into(),
            r#"unit name "@.service" starts with '@'"#,
        ),
        (
            "we b.service".into(),
            r#"unit name "we b.service" contains ' ' (allowed: A-Z a-z 0-9 : _ . @ -)"#,
        ),
        (
            "web/x.service".into(),
            r#"unit name "web/x.service" contains '/' (allowed: A-Z a-z 0-9 : _ . @ -)"#,
        ),
        (
            "dev-x\\x2d.device".into(),
            r#"unit name "dev-x\\x2d.device" contains '\\' (allowed: A-Z a-z 0-9 : _ . @ -)"#,
        ),
        (
            "wéb.service".into(),
            r#"unit name "wéb.service" contains 'é' (allowed: A-Z a-z 0-9 : _ . @ -)"#,
        ),
    ];
    for (name, msg) in cases {
        assert_eq!(validate_unit_name(&name), Err(msg.to_string()), "{name}");
    }
}

#[test]
fn name_parts() {
    // (full, name, prefix, instance, suffix, template, is_template, is_instance)
    let cases = [
        (
            "web.service",
            "web",
            "web",
            "",
            "service",
            None,
            false,
            false,
        ),
        (
            "ssh@.service",
            "ssh@",
            "ssh",
            "",
            "service",
            Some("ssh@.service"),
            true,
            false,
        ),
        (
            "ssh@2.service",
            "ssh@2",
            "ssh",
            "2",
            "service",
            Some("ssh@.service"),
            false,
            true,
        ),
        (
            "a.b@c.d.socket",
            "a.b@c.d",
            "a.b",
            "c.d",
            "socket",
            Some("a.b@.socket"),
            false,
            true,
        ),
        (
            "a@b@c.service",
            "a@b@c",
            "a",
            "b@c",
            "service",
            Some("a@.service"),
            false,
            true,
        ),
        ("noext", "noext", "noext", "", "", None, false, false),
        ("noext@x", "noext@x", "noext", "x", "", None, false, false),
    ];
    for (full, name, pre, inst, suffix, template, templ, insta) in cases {
        let n = UnitName::split(full);
        assert_eq!(n.full, full);
        assert_eq!(n.name, name, "{full}");
        assert_eq!(n.prefix, pre, "{full}");
        assert_eq!(n.instance, inst, "{full}");
        assert_eq!(n.suffix, suffix, "{full}");
        assert_eq!(n.template.as_deref(), template, "{full}");
        assert_eq!(n.is_template(), templ, "{full}");
        assert_eq!(n.is_instance(), insta, "{full}");
        assert_eq!(is_template(full), templ, "{full}");
        assert_eq!(is_instance(full), insta, "{full}");
        assert_eq!(prefix(full), pre, "{full}");
    }
    assert_eq!(
        UnitName::parse("web").unwrap_err(),
        r#"unit name "web" has no suffix such as .service"#
    );
    assert_eq!(
        UnitName::parse("ssh@.service")
            .unwrap()
            .instantiate("2")
            .as_deref(),
        Some("ssh@2.service")
    );
    assert_eq!(
        UnitName::parse("ssh@1.service").unwrap().instantiate("2"),
        None
    );
    assert_eq!(
        UnitName::parse("web.service").unwrap().instantiate("2"),
        None
    );
}

#[test]
fn templates_and_instances() {
    assert_eq!(
        template_of("foo@1.service").as_deref(),
        Some("foo@.service")
    );
    assert_eq!(template_of("foo@bar.timer").as_deref(), Some("foo@.timer"));
    assert_eq!(
        template_of("foo@.service"),
        None,
        "a template has no template"
    );
    assert_eq!(template_of("foo.service"), None);
    assert_eq!(instance("foo@1.service").as_deref(), Some("1"));
    assert_eq!(instance("foo@.service"), None);
    assert_eq!(instance("foo.service"), None);
    assert!(is_template("foo@.service"));
    assert!(!is_template("foo@1.service"));
    assert!(!is_template("foo.service"));
}

#[test]
fn specifiers() {
    let cases = [
        ("%n", "ssh@2.service", "ssh@2.service"),
        ("%N", "ssh@2.service", "ssh@2"),
        ("%p", "ssh@2.service", "ssh"),
        ("%i", "ssh@2.service", "2"),
        ("%P %I", "ssh@2.service", "ssh 2"),
        ("%%", "ssh@2.service", "%"),
        ("%%n is literal", "ssh@2.service", "%n is literal"),
        ("%p-%i.socket", "web@8080.service", "web-8080.socket"),
        ("%n %N %p [%i]", "web.service", "web.service web web []"),
        ("%i", "ssh@.service", ""),
        ("no specifier", "a.service", "no specifier"),
        ("%H and %x stay", "a.service", "%H and %x stay"),
        ("trailing %", "a.service", "trailing %"),
        ("100%% %i%%", "a@b.service", "100% b%"),
        ("é%ié", "a@b.service", "ébé"),
    ];
    for (value, unit, want) in cases {
        assert_eq!(expand_specifiers(value, unit), want, "{value:?} for {unit}");
    }
}

#[test]
fn x_fleet_values() {
    let cases: &[(&str, &[&str])] = &[
        (
            r#""region=us-east-1" "diskType=SSD""#,
            &["region=us-east-1", "diskType=SSD"],
        ),
        (r#""region=us-east-1""#, &["region=us-east-1"]),
        (
            "region=us-east-1 diskType=SSD",
            &["region=us-east-1 diskType=SSD"],
        ),
        (r#"region="a b""#, &[r#"region="a b""#]),
        (r#""a b" "c""#, &["a b", "c"]),
        (r#""a=1"  "b=2""#, &["a=1", "", "b=2"]),
        (r#""a"b c"d""#, &["ab", "cd"]),
        (r#""a	b""#, &["a\tb"]),
        ("\"", &[""]),
        ("\"\"", &[""]),
        ("", &[""]),
        ("plain", &["plain"]),
    ];
    for (value, want) in cases {
        assert_eq!(fleet_values(value), *want, "{value:?}");
    }
}

#[test]
fn x_fleet_conflicts_values() {
    let cases: &[(&str, &[&str])] = &[
        ("a.service", &["a.service"]),
        ("a.service b*.service", &["a.service", "b*.service"]),
        ("  a.service\tb.service  ", &["a.service", "b.service"]),
        (
            r#""a.service" "b.service c.service""#,
            &["a.service", "b.service", "c.service"],
        ),
        (r#""a"  "b""#, &["a", "b"]),
        ("", &[]),
    ];
    for (value, want) in cases {
        assert_eq!(fleet_conflicts_values(value), *want, "{value:?}");
    }
}

#[test]
fn booleans() {
    for v in [
        "true", "TRUE", "True", "yes", "YES", "1", "on", "On", "t", "T", " true ",
    ] {
        assert_eq!(parse_bool(v), Some(true), "{v:?}");
    }
    for v in ["false", "FALSE", "no", "No", "0", "off", "OFF", "f", "F"] {
        assert_eq!(parse_bool(v), Some(false), "{v:?}");
    }
    for v in ["", "y", "n", "2", "maybe", "truee", "enabled"] {
        assert_eq!(parse_bool(v), None, "{v:?}");
    }
}
