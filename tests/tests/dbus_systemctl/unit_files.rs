//! What `systemctl` does to unit files as systemd does: masks, added
//! dependencies, `set-property` drop-ins and `revert`, units read again
//! when asked for, `daemon-reload`, links and aliases, `set-default`,
//! presets, `isolate`.

use super::*;

/// `systemctl mask` and `unmask` as under systemd: a link to `/dev/null`
/// in the unit path's configuration directory (here the test's units
/// directory, the first), said as systemctl says it, read by the init at
/// the reload systemctl asks for; a masked unit refuses a start; a file in
/// the way is refused, naming it.
#[test]
fn systemctl_masks_with_a_link_as_systemd_does() {
    let dir = TestDir::new();
    units(&dir);
    let vendor = dir.join("vendor");
    std::fs::create_dir_all(&vendor).expect("vendor dir");
    dir.file(
        "vendor/vendored.service",
        "[Service]\nExecStart=/bin/sleep 1000\n",
    );
    let init = dir.init().target("default").more_units(vendor).start();
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    let link = dir.join("units/vendored.service");
    let out = systemctl(&bus, &["mask", "vendored.service"]);
    out.expect(0);
    assert_eq!(
        out.stderr,
        format!("Created symlink {} -> /dev/null.\n", link.display())
    );
    assert_eq!(std::fs::read_link(&link).ok(), Some("/dev/null".into()));
    let out = systemctl(&bus, &["is-enabled", "vendored.service"]);
    assert_eq!((out.code, out.stdout.as_str()), (1, "masked\n"), "{out:?}");
    assert!(init.unit("vendored.service").masked);
    let out = systemctl(&bus, &["start", "vendored.service"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("Unit vendored.service is masked."),
        "{out:?}"
    );
    let out = systemctl(&bus, &["unmask", "vendored.service"]);
    out.expect(0);
    assert_eq!(out.stderr, format!("Removed \"{}\".\n", link.display()));
    assert!(!init.unit("vendored.service").masked);
    systemctl(&bus, &["start", "vendored.service"]).expect(0);
    // The unit's own file where the link would go.
    let out = systemctl(&bus, &["mask", "extra.service"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        format!(
            "Failed to mask unit: File {} already exists.\n",
            dir.join("units/extra.service").display()
        )
    );
}

/// `systemctl add-wants` and `add-requires` link a unit into another's
/// `.wants/` and `.requires/` as systemd links it and, after the reload
/// `systemctl` asks for, `show -P Wants` and `Requires` name it, as do
/// `list-dependencies`; `After`, `Before` and `Conflicts` are the unit
/// file's. A missing unit or a bad dependency type is a clear error.
#[test]
fn systemctl_adds_dependencies_and_shows_them() {
    let dir = TestDir::new();
    units(&dir);
    dir.file(
        "units/dep.service",
        "[Service]\nExecStart=/bin/sleep 1000\n",
    );
    dir.file(
        "units/ordered.service",
        "[Unit]\nAfter=extra.service\nBefore=bad.service\nConflicts=inst.service\n\
         [Service]\nExecStart=/bin/sleep 1000\n",
    );
    let _init = started(&dir);
    let bus = busd(&dir);
    let show = |prop: &str, unit: &str| {
        let out = systemctl(&bus, &["show", "-P", prop, unit]);
        out.expect(0);
        out.stdout.trim_end().to_string()
    };
    assert_eq!(show("Wants", "extra.service"), "");
    let out = systemctl(&bus, &["add-wants", "extra.service", "dep.service"]);
    out.expect(0);
    let link = dir.join("units/extra.service.wants/dep.service");
    let file = dir.join("units/dep.service");
    assert_eq!(
        out.stderr,
        format!(
            "Created symlink {} -> {}.\n",
            link.display(),
            file.display()
        )
    );
    assert_eq!(std::fs::read_link(&link).ok(), Some(file.clone()));
    assert_eq!(show("Wants", "extra.service"), "dep.service");
    let out = systemctl(
        &bus,
        &[
            "list-dependencies",
            "--plain",
            "--no-legend",
            "extra.service",
        ],
    );
    out.expect(0);
    assert!(out.stdout.contains("dep.service"), "{out:?}");
    assert_eq!(show("Requires", "ordered.service"), "");
    systemctl(&bus, &["add-requires", "ordered.service", "dep.service"]).expect(0);
    assert!(dir
        .join("units/ordered.service.requires/dep.service")
        .exists());
    assert_eq!(show("Requires", "ordered.service"), "dep.service");
    assert_eq!(show("After", "ordered.service"), "extra.service");
    assert_eq!(show("Before", "ordered.service"), "bad.service");
    assert_eq!(show("Conflicts", "ordered.service"), "inst.service");
    // `systemctl cat` prints the unit's drop-ins after its file, as
    // `DropInPaths` lists them.
    dir.file(
        "units/extra.service.d/10-env.conf",
        "[Service]\nEnvironment=A=1\n",
    );
    let out = systemctl(&bus, &["cat", "extra.service"]);
    out.expect(0);
    let dropin = dir.join("units/extra.service.d/10-env.conf");
    assert!(
        out.stdout.contains(&format!(
            "# {}\n[Service]\nEnvironment=A=1\n",
            dropin.display()
        )),
        "{out:?}"
    );
    assert_eq!(
        show("DropInPaths", "extra.service"),
        dropin.display().to_string()
    );
    // A YAML unit's dependencies by their target names.
    assert_eq!(show("Requires", "default.target"), "webd");

    let out = systemctl(&bus, &["add-wants", "extra.service", "nope.service"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("Unit file nope.service does not exist."),
        "{out:?}"
    );
    let out = busctl(
        &bus.socket,
        None,
        &[
            "call",
            "org.freedesktop.systemd1",
            "/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager",
            "AddDependencyUnitFiles",
            "asssbb",
            "1",
            "dep.service",
            "extra.service",
            "Upholds",
            "false",
            "false",
        ],
    );
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("Invalid dependency type Upholds: Wants or Requires"),
        "{out:?}"
    );
}

/// `systemctl set-property` writes each setting into a drop-in of the
/// unit under `system.control` (`--runtime`: the one under `run/`), as
/// systemd writes it (its test 26), and `systemctl revert` removes them; a
/// value the unit file would refuse is refused, naming the property.
#[test]
fn systemctl_set_property_writes_drop_ins_and_revert_removes_them() {
    let dir = TestDir::new();
    units(&dir);
    // On the path, not made yet (as on a fresh machine).
    let control = dir.join("etc/systemd/system.control");
    let run_control = dir.join("run/systemd/system.control");
    let init = dir
        .init()
        .target("default")
        .more_units(control.clone())
        .more_units(run_control.clone())
        .start();
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    systemctl(
        &bus,
        &[
            "set-property",
            "extra.service",
            "IPAccounting=yes",
            "MemoryMax=1234567",
        ],
    )
    .expect(0);
    let d = control.join("extra.service.d");
    let read = |p: PathBuf| std::fs::read_to_string(&p).unwrap_or_default();
    assert!(read(d.join("50-MemoryMax.conf")).ends_with("\n[Service]\nMemoryMax=1234567\n"));
    assert!(read(d.join("50-IPAccounting.conf")).ends_with("\n[Service]\nIPAccounting=yes\n"));
    systemctl(
        &bus,
        &[
            "set-property",
            "--runtime",
            "extra.service",
            "CPUAccounting=no",
            "CPUQuota=10%",
        ],
    )
    .expect(0);
    let r = run_control.join("extra.service.d");
    assert!(read(r.join("50-CPUQuota.conf")).ends_with("\n[Service]\nCPUQuota=10%\n"));
    assert!(read(r.join("50-CPUAccounting.conf")).ends_with("\n[Service]\nCPUAccounting=no\n"));
    let out = systemctl(&bus, &["set-property", "extra.service", "MemoryMax=lots"]);
    assert_ne!(out.code, 0, "{out:?}");
    systemctl(&bus, &["revert", "extra.service"]).expect(0);
    assert!(!d.exists() && !r.exists(), "revert left the drop-ins");
    let out = systemctl(&bus, &["set-property", "web", "MemoryMax=1M"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("only a unit from a systemd unit file"),
        "{out:?}"
    );
}

/// A unit file written after the last reload is loaded when first asked
/// for, as systemd loads it (its test 48): `systemctl start` of it, and a
/// restart of a target that wants it, `systemctl show` of it (test 15);
/// a unit changed on disk that nothing holds is read again when asked for
/// (the next test). A name the path does not have is `not found`, as
/// under systemd.
#[test]
fn a_unit_written_since_the_last_reload_is_loaded_when_asked_for() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    dir.file(
        "units/late.service",
        "[Service]\nExecStart=/bin/sleep 1000\n",
    );
    // Changed on disk, not reloaded, nothing holds it: read again.
    dir.file(
        "units/extra.service",
        "[Unit]\nDescription=Changed on disk\n[Service]\nExecStart=/bin/sleep 1000\n",
    );
    systemctl(&bus, &["start", "late.service"]).expect(0);
    init.wait_state("late.service", UnitState::Running);
    let out = systemctl(&bus, &["is-active", "late.service"]);
    assert_eq!(out.stdout, "active\n", "{out:?}");
    let out = systemctl(&bus, &["show", "-P", "Description", "extra.service"]);
    assert_eq!(out.stdout, "Changed on disk\n", "{out:?}");

    dir.file("units/late.target", "[Unit]\nWants=later.service\n");
    systemctl(&bus, &["daemon-reload"]).expect(0);
    systemctl(&bus, &["start", "late.target"]).expect(0);
    dir.file(
        "units/later.service",
        "[Service]\nExecStart=/bin/sleep 1000\n",
    );
    systemctl(&bus, &["restart", "late.target"]).expect(0);
    init.wait_state("later.service", UnitState::Running);

    // `systemctl show` of one (systemd's test 15): its links read too.
    dir.file(
        "units/shown.service",
        "[Service]\nExecStart=/bin/sleep 1000\n",
    );
    std::fs::create_dir_all(dir.join("units/shown.service.wants")).expect("wants dir");
    std::os::unix::fs::symlink(
        "../late.service",
        dir.join("units/shown.service.wants/late.service"),
    )
    .expect("wants link");
    let out = systemctl(&bus, &["show", "-P", "Wants", "shown.service"]);
    assert_eq!(out.stdout, "late.service\n", "{out:?}");
    let out = systemctl(&bus, &["show", "-P", "LoadState", "nope.service"]);
    assert_eq!(out.stdout, "not-found\n", "{out:?}");

    let out = systemctl(&bus, &["start", "nope.service"]);
    assert_eq!(out.code, 5, "{out:?}");
    assert_eq!(
        out.stderr,
        "Failed to start nope.service: Unit nope.service not found.\n"
    );
}

/// A unit nothing holds (inactive, no job, nothing held referring to it)
/// is read again when asked for, as systemd frees such a unit and reads
/// its files the next time something names it (its test 15): a drop-in
/// and a `.wants/` link written after the last reload show at the next
/// `systemctl show` without a daemon-reload, and at a start. A running
/// unit keeps what it was read with until a reload, as under systemd.
#[test]
fn a_unit_nothing_holds_is_read_again_when_asked_for() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    dir.file(
        "units/quiet.service",
        "[Unit]\nDescription=Quiet\n[Service]\nExecStart=/bin/sleep 1000\n",
    );
    systemctl(&bus, &["daemon-reload"]).expect(0);
    let show = |p: &str, u: &str| systemctl(&bus, &["show", "-P", p, u]).stdout;
    assert_eq!(show("Description", "quiet.service"), "Quiet\n");
    dir.file(
        "units/quiet.service.d/override.conf",
        "[Unit]\nDescription=Dropped in\n",
    );
    assert_eq!(show("Description", "quiet.service"), "Dropped in\n");
    std::fs::create_dir_all(dir.join("units/quiet.service.wants")).expect("wants dir");
    std::os::unix::fs::symlink(
        "../extra.service",
        dir.join("units/quiet.service.wants/extra.service"),
    )
    .expect("wants link");
    assert_eq!(show("Wants", "quiet.service"), "extra.service\n");
    systemctl(&bus, &["start", "quiet.service"]).expect(0);
    init.wait_state("extra.service", UnitState::Running);

    // Running: held, so not read again.
    dir.file(
        "units/quiet.service.d/override.conf",
        "[Unit]\nDescription=Later\n",
    );
    assert_eq!(show("Description", "quiet.service"), "Dropped in\n");
    systemctl(&bus, &["stop", "quiet.service"]).expect(0);
    init.wait_state("quiet.service", UnitState::Disabled);
    assert_eq!(show("Description", "quiet.service"), "Later\n");

    // An alias linked since, asked for by its name: its unit read again,
    // with the alias's links (systemd's test 15, its alias drop-ins).
    std::fs::create_dir_all(dir.join("units/quiet1.service.wants")).expect("wants dir");
    std::os::unix::fs::symlink("quiet.service", dir.join("units/quiet1.service")).expect("alias");
    std::os::unix::fs::symlink(
        "../bad.service",
        dir.join("units/quiet1.service.wants/bad.service"),
    )
    .expect("wants link");
    assert_eq!(
        show("Wants", "quiet1.service"),
        "bad.service extra.service\n"
    );
    // A drop-in directory that is a link to a directory (its issue 21920).
    std::fs::remove_dir_all(dir.join("units/quiet.service.d")).expect("rm drop-ins");
    dir.file(
        "elsewhere/dropins/override.conf",
        "[Unit]\nDescription=Linked drop-in\n",
    );
    std::os::unix::fs::symlink(
        dir.join("elsewhere/dropins"),
        dir.join("units/quiet.service.d"),
    )
    .expect("drop-in dir link");
    assert_eq!(show("Description", "quiet.service"), "Linked drop-in\n");
}

/// Each read of the search path (at boot, at a reload, when a unit is
/// asked for) watches every directory and file before it takes it, and
/// the next ask trusts that watch (docs/systemd-units.md, "Unit files
/// read again when asked for"): a unit file rewritten with its
/// modification time put back is seen all the same, at once after a
/// reload and after a read on demand. That an unchanged path is not read
/// again is the runtime's test (`runtime/tests/reread.rs`), which counts
/// the reads.
#[test]
fn a_change_to_the_search_path_shows_whatever_time_it_leaves() {
    let dir = TestDir::new();
    let _init = started(&dir);
    let bus = busd(&dir);
    let still =
        |d: &str| format!("[Unit]\nDescription={d}\n[Service]\nExecStart=/bin/sleep 1000\n");
    dir.file("units/still.service", &still("Before"));
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    set_mtime_below(&dir.join("units"), old);
    systemctl(&bus, &["daemon-reload"]).expect(0);
    let show = || systemctl(&bus, &["show", "-P", "Description", "still.service"]).stdout;
    assert_eq!(show(), "Before\n");

    // Rewritten in place after the reload, its time put back: the
    // reload's watch saw the write.
    systemctl(&bus, &["daemon-reload"]).expect(0);
    std::fs::write(dir.join("units/still.service"), still("Unseen")).expect("write");
    set_mtime_below(&dir.join("units/still.service"), old);
    assert_eq!(show(), "Unseen\n");
    // And again after that read on demand: its own watch saw it.
    assert_eq!(show(), "Unseen\n");
    std::fs::write(dir.join("units/still.service"), still("Again")).expect("write");
    set_mtime_below(&dir.join("units/still.service"), old);
    assert_eq!(show(), "Again\n");
}

/// systemd's daemon-reload restarts nothing (its test 15 changes every
/// service with a `service.d/` drop-in, its own among them, and goes on):
/// a running unit whose files changed keeps its process and shows the new
/// definition, its stop runs the new `ExecStop=` and its next start the
/// new `ExecStart=` (docs/dbus.md, "daemon-reload"); `initctl reload`
/// still restarts it (docs/initctl.md, "reload").
#[test]
fn a_daemon_reload_restarts_nothing() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    let web = init.pid_of("web");
    let file = |description: &str, seconds: u32| {
        dir.file(
            "units/held.service",
            &format!(
                "[Unit]\nDescription={description}\n[Service]\nExecStart=/bin/sleep {seconds}\n"
            ),
        );
    };
    file("First", 1000);
    systemctl(&bus, &["daemon-reload"]).expect(0);
    systemctl(&bus, &["start", "held.service"]).expect(0);
    let pid = init.wait_state("held.service", UnitState::Running).pid;
    let stopped = dir.join("stopped");
    dir.file(
        "units/service.d/override.conf",
        &format!("[Service]\nExecStop=/bin/touch {}\n", stopped.display()),
    );
    file("Second", 2000);
    systemctl(&bus, &["daemon-reload"]).expect(0);
    let held = init.unit("held.service");
    assert_eq!((held.state, held.pid), (UnitState::Running, pid));
    assert_eq!(init.pid_of("web"), web);
    let show = |p: &str| systemctl(&bus, &["show", "-P", p, "held.service"]).stdout;
    assert_eq!(show("Description"), "Second\n");
    assert!(
        show("ExecStop").contains("/bin/touch"),
        "{}",
        show("ExecStop")
    );

    systemctl(&bus, &["restart", "held.service"]).expect(0);
    let new = init
        .wait_unit("held.service", "restarted", |u| {
            u.state == UnitState::Running && u.pid.is_some() && u.pid != pid
        })
        .pid
        .expect("a PID");
    assert!(stopped.exists(), "the new ExecStop= ran at the stop");
    let cmdline = std::fs::read(format!("/proc/{new}/cmdline")).expect("its cmdline");
    assert_eq!(cmdline, b"/bin/sleep\x002000\x00");

    // `initctl reload` restarts a changed running unit, as it always did.
    file("Third", 3000);
    dir.ctl(&["reload"]).expect(0);
    init.wait_unit("held.service", "restarted by initctl reload", |u| {
        u.state == UnitState::Running && u.pid.is_some() && u.pid != Some(new)
    });
}

