//! The transient units a `StartTransientUnit` asks for: services, scopes
//! and slices, their properties and their refusals.

use super::*;
use flotilla_units::context::process::Output;
use flotilla_units::spec::UnitType;
use zbus::zvariant::serialized::{Context, Data};
use zbus::zvariant::LE;

/// A seed of the fuzz target (`fuzz/seeds/dbus_transient/`): a body
/// as `systemd-run` and logind send it, in D-Bus's wire format.
fn seed(name: &str) -> Result<Asked, BusError> {
    let path = format!(
        "{}/../fuzz/seeds/dbus_transient/{name}.bin",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(path).unwrap();
    let data = Data::new(&bytes[..], Context::new_dbus(LE, 0));
    let ((name, _mode, props, aux), _) =
        data.deserialize::<(String, String, Props, Aux)>().unwrap();
    asked(&name, props, aux)
}

#[test]
fn what_systemd_run_and_logind_send() {
    let a = seed("service").unwrap();
    assert_eq!(a.unit.name, "run-u7.service");
    assert_eq!(a.unit.kind, UnitType::Oneshot);
    let argv = &a.unit.exec_start.as_ref().unwrap().argv;
    assert_eq!(argv.to_vec(), ["/bin/sleep", "300"]);
    assert!(a.adopt.is_empty());
    // To the journal, as systemd's DefaultStandardOutput=journal.
    assert_eq!(a.unit.extras.context.standard_output, Some(Output::Log));

    let a = seed("scope").unwrap();
    assert_eq!(a.unit.kind, UnitType::Scope);
    assert_eq!(a.adopt, [1234]);
    // `RequiresMountsFor=/root`: required and ordered before (one no
    // unit defines counts as met).
    for m in ["-.mount", "root.mount"] {
        assert!(a.unit.depends_on.iter().any(|d| d == m), "{m}: {a:?}");
    }
    assert!(a.file.contains("RequiresMountsFor=/root"), "{}", a.file);
    assert!(a.unit.wants.contains(&"user@0.service".to_string()));
    assert_eq!(a.unit.extras.ignore_on_isolate, Some(true));
}

/// `systemd-run --scope --slice=workload.slice -p Delegate=yes -p
/// User=test`: the scope's cgroup in that slice, delegated to the user.
#[test]
fn a_scope_takes_its_slice_its_delegation_and_its_user() {
    let props: Props = [
        ("PIDs", v(vec![4321u32])),
        ("Slice", v("workload.slice")),
        ("Delegate", v(true)),
        ("User", v("test")),
        ("IOAccounting", v(true)),
    ]
    .into_iter()
    .map(|(k, x)| (k.to_string(), x))
    .collect();
    let a = asked("test-workload0.scope", props, Vec::new()).unwrap();
    let r = &a.unit.extras.context.resources;
    assert_eq!(r.slice.as_deref(), Some("workload.slice"));
    assert_eq!(
        r.delegate,
        Some(flotilla_units::context::resources::Delegation::All)
    );
    assert_eq!(r.accounting, ["io"]);
    assert_eq!(a.unit.extras.user.as_deref(), Some("test"));
    let bad: Props = vec![
        ("PIDs".to_string(), v(vec![4321u32])),
        ("Slice".to_string(), v("a--b.slice")),
    ];
    let e = asked("x.scope", bad, Vec::new()).unwrap_err();
    assert!(e.message.contains("a--b.slice"), "{}", e.message);
}

/// `systemd-run --scope -p RuntimeMaxSec=5s` (systemd's test 16): the
/// scope's runtime limit; infinity is none.
#[test]
fn a_scope_takes_its_runtime_limit() {
    let props = |max: u64| -> Props {
        vec![
            ("PIDs".to_string(), v(vec![4321u32])),
            ("RuntimeMaxUSec".to_string(), v(max)),
            ("RuntimeRandomizedExtraUSec".to_string(), v(0u64)),
        ]
    };
    let a = asked("t.scope", props(5_000_000), Vec::new()).unwrap();
    let five = std::time::Duration::from_secs(5);
    assert_eq!(
        a.unit.runtime_max(),
        Some((five, std::time::Duration::ZERO))
    );
    let a = asked("t.scope", props(u64::MAX), Vec::new()).unwrap();
    assert_eq!(a.unit.runtime_max(), None);
}

/// The search path's drop-ins for the name apply over the properties,
/// with the unit's specifiers (systemd's test 15: `service.d/`'s
/// `ExecCondition=echo %n` for `systemd-run -u a-b-c2.service -p
/// Description=sleepy`); a problem in a drop-in is not the caller's.
#[test]
fn a_services_drop_ins_apply_over_its_properties() {
    let start = OwnedValue::try_from(zbus::zvariant::Value::from(vec![(
        "/bin/sleep".to_string(),
        vec!["/bin/sleep".to_string(), "1".to_string()],
        false,
    )]))
    .unwrap();
    let props: Props = vec![
        ("Description".to_string(), v("sleepy")),
        ("ExecStart".to_string(), start),
    ];
    let dropins = [(
        "a-b-c2.service".to_string(),
        vec![
            (
                "/etc/systemd/system/a-.service.d/x.conf".to_string(),
                "[Unit]\nDescription=dropped\n[Service]\nExecCondition=echo %n\n".to_string(),
            ),
            (
                "/etc/systemd/system/service.d/y.conf".to_string(),
                "[Service]\nNoSuchKey=1\n".to_string(),
            ),
        ],
    )]
    .into();
    let a = asked_with("a-b-c2.service", props, Vec::new(), &dropins).unwrap();
    let cond = &a.unit.extras.exec_condition;
    assert_eq!(cond[0].argv.to_vec(), ["echo", "a-b-c2.service"]);
    assert_eq!(a.unit.description.as_deref(), Some("dropped"));
}

/// A service of `props` (its ExecStart given).
fn service_of(props: Vec<(&str, OwnedValue)>) -> Result<UnitSpec, BusError> {
    let mut all: Props = vec![(
        "ExecStart".to_string(),
        OwnedValue::try_from(zbus::zvariant::Value::from(vec![(
            "/bin/sleep".to_string(),
            vec!["/bin/sleep".to_string(), "1".to_string()],
            false,
        )]))
        .unwrap(),
    )];
    all.extend(props.into_iter().map(|(k, v)| (k.to_string(), v)));
    asked("t.service", all, Vec::new()).map(|a| a.unit)
}

pub(super) fn v<'a>(x: impl Into<zbus::zvariant::Value<'a>>) -> OwnedValue {
    OwnedValue::try_from(x.into()).unwrap()
}

