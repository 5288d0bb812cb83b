//! What clusterd relies on from unit files, pinned by tests.
//!
//! There is one implementation of fleet's unit-file rules in the workspace:
//! `flotilla_systemd` (parsing, canonical text and hash, the option checks
//! of the API) over `flotilla_units`'s names, templates and instances,
//! specifiers, `[X-Fleet]` value splitting and booleans. clusterd's API, engine and
//! agent all use it, so they agree with `initctl cluster` and with the local
//! translator byte for byte. This module only holds the tests of the
//! behaviours clusterd depends on (docs/fleet-compat.md "Unit files"), so that a
//! change there that would break fleet compatibility fails here too.

#[cfg(test)]
mod tests {
    use flotilla_systemd::{canonical_text, parse, unit_hash};
    use flotilla_units::fleet::{fleet_values, parse_bool, UnitOption};
    use flotilla_units::specifier::expand_specifiers;
    use flotilla_units::unit_name::{is_template, template_of, validate_unit_name};

    fn opt(s: &str, n: &str, v: &str) -> UnitOption {
        UnitOption {
            section: s.into(),
            name: n.into(),
            value: v.into(),
        }
    }

    #[test]
    fn hash_of_the_fleet_notes_example() {
        let o = [opt("Service", "ExecStart", "/bin/sleep 100")];
        assert_eq!(canonical_text(&o), "[Service]\nExecStart=/bin/sleep 100\n");
        assert_eq!(unit_hash(&o), "1c6fb6f3684bafb0c173d8b8b957ceff031180c1");
    }

    #[test]
    fn canonical_groups_sections_in_first_seen_order() {
        let o = [
            opt("Unit", "A", "1"),
            opt("Service", "B", "2"),
            opt("Unit", "C", "3"),
        ];
        assert_eq!(canonical_text(&o), "[Unit]\nA=1\nC=3\n\n[Service]\nB=2\n");
    }

    #[test]
    fn parse_comments_and_spacing_do_not_change_the_hash() {
        let a = parse("junk\n[Service]\n# c\n ExecStart = /bin/sleep 100 \n; x\n");
        assert_eq!(
            unit_hash(&a.options),
            "1c6fb6f3684bafb0c173d8b8b957ceff031180c1"
        );
        let b = parse("[Service]\nExecStart=a \\\n b\nX=1\nX=2\n");
        assert_eq!(b.options[0].value, "a \\\n b");
        assert_eq!(b.options.len(), 3);
    }

    #[test]
    fn names() {
        let ok = [
            "foo.service",
            "a:b_c-d.e.service",
            "foo@.service",
            "foo@1.service",
            "x.mount",
        ];
        for n in ok {
            assert!(validate_unit_name(n).is_ok(), "{n}");
        }
        let long = format!("{}.service", "a".repeat(250));
        let bad = [
            "",
            "foo",
            "foo.",
            "foo.bar",
            "@foo.service",
            "foo@.mount",
            "fo o.service",
            &long,
        ];
        for n in bad {
            assert!(validate_unit_name(n).is_err(), "{n}");
        }
        assert!(is_template("foo@.service"));
        assert!(!is_template("foo@1.service"));
        assert_eq!(
            template_of("foo@1.service").as_deref(),
            Some("foo@.service")
        );
        assert_eq!(template_of("foo@.service"), None);
    }

    #[test]
    fn values_and_specifiers() {
        assert_eq!(fleet_values("a=b c=d"), vec!["a=b c=d"]);
        assert_eq!(fleet_values("\"a=b\" \"c=d\""), vec!["a=b", "c=d"]);
        assert_eq!(fleet_values("\"a=b c\" \"d\""), vec!["a=b c", "d"]);
        let n = "ssh@2.service";
        assert_eq!(
            expand_specifiers("%n|%N|%p|%i|%%|%x", n),
            "ssh@2.service|ssh@2|ssh|2|%|%x"
        );
        // fleet's Global: true for true/yes/1/on/t in any case, else false.
        let fleet_true = |v: &str| parse_bool(v) == Some(true);
        assert!(fleet_true("T") && fleet_true("on") && fleet_true("YES") && !fleet_true("no"));
        assert!(!fleet_true("maybe"));
    }
}