/// Dependencies as systemd names them (its test 15): a `.wants/` link to
/// an alias is the unit it names (`Wants=b.service`, not `b1.service`),
/// which lists the alias among its `Names`; a link to a unit no file
/// defines is shown, as systemd shows a dependency on a unit not found,
/// and is no edge: a start of the wanter starts what it wants and nothing
/// else, and the wanter runs.
#[test]
fn a_link_names_the_aliased_unit_and_a_missing_one_is_shown() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    dir.file("units/b.service", "[Service]\nExecStart=/bin/sleep 1000\n");
    std::os::unix::fs::symlink("b.service", dir.join("units/b1.service")).expect("alias");
    dir.file("units/a.service", "[Service]\nExecStart=/bin/sleep 1000\n");
    std::fs::create_dir_all(dir.join("units/a.service.wants")).expect("wants dir");
    for to in ["../b1.service", "../nonexistent.service"] {
        let name = to.trim_start_matches("../");
        std::os::unix::fs::symlink(to, dir.join("units/a.service.wants").join(name))
            .expect("wants link");
    }
    systemctl(&bus, &["daemon-reload"]).expect(0);
    let show = |p: &str, u: &str| systemctl(&bus, &["show", "-P", p, u]).stdout;
    assert_eq!(
        show("Wants", "a.service"),
        "b.service nonexistent.service\n"
    );
    assert_eq!(show("Names", "b.service"), "b.service b1.service\n");
    systemctl(&bus, &["start", "a.service"]).expect(0);
    init.wait_state("b.service", UnitState::Running);
    init.wait_state("a.service", UnitState::Running);

    // Linked from both `.wants/` and `.requires/`: listed under both.
    dir.file("units/c.service", "[Service]\nExecStart=/bin/sleep 1000\n");
    for kind in ["wants", "requires"] {
        let d = dir.join(&format!("units/c.service.{kind}"));
        std::fs::create_dir_all(&d).expect("links dir");
        std::os::unix::fs::symlink("../b.service", d.join("b.service")).expect("link");
    }
    // A link to a file named as another type outside the path: no alias,
    // that file defines the unit (systemd's linked unit file).
    dir.file(
        "elsewhere/linked@.scope",
        "[Unit]\nDescription=Linked\n[Service]\nExecStart=/bin/sleep 1000\n",
    );
    std::os::unix::fs::symlink(
        dir.join("elsewhere/linked@.scope"),
        dir.join("units/linked.service"),
    )
    .expect("linked unit file");
    systemctl(&bus, &["daemon-reload"]).expect(0);
    assert_eq!(show("Wants", "c.service"), "b.service\n");
    assert_eq!(show("Requires", "c.service"), "b.service\n");
    assert_eq!(show("Description", "linked.service"), "Linked\n");
    assert_eq!(show("Names", "linked.service"), "linked.service\n");
}