pub(super) fn props(list: Vec<(&str, OwnedValue)>) -> Props {
    list.into_iter().map(|(k, x)| (k.to_string(), x)).collect()
}

/// The service systemd-run sends with a trigger (a timer, a path):
/// `/bin/true`.
pub(super) fn service_aux(name: &str) -> Aux {
    let start = v(vec![(
        "/bin/true".to_string(),
        vec!["/bin/true".to_string()],
        false,
    )]);
    vec![(
        name.to_string(),
        props(vec![("Description", v("/bin/true")), ("ExecStart", start)]),
    )]
}

#[test]
fn a_service_takes_what_a_unit_file_takes() {
    // The seed systemd-run sent with `-p MemoryMax=1M`.
    let a = seed("refused").unwrap();
    assert!(a.unit.extras.context.resources.memory_max.is_some());
    // What systemd's tests 23, 27 and 40 send.
    let u = service_of(vec![
        ("User", v("testuser")),
        ("StandardOutputFile", v("/tmp/out")),
        (
            "ExecStartPostEx",
            v(vec![(
                "/bin/touch".to_string(),
                vec!["/bin/touch".to_string(), "/tmp/post".to_string()],
                vec!["privileged".to_string()],
            )]),
        ),
        ("TimeoutStopUSec", v(3_000_000u64)),
        ("Environment", v(vec!["A=1 2".to_string()])),
    ])
    .unwrap();
    assert_eq!(u.extras.user.as_deref(), Some("testuser"));
    assert_eq!(
        u.extras.context.standard_output,
        Some(Output::File("/tmp/out".into()))
    );
    let post = &u.extras.exec_start_post;
    assert_eq!(post.len(), 1);
    assert_eq!(post[0].argv.to_vec(), ["/bin/touch", "/tmp/post"]);
    assert_eq!(post[0].privileges, flotilla_units::spec::Privileges::Full);
    assert_eq!(u.stop_timeout, std::time::Duration::from_secs(3));
    assert_eq!(
        u.extras.environment.get("A").map(String::as_str),
        Some("1 2")
    );
    // Test 40's `-p ExecConditionEx=:/bin/echo ${1_one}` and test 56's
    // `-p ExecCondition=false`: the commands, with their prefixes.
    let u = service_of(vec![(
        "ExecConditionEx",
        v(vec![(
            "/bin/echo".to_string(),
            vec!["/bin/echo".to_string(), "${1_one}".to_string()],
            vec!["no-env-expand".to_string()],
        )]),
    )])
    .unwrap();
    let c = &u.extras.exec_condition;
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].argv.to_vec(), ["/bin/echo", "${1_one}"]);
    assert!(!c[0].expand_env);
    let u = service_of(vec![(
        "ExecCondition",
        v(vec![(
            "/bin/false".to_string(),
            vec!["/bin/false".to_string()],
            false,
        )]),
    )])
    .unwrap();
    assert_eq!(u.extras.exec_condition[0].argv.to_vec(), ["/bin/false"]);
}

