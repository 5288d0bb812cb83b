//! Templates through the real `init` binary: instances made from
//! `name@.service` when a unit names them, when `initctl start` or
//! `set-target` does, kept across a reload while they are still named; each
//! bad input said; and `init --check` over copies of this machine's
//! `/etc/systemd/system` and `/lib/systemd/system`, whose
//! `getty.target.wants/getty@tty1.service` link names an instance of
//! Debian's `getty@.service`.

use flotilla_tests::init::{copy_tree, TestDir};
use flotilla_tests::{wait_for, WAIT};
use flotilla_units::state::UnitState;

/// A template whose instances write what their specifiers expanded to into
/// `out-INSTANCE` in the test's directory, then run until stopped.
fn echo_template(dir: &TestDir) {
    let out = dir.path().display();
    std::fs::write(
        dir.units().join("echo@.service"),
        format!(
            "[Unit]\nDescription=echo %I\n[Service]\n\
             ExecStart=/bin/sh -c 'echo \"%i %I %n %N %p %t %%\" > {out}/out-%i; exec sleep 1000'\n\
             [Install]\nWantedBy=app.target\nDefaultInstance=dflt\n"
        ),
    )
    .expect("template");
    std::fs::create_dir_all(dir.units().join("echo@.service.d")).expect("drop-in dir");
    std::fs::write(
        dir.units().join("echo@.service.d/10-desc.conf"),
        "[Unit]\nDescription=echo from the drop-in %i\n",
    )
    .expect("drop-in");
}

/// What instance `inst` wrote, once it has.
fn written(dir: &TestDir, inst: &str) -> String {
    let path = dir.join(&format!("out-{inst}"));
    wait_for(WAIT, "the instance writes its specifiers", || {
        std::fs::read_to_string(&path)
            .ok()
            .filter(|t| t.ends_with('\n'))
    })
}

#[test]
fn instances_named_by_a_unit_by_start_and_by_set_target() {
    let dir = TestDir::new();
    echo_template(&dir);
    dir.unit(
        "app.target",
        "unit: app.target\ntype: virtual\ndepends-on: [echo@web-1.service]\n",
    );
    let init = dir.start("app.target");
    let web = init.wait_state("echo@web-1.service", UnitState::Running);
    assert_eq!(
        web.description.as_deref(),
        Some("echo from the drop-in web-1")
    );
    assert_eq!(
        written(&dir, "web-1"),
        "web-1 web/1 echo@web-1.service echo@web-1 echo /run %\n"
    );

    // `initctl start` of an instance nothing names makes it.
    dir.ctl(&["start", "echo@extra.service"]).expect(0);
    assert_eq!(
        written(&dir, "extra"),
        "extra extra echo@extra.service echo@extra echo /run %\n"
    );
    let extra_pid = init.pid_of("echo@extra.service");

    // No template: said, and nothing changes.
    let out = dir.ctl(&["start", "nope@1.service"]);
    assert_eq!(out.code, 5, "{out:?}");
    assert!(
        out.stderr.contains(
            "no unit named `nope@1.service`, and no template nope@.service on the unit search path"
        ),
        "{out:?}"
    );
    // A name that is no unit name.
    let out = dir.ctl(&["start", "echo@a b.service"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("contains ' '"), "{out:?}");

    // A reload keeps the instances still named (by `app.target`, by the want),
    // running as they were.
    dir.ctl(&["reload"]).expect(0);
    assert_eq!(init.unit("echo@extra.service").state, UnitState::Running);
    assert_eq!(init.pid_of("echo@extra.service"), extra_pid);
    assert_eq!(init.unit("echo@web-1.service").state, UnitState::Running);

    // `enable` of the template links its DefaultInstance= where
    // `[Install]` says; the reload that follows makes and starts it.
    dir.ctl(&["enable", "echo@.service"]).expect(0);
    assert!(dir
        .units()
        .join("app.target.wants/echo@dflt.service")
        .symlink_metadata()
        .is_ok());
    init.wait_state("echo@dflt.service", UnitState::Running);
    assert_eq!(
        written(&dir, "dflt"),
        "dflt dflt echo@dflt.service echo@dflt echo /run %\n"
    );

    // The target may be an instance too.
    dir.ctl(&["set-target", "echo@t.service"]).expect(0);
    init.wait_state("echo@t.service", UnitState::Running);
    assert_eq!(
        written(&dir, "t"),
        "t t echo@t.service echo@t echo /run %\n"
    );
    let out = dir.ctl(&["set-target", "nope@2.service"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("no template nope@.service"), "{out:?}");
}

#[test]
fn check_over_debians_units_makes_the_instances_its_links_name() {
    let dir = TestDir::new();
    let etc = dir.join("etc");
    let lib = dir.join("lib");
    copy_tree("/etc/systemd/system", &etc);
    copy_tree("/lib/systemd/system", &lib);
    assert!(
        etc.join("getty.target.wants/getty@tty1.service")
            .symlink_metadata()
            .is_ok(),
        "Debian enables getty@tty1.service"
    );
    // A bad template, named by a unit of the test's own directory: its
    // error is said in its file and line, and nothing else is lost.
    std::fs::write(
        dir.units().join("bad@.service"),
        "[Service]\nExecStart=/bin/true %i\nEnvironment=X=%z\n",
    )
    .expect("bad template");
    dir.unit(
        "probe",
        "unit: probe\ntype: virtual\nwaits-for: [bad@1.service, getty.target, missing@1.service]\n",
    );
    let units = dir.units();
    let (e, l) = (etc.display().to_string(), lib.display().to_string());
    let u = units.display().to_string();
    let out = dir.run_init(&[
        "--check", "--units", &u, "--units", &e, "--units", &l, "--target", "probe",
    ]);
    let req = out.required("probe");
    assert!(
        req.iter().any(|n| n == "getty@tty1.service"),
        "getty.target wants getty@tty1.service: {req:?}"
    );
    assert!(
        out.stdout
            .contains(&format!("unit getty@tty1.service: from {l}/getty@.service")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!(
            "{u}/bad@.service:3:1: invalid Environment=: unknown specifier %z (use %% for a \
             literal %) (instance bad@1.service)"
        )),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!(
            "{u}/probe.yaml:3:42: warning: missing@1.service is named here, but neither a unit \
             file missing@1.service nor its template missing@.service is on the unit search path"
        )),
        "{}",
        out.stdout
    );
    // No error in any instance made from Debian's templates.
    let instance_errors: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("(instance ") && !l.contains("warning") && !l.contains("bad@"))
        .collect();
    assert!(instance_errors.is_empty(), "{instance_errors:?}");
}
