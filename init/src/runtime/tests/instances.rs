//! Instances of templates made at run time: `initctl start` (the `want`
//! request) and `set-target` of an instance nothing names make it from the
//! template read at start, reading no file; a reload keeps the instances
//! still named; a name no template makes is refused and changes nothing;
//! without the templates (after a re-exec) the path is read again.

use super::*;
use flotilla_units::protocol::ErrorCode;

/// The test's units: `app` (the target, naming `echo@app.service`) and
/// the template `echo@.service`.
fn fake() -> FakeSys {
    let sys = fake_with(&[(
        "app",
        "unit: app\ntype: virtual\ndepends-on: [echo@app.service]\n",
    )]);
    sys.set_file(
        format!("{UNITS}/echo@.service"),
        "[Service]\nExecStart=/bin/echo-%i %I %n\n",
    );
    sys
}

fn spawned_argv(sys: &FakeSys) -> Vec<String> {
    sys.spawns().iter().map(|s| s.argv.join(" ")).collect()
}

#[test]
fn start_and_set_target_make_instances_and_a_reload_keeps_them() {
    let mut h = Harness::start(fake(), "app");
    assert_eq!(h.state("echo@app.service"), UnitState::Running);
    assert!(spawned_argv(h.sys()).contains(&"/bin/echo-app app echo@app.service".to_string()));

    h.sys().take_calls();
    let r = h.request(Request::Want {
        unit: "echo@a-b.service".into(),
    });
    assert!(matches!(r.last(), Some(Reply::Accepted { .. })), "{r:?}");
    h.settle();
    assert_eq!(h.state("echo@a-b.service"), UnitState::Running);
    assert!(spawned_argv(h.sys()).contains(&"/bin/echo-a-b a/b echo@a-b.service".to_string()));
    let read = h
        .sys()
        .take_calls()
        .into_iter()
        .any(|c| matches!(c, Call::ReadFile { .. } | Call::ReadDir(_)));
    assert!(!read, "the template was read at start");
    let pid = h.pid("echo@a-b.service");

    // No template, or no unit name: refused, nothing changes.
    for (name, says) in [
        (
            "nope@1.service",
            "no unit named `nope@1.service`, and no template nope@.service on the unit search path",
        ),
        ("echo@a b.service", "contains ' '"),
    ] {
        let r = h.request(Request::Want { unit: name.into() });
        match r.last() {
            Some(Reply::Error { code, message, .. }) => {
                assert_eq!(*code, ErrorCode::UnknownUnit);
                assert!(message.contains(says), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    // A reload makes the wanted instance again: the same unit, running on.
    h.sys().raise(libc::SIGHUP);
    h.settle();
    assert_eq!(h.pid("echo@a-b.service"), pid);
    assert!(h
        .sys()
        .console_lines()
        .iter()
        .any(|l| l.starts_with("init: reloaded: 0 added, 0 changed, 0 removed")));

    // The target may be an instance.
    let r = h.request(Request::SetTarget {
        target: "echo@t.service".into(),
        wait: false,
        isolate: false,
    });
    assert!(matches!(r.last(), Some(Reply::Accepted { .. })), "{r:?}");
    h.settle();
    assert_eq!(h.state("echo@t.service"), UnitState::Running);
    let r = h.request(Request::SetTarget {
        target: "nope@2.service".into(),
        wait: false,
        isolate: false,
    });
    assert!(
        matches!(
            r.last(),
            Some(Reply::Error {
                code: ErrorCode::UnknownTarget,
                ..
            })
        ),
        "{r:?}"
    );

    // After a re-exec the runtime has units and no templates: the first
    // instance made reads the path again.
    h.rt.units.templates = None;
    h.sys().take_calls();
    let r = h.request(Request::Want {
        unit: "echo@r.service".into(),
    });
    assert!(matches!(r.last(), Some(Reply::Accepted { .. })), "{r:?}");
    h.settle();
    assert_eq!(h.state("echo@r.service"), UnitState::Running);
    assert!(h
        .sys()
        .take_calls()
        .iter()
        .any(|c| matches!(c, Call::ReadDir(d) if d == std::path::Path::new(UNITS))));
}