#[test]
fn what_flotilla_cannot_take_is_named() {
    // A key the translator would ignore: refused, naming the property
    // and its unit-file key.
    let e = service_of(vec![("IPAccounting", v(true))]).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.NotSupported");
    assert!(
        e.message.contains("StartTransientUnit with IPAccounting")
            && e.message.contains("IPAccounting= is not supported"),
        "{}",
        e.message
    );
    // `DynamicUser=` (systemd's test 20): the unit file's key, with its
    // implied sandbox.
    let spec = service_of(vec![("DynamicUser", v(true))]).unwrap();
    assert_eq!(spec.extras.dynamic_user, Some(true));
    assert!(spec.extras.context.sandbox.private_tmp);
    // What systemd's test 16 sends (`-p RuntimeMaxSec=5s`): taken,
    // as its unit-file key; infinity is no limit.
    let u = service_of(vec![
        ("RuntimeMaxUSec", v(5_000_000u64)),
        ("RuntimeRandomizedExtraUSec", v(1_000_000u64)),
    ])
    .unwrap();
    assert_eq!(
        u.runtime_max(),
        Some((
            std::time::Duration::from_secs(5),
            std::time::Duration::from_secs(1)
        ))
    );
    let u = service_of(vec![("RuntimeMaxUSec", v(u64::MAX))]).unwrap();
    assert_eq!(u.runtime_max(), None);
    // Test 56's `-p ExitType=cgroup`: taken; a value systemd does not
    // know is refused, with why.
    let u = service_of(vec![("ExitType", v("cgroup"))]).unwrap();
    assert_eq!(u.extras.exit_type, flotilla_units::spec::ExitType::Cgroup);
    let e = service_of(vec![("ExitType", v("group"))]).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.InvalidArgs");
    assert!(
        e.message.contains("property ExitType") && e.message.contains("invalid ExitType=group"),
        "{}",
        e.message
    );
    // `-p Delegate=yes`, `-p Delegate=` (test 19's): taken.
    service_of(vec![("Delegate", v(true))]).unwrap();
    service_of(vec![("DelegateControllers", v(Vec::<String>::new()))]).unwrap();
    // A value the translator finds invalid: the caller's, named.
    let e = service_of(vec![("Type", v("sometimes"))]).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.InvalidArgs");
    assert!(e.message.contains("property Type"), "{}", e.message);
    let e = seed("aux").unwrap_err();
    assert!(
        e.message.contains("Auxiliary transient units"),
        "{}",
        e.message
    );
    // The init's own check, at the bus: an empty program.
    let e = seed("empty-program").unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.InvalidArgs");
    assert!(
        e.message
            .contains("property ExecStart: invalid ExecStart=: empty command"),
        "{}",
        e.message
    );
}

/// systemd's test 15 (`test_hierarchical_slice_dropins`,
/// `test_transient_slice_dropins`): a transient slice's drop-ins win
/// over its properties, apply before them too (systemd 252 loaded the
/// slice with them first), and its file holds the properties alone.
#[test]
fn a_transient_slice_is_read_with_its_dropins_around_its_properties() {
    let dropins = [(
        "a-b-c.slice".to_string(),
        vec![
            (
                "/etc/systemd/system/slice.d/d1.conf".to_string(),
                "[Unit]\nDocumentation=man:drop1\n".to_string(),
            ),
            (
                "/usr/lib/systemd/system/a-.slice.d/o.conf".to_string(),
                "[Unit]\nDocumentation=man:drop2\n[Slice]\nMemoryMax=1000000000\n".to_string(),
            ),
        ],
    )]
    .into();
    let props = vec![
        ("Description".to_string(), v("slice too")),
        ("MemoryMax".to_string(), v(1_000_000_002u64)),
        ("Documentation".to_string(), v(vec!["man:drop5"])),
    ];
    let a = asked_with("a-b-c.slice", props, Vec::new(), &dropins).unwrap();
    assert_eq!(a.unit.kind, UnitType::Slice);
    assert_eq!(a.unit.description.as_deref(), Some("slice too"));
    let docs: Vec<&str> = a
        .unit
        .extras
        .documentation
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(
        docs,
        [
            "man:drop1",
            "man:drop2",
            "man:drop5",
            "man:drop1",
            "man:drop2"
        ]
    );
    assert_eq!(
        a.unit.extras.context.resources.memory_max,
        Some(flotilla_units::context::resources::Amount::Absolute(
            1_000_000_000
        ))
    );
    assert_eq!(
        a.unit.extras.context.resources.slice.as_deref(),
        Some("a-b.slice")
    );
    let file = a.file;
    assert!(file.contains("Documentation=man:drop5\n"), "{file}");
    assert!(file.contains("[Slice]\nMemoryMax=1000000002\n"), "{file}");
    assert!(!file.contains("drop1"), "{file}");
}