/// An instance of a template written since the last reload is made when
/// asked for, as systemd reads an instance's files then (its test 15); a
/// link to an instance (`b@inst.service` to `a@inst.service`) is an alias
/// of it, among its `Names` by either name, and of that instance only.
#[test]
fn an_instance_of_a_template_written_since_the_last_reload_and_its_alias() {
    let dir = TestDir::new();
    let _init = started(&dir);
    let bus = busd(&dir);
    dir.file("units/a@.service", "[Service]\nExecStart=/bin/sleep 1000\n");
    std::os::unix::fs::symlink("a@inst.service", dir.join("units/b@inst.service")).expect("alias");
    let show = |p: &str, u: &str| systemctl(&bus, &["show", "-P", p, u]).stdout;
    assert_eq!(show("LoadState", "a@inst.service"), "loaded\n");
    assert_eq!(
        show("Names", "a@inst.service"),
        "a@inst.service b@inst.service\n"
    );
    assert_eq!(show("Names", "a@other.service"), "a@other.service\n");
    assert_eq!(
        show("Names", "b@inst.service"),
        "a@inst.service b@inst.service\n"
    );
    systemctl(&bus, &["daemon-reload"]).expect(0);
    assert_eq!(show("Id", "b@inst.service"), "a@inst.service\n");
    assert_eq!(show("LoadState", "b@other.service"), "not-found\n");
}

