//! The model's types filled from systemd unit files: a service's context
//! from its `[Service]` options, a unit's dependencies in systemd's terms.

use flotilla_units::context::ServiceContext;
use flotilla_units::protocol::Dependencies;

#[test]
fn a_service_section_sets_its_context_keys() {
    let unit = crate::parse(
        "[Unit]\nDescription=x\n[Service]\nExecStart=/bin/x\nUMask=007\nReadWriteDirectories=-/etc/x\n\
         SystemCallFilter=@system-service\nSystemCallFilter=~ @privileged\n",
    );
    let c = ServiceContext::from_service_options(&unit.options).unwrap();
    assert_eq!(c.umask, Some(0o007));
    assert_eq!(c.sandbox.read_write_paths.len(), 1);
    assert_eq!(c.sandbox.system_call_filter.lines.len(), 2);
    let bad = crate::parse("[Service]\nNice=99\n");
    assert_eq!(
        ServiceContext::from_service_options(&bad.options).unwrap_err(),
        "Nice=99: 99 is out of range (a nice level is from -20 to 19)"
    );
}

/// A systemd unit's dependencies as systemd's `Requires`, `Wants`,
/// `After`, `Before` and `Conflicts` show them, whichever list of the
/// spec the translator put each in (ordered or not).
#[test]
fn dependencies_in_systemds_terms() {
    let p = crate::translate_file(
        "u/web.service",
        "web.service",
        "[Unit]\nRequires=db.service\nAfter=db.service net.target\nWants=cache.service \
         log.service\nAfter=log.service\nBindsTo=peer.service\nBefore=multi-user.target\n\
         Conflicts=old.service\n[Service]\nExecStart=/bin/true\n",
    );
    let spec = p.spec.expect("translated");
    let d = Dependencies::of(&spec, &p.origin);
    assert_eq!(d.requires, ["db.service", "peer.service"]);
    assert_eq!(d.wants, ["cache.service", "log.service"]);
    assert_eq!(d.after, ["db.service", "log.service", "net.target"]);
    assert_eq!(d.before, ["multi-user.target"]);
    assert_eq!(d.conflicts, ["old.service"]);
    // An alias by its unit's name, once.
    let r = d.renamed(|n| {
        if n == "log.service" {
            "cache.service".into()
        } else {
            n.into()
        }
    });
    assert_eq!(r.wants, ["cache.service"]);
    assert_eq!(r.after, ["cache.service", "db.service", "net.target"]);
    // A `.wants/` or `.requires/` link to a unit not found: listed, as
    // systemd lists it, in its list.
    let mut origin = p.origin.clone();
    origin.set_unfound_links(vec![(
        flotilla_units::spec::TargetList::Wants,
        "gone.service".into(),
    )]);
    let d = Dependencies::of(&spec, &origin);
    assert_eq!(d.wants, ["cache.service", "gone.service", "log.service"]);
    assert_eq!(d.requires, ["db.service", "peer.service"]);
    // Absent lists are absent from the JSON.
    let empty = serde_json::to_string(&Dependencies::default()).unwrap();
    assert_eq!(empty, "{}");
}