/// `systemctl get-default` and `set-default` under an init that boots
/// `default.target` (Debian's config), as under systemd: `get-default`
/// names the target the link points to, `set-default` links another for
/// the next boot, and the reload `systemctl` asks for then starts and
/// stops nothing: the running target stays the unit it booted.
#[test]
fn systemctl_set_default_links_the_next_boots_target() {
    let dir = TestDir::new();
    dir.file(
        "units/sub.target",
        "[Unit]\nDescription=Sub\nWants=a.service\n",
    );
    dir.file("units/other.target", "[Unit]\nDescription=Other\n");
    dir.file("units/a.service", "[Service]\nExecStart=/bin/sleep 1000\n");
    std::os::unix::fs::symlink("sub.target", dir.join("units/default.target"))
        .expect("default.target link");
    let init = dir.start("default.target");
    init.wait_state("a.service", UnitState::Running);
    let pid = init.unit("a.service").pid;
    let bus = busd(&dir);
    let out = systemctl(&bus, &["get-default"]);
    out.expect(0);
    assert_eq!(out.stdout, "sub.target\n");
    let out = systemctl(&bus, &["set-default", "other.target"]);
    out.expect(0);
    let link = dir.join("units/default.target");
    let other = dir.join("units/other.target");
    assert_eq!(
        out.stderr,
        format!(
            "Removed \"{}\".\nCreated symlink {} -> {}.\n",
            link.display(),
            link.display(),
            other.display()
        )
    );
    assert_eq!(std::fs::read_link(&link).ok(), Some(other));
    let out = systemctl(&bus, &["get-default"]);
    assert_eq!(out.stdout, "other.target\n", "{out:?}");
    // The reload set-default asked for switched nothing.
    let a = init.unit("a.service");
    assert_eq!((a.state, a.pid), (UnitState::Running, pid));
    assert_eq!(init.unit("sub.target").state, UnitState::Running);
    assert_eq!(init.unit("other.target").state, UnitState::Disabled);
    let out = systemctl(&bus, &["set-default", "nope.target"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("Unit file nope.target does not exist."),
        "{out:?}"
    );
}

/// `systemctl set-default` under an init whose config names its target
/// (not `default.target`): refused, saying why.
#[test]
fn systemctl_set_default_is_refused_where_the_config_names_the_target() {
    let dir = TestDir::new();
    let _init = started(&dir);
    let bus = busd(&dir);
    let out = systemctl(&bus, &["set-default", "extra.service"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("SetDefaultTarget is not supported by flotilla: the init boots the target its config names"),
        "{out:?}"
    );
}

/// `systemctl preset`, `preset-all` and `reenable` as under systemd
/// (systemd.preset(5)): the `*.preset` files beside the unit path's
/// `lib/systemd/system` say enable or disable; the links are made and
/// removed as `enable` and `disable` make and remove them; a template is
/// enabled as the instances its line lists; `--preset-mode` keeps one
/// side; a bad line is logged by flotilla-busd, naming file and line, and
/// the rest applies. Then `--runtime` enablement and masks (links in the
/// runtime directory, on their own side) and `revert`.
#[test]
fn systemctl_presets_as_systemd_does() {
    let dir = TestDir::new();
    units(&dir);
    let vendor = dir.join("lib/systemd/system");
    std::fs::create_dir_all(&vendor).expect("vendor dir");
    let wanted = "[Service]\nExecStart=/bin/sleep 1000\n[Install]\nWantedBy=multi-user.target\n";
    dir.file("lib/systemd/system/pre.service", wanted);
    dir.file("lib/systemd/system/tpl@.service", wanted);
    dir.file(
        "lib/systemd/system-preset/90-test.preset",
        "# the test's policy\ndisable pre.service\nfrobnicate x\nenable tpl@.service a b\n",
    );
    let runtime = dir.join("run/systemd/system");
    std::fs::create_dir_all(&runtime).expect("runtime dir");
    let init = dir
        .init()
        .target("default")
        .more_units(runtime)
        .more_units(vendor)
        .start();
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    let wants = dir.join("units/multi-user.target.wants");
    let link = wants.join("pre.service");
    let linked = |p: &Path| std::fs::symlink_metadata(p).is_ok();

    systemctl(&bus, &["enable", "pre.service"]).expect(0);
    assert!(linked(&link));
    // The presets say disable.
    let out = systemctl(&bus, &["preset", "pre.service"]);
    out.expect(0);
    assert_eq!(out.stderr, format!("Removed \"{}\".\n", link.display()));
    let out = systemctl(&bus, &["is-enabled", "pre.service"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (1, "disabled\n"),
        "{out:?}"
    );
    let busd_log = std::fs::read_to_string(dir.join("busd.out")).unwrap_or_default();
    assert!(
        busd_log.contains(&format!(
            "{}:3: unknown command 'frobnicate' (enable, disable or ignore); line ignored",
            dir.join("lib/systemd/system-preset/90-test.preset")
                .display()
        )),
        "{busd_log}"
    );
    systemctl(&bus, &["reenable", "pre.service"]).expect(0);
    systemctl(&bus, &["is-enabled", "pre.service"]).expect(0);
    // enable-only leaves what the presets disable enabled; disable-only
    // disables it.
    systemctl(
        &bus,
        &["preset", "--preset-mode=enable-only", "pre.service"],
    )
    .expect(0);
    assert!(linked(&link));
    systemctl(
        &bus,
        &["preset", "--preset-mode=disable-only", "pre.service"],
    )
    .expect(0);
    assert!(!linked(&link));

    // A template: the instances its line lists.
    let out = systemctl(&bus, &["preset", "tpl@.service"]);
    out.expect(0);
    for i in ["a", "b"] {
        let l = wants.join(format!("tpl@{i}.service"));
        assert_eq!(
            std::fs::read_link(&l).ok(),
            Some(dir.join("lib/systemd/system/tpl@.service")),
            "{out:?}"
        );
    }
    systemctl(&bus, &["is-enabled", "tpl@a.service"]).expect(0);

    let out = systemctl(&bus, &["preset", "nothere.service"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("Unit file nothere.service does not exist."),
        "{out:?}"
    );

    // preset-all: inst.service, which no line names, is enabled; pre
    // stays disabled.
    let out = systemctl(&bus, &["preset-all"]);
    out.expect(0);
    assert!(linked(&wants.join("inst.service")), "{out:?}");
    assert!(!linked(&link), "{out:?}");
    systemctl(&bus, &["is-enabled", "inst.service"]).expect(0);

    // --runtime: the link in the runtime directory; `disable` without it
    // leaves that link, `disable --runtime` removes it.
    let rt = dir.join("run/systemd/system/multi-user.target.wants/pre.service");
    systemctl(&bus, &["enable", "--runtime", "pre.service"]).expect(0);
    assert!(linked(&rt));
    let is_enabled = || {
        let out = systemctl(&bus, &["is-enabled", "pre.service"]);
        (out.code, out.stdout)
    };
    assert_eq!(is_enabled(), (0, "enabled-runtime\n".to_string()));
    systemctl(&bus, &["disable", "pre.service"]).expect(0);
    assert_eq!(is_enabled(), (0, "enabled-runtime\n".to_string()));
    systemctl(&bus, &["disable", "--runtime", "pre.service"]).expect(0);
    assert!(!linked(&rt));
    assert_eq!(is_enabled(), (1, "disabled\n".to_string()));
    // mask --runtime: `unmask` without it leaves the mask; revert removes
    // masks and drop-ins.
    systemctl(&bus, &["mask", "--runtime", "pre.service"]).expect(0);
    assert_eq!(is_enabled(), (1, "masked-runtime\n".to_string()));
    systemctl(&bus, &["unmask", "pre.service"]).expect(0);
    assert_eq!(is_enabled(), (1, "masked-runtime\n".to_string()));
    dir.file(
        "units/pre.service.d/local.conf",
        "[Unit]\nDescription=local\n",
    );
    let out = systemctl(&bus, &["revert", "pre.service"]);
    out.expect(0);
    assert_eq!(is_enabled(), (1, "disabled\n".to_string()), "{out:?}");
    assert!(!dir.join("units/pre.service.d").exists(), "{out:?}");
}

/// `systemctl isolate` of a target that allows it: the switch, answered
/// with a job that ends (systemctl returns); what the new target does not
/// require stops.
#[test]
fn systemctl_isolate_switches_the_target_and_returns() {
    let dir = TestDir::new();
    dir.file(
        "units/rescue-test.target",
        "[Unit]\nDescription=Isolated\nAllowIsolate=yes\n",
    );
    let init = started(&dir);
    let bus = busd(&dir);
    let out = systemctl(&bus, &["isolate", "rescue-test.target"]);
    out.expect(0);
    init.wait_state("web", UnitState::Disabled);
    assert_eq!(init.status().target, "rescue-test.target");
}
