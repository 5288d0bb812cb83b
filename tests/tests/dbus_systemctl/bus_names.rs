//! `flotilla-busd` on a real system bus (`dbus-daemon`): a user's calls,
//! its name taken when the bus comes up and again after a restart, bus
//! activation through the manager, services ready when they take their
//! name.

use super::*;

/// With a system bus, `flotilla-busd` takes the name
/// `org.freedesktop.systemd1` there; Debian's `systemctl` run by a user
/// other than root goes through the bus (not the private socket), reads,
/// and is refused a start.
#[test]
fn on_the_system_bus_a_user_reads_and_is_refused_a_change() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = dbus_daemon(&dir);
    let _busd = busd_on(&dir, Some(&bus.socket));
    on_the_bus(&bus.socket);
    let as_nobody = |args: &[&str]| {
        on_system_bus(
            &bus.socket,
            "setpriv --reuid=nobody --regid=nogroup --clear-groups /bin/systemctl --no-pager",
            args,
        )
    };
    let out = as_nobody(&["is-active", "web.service"]);
    out.expect(0);
    assert_eq!(out.stdout, "active\n");
    let out = as_nobody(&["start", "extra.service"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("Failed to start extra.service: Access denied"),
        "{out:?}"
    );
    assert_eq!(init.unit("extra.service").state, UnitState::Disabled);
}

/// `flotilla-busd` started before the system bus takes the name once the
/// bus's unit, `dbus.service`, is up: here started through the bus side
/// itself (Debian's `systemctl start` over the private socket).
#[test]
fn the_name_is_taken_once_dbus_comes_up() {
    let dir = TestDir::new();
    units(&dir);
    let (config, socket) = bus_config(&dir);
    dir.file(
        "units/dbus.service",
        &format!(
            "[Service]\nExecStart=/usr/bin/dbus-daemon --config-file={} --nofork\n",
            config.display()
        ),
    );
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let bus = busd_on(&dir, Some(&socket));
    systemctl(&bus, &["start", "dbus.service"]).expect(0);
    assert_eq!(init.unit("dbus.service").state, UnitState::Running);
    on_the_bus(&socket);
    let out = busctl(
        &socket,
        None,
        &[
            "get-property",
            "org.freedesktop.systemd1",
            "/org/freedesktop/systemd1/unit/dbus_2eservice",
            "org.freedesktop.systemd1.Unit",
            "ActiveState",
        ],
    );
    out.expect(0);
    assert_eq!(out.stdout, "s \"active\"\n");
}

/// The activatable names of the tests of D-Bus activation, in the service
/// directory `DIR/services` of the bus's configuration (returned):
/// `org.flotilla.Echo` (`SystemdService=dbus-org.flotilla.Echo.service`,
/// an alias, a link to `echo-name.service`, in which `dbus-test-tool`
/// takes the name), `org.flotilla.Nothere` (a unit that does not exist)
/// and `org.flotilla.Fails` (`fails.service`, whose process exits 1
/// before it takes the name).
fn activatable(dir: &TestDir) -> PathBuf {
    let services = dir.join("services");
    std::fs::create_dir_all(&services).expect("services dir");
    for (name, unit) in [
        ("org.flotilla.Echo", "dbus-org.flotilla.Echo.service"),
        ("org.flotilla.Nothere", "nothere.service"),
        ("org.flotilla.Fails", "fails.service"),
    ] {
        dir.file(
            &format!("services/{name}.service"),
            &format!(
                "[D-BUS Service]\nName={name}\nExec=/bin/false\nUser=root\nSystemdService={unit}\n"
            ),
        );
    }
    let (config, socket) = bus_config_with(
        dir,
        &format!("<servicedir>{}</servicedir>", services.display()),
    );
    dir.file(
        "units/echo-name.service",
        &format!(
            "[Service]\nType=dbus\nBusName=org.flotilla.Echo\n\
             Environment=DBUS_SYSTEM_BUS_ADDRESS=unix:path={}\n\
             ExecStart=/usr/bin/dbus-test-tool echo --system --name=org.flotilla.Echo\n",
            socket.display()
        ),
    );
    dir.file(
        "units/fails.service",
        "[Service]\nType=dbus\nBusName=org.flotilla.Fails\nExecStart=/bin/false\n",
    );
    std::os::unix::fs::symlink(
        "echo-name.service",
        dir.join("units/dbus-org.flotilla.Echo.service"),
    )
    .expect("alias link");
    // Debian's own (systemd's package): with it the bus holds an
    // activation request while the manager is not on the bus, and hands
    // it over when the manager takes its name.
    std::fs::copy(
        "/usr/share/dbus-1/system-services/org.freedesktop.systemd1.service",
        services.join("org.freedesktop.systemd1.service"),
    )
    .expect("Debian's org.freedesktop.systemd1.service");
    config
}

/// `busctl call NAME / NAME Hello` on the bus at `socket`, and how long
/// it took.
fn call_name(socket: &Path, name: &str) -> (Out, Duration) {
    let t = std::time::Instant::now();
    let out = busctl(
        socket,
        None,
        &["--timeout=20", "call", name, "/", name, "Hello"],
    );
    (out, t.elapsed())
}

/// A call to a name whose unit's start fails is answered with an error
/// within `bound` (the bus's own timeout is 25 s), naming the failed job.
fn assert_fails_at_once(socket: &Path, init: &Init, bound: Duration) {
    let (out, took) = call_name(socket, "org.flotilla.Fails");
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("fails.service failed") && took < bound,
        "not the failed job's error within {bound:?} (took {took:?}): {out:?}; \
         fails.service: {:?}",
        init.unit("fails.service")
    );
}

/// D-Bus activation through the manager: a `dbus-daemon
/// --systemd-activation` whose service file for `org.flotilla.Echo` says
/// `SystemdService=dbus-org.flotilla.Echo.service` (an alias, a link to
/// `echo-name.service`, as Debian's hostnamed and timedated are reached)
/// asks `flotilla-busd` for the unit when a client calls the name; the
/// init starts it, `dbus-test-tool` takes the name and answers the parked
/// call. A name whose unit does
/// not exist fails at once with systemd's error, not at the client's
/// timeout.
#[test]
fn a_bus_name_is_activated_through_the_manager() {
    let dir = TestDir::new();
    let services = dir.join("services");
    std::fs::create_dir_all(&services).expect("services dir");
    let config = activatable(&dir);
    let init = started(&dir);
    let bus = dbus_daemon_with(&dir, &config, &["--systemd-activation"]);
    let _busd = busd_on(&dir, Some(&bus.socket));
    on_the_bus(&bus.socket);
    assert_eq!(init.unit("echo-name.service").state, UnitState::Disabled);
    let out = busctl(
        &bus.socket,
        None,
        &[
            "call",
            "org.flotilla.Echo",
            "/",
            "org.flotilla.Echo",
            "Hello",
        ],
    );
    out.expect(0);
    // Type=dbus: running once the bus's name change reached the init.
    init.wait_state("echo-name.service", UnitState::Running);
    // A daemon that exits when idle (localed, hostnamed, timedated) ran
    // to its end: the next call activates it again (systemd's test 73).
    let pid = init.pid_of("echo-name.service");
    // SAFETY: kill(2) of the service's main process, which this test's
    // init started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    init.wait_state("echo-name.service", UnitState::Exited);
    let (out, _) = call_name(&bus.socket, "org.flotilla.Echo");
    out.expect(0);
    init.wait_state("echo-name.service", UnitState::Running);
    let out = busctl(
        &bus.socket,
        None,
        &[
            "--timeout=20",
            "call",
            "org.flotilla.Nothere",
            "/",
            "org.flotilla.Nothere",
            "Hello",
        ],
    );
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("Unit nothere.service not found"),
        "not systemd's NoSuchUnit: {out:?}"
    );
    // A unit whose process exits before it takes the name: its start job
    // fails, and the parked call with it.
    assert_fails_at_once(&bus.socket, &init, Duration::from_secs(10));
    assert_eq!(init.unit("fails.service").state, UnitState::Failed);
}

/// A call made while `flotilla-busd` is not on the bus (after the bus
/// restarted, before busd is back): the bus holds the activation request
/// for `org.freedesktop.systemd1` and hands it over the moment busd takes
/// the name, which must not lose it (it would leave the caller waiting
/// out its timeout, as `loginctl` after `systemctl restart dbus`).
#[test]
fn a_request_made_before_busd_joins_the_bus_is_served() {
    let dir = TestDir::new();
    let config = activatable(&dir);
    let init = started(&dir);
    let bus = dbus_daemon_with(&dir, &config, &["--systemd-activation"]);
    let names = || {
        busctl(&bus.socket, None, &["list", "--no-legend", "--unique"])
            .stdout
            .lines()
            .count()
    };
    let before = names();
    let t = std::time::Instant::now();
    let caller = Command::new("busctl")
        .arg(format!("--address=unix:path={}", bus.socket.display()))
        .args([
            "--timeout=20",
            "call",
            "org.flotilla.Echo",
            "/",
            "org.flotilla.Echo",
            "Hello",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start busctl");
    // The caller is on the bus (its call follows its Hello at once).
    wait_for(WAIT, "the caller on the bus", || {
        (names() > before).then_some(())
    });
    let _busd = busd_on(&dir, Some(&bus.socket));
    let out = flotilla_tests::init::run_child(caller, Duration::from_secs(30));
    let took = t.elapsed();
    out.expect(0);
    assert!(took < Duration::from_secs(15), "answered after {took:?}");
    init.wait_state("echo-name.service", UnitState::Running);
}

/// `systemctl restart dbus`: the system bus goes away and comes back (here
/// `dbus.service`, a unit of the init, restarted through the private
/// socket); `flotilla-busd` learns it from the init's report that the unit
/// is up again, takes `org.freedesktop.systemd1` on the new bus within a
/// few seconds, and serves its activation requests there as before.
#[test]
fn the_name_is_taken_again_after_dbus_restarts() {
    let dir = TestDir::new();
    let config = activatable(&dir);
    let socket = dir.join("bus");
    dir.file(
        "units/dbus.service",
        &format!(
            "[Service]\nExecStart=/usr/bin/dbus-daemon --config-file={} --nofork \
             --systemd-activation\n",
            config.display()
        ),
    );
    let init = started(&dir);
    let bus = busd_on(&dir, Some(&socket));
    systemctl(&bus, &["start", "dbus.service"]).expect(0);
    on_the_bus(&socket);
    let first = init.pid_of("dbus.service");
    let t = std::time::Instant::now();
    systemctl(&bus, &["restart", "dbus.service"]).expect(0);
    let again = init.pid_of("dbus.service");
    assert_ne!(first, again, "dbus-daemon was not restarted");
    on_the_bus(&socket);
    let took = t.elapsed();
    eprintln!(
        "busd back on the restarted bus in {:.2} s",
        took.as_secs_f64()
    );
    assert!(
        took < Duration::from_secs(5),
        "busd took {took:?} to take its name again"
    );
    // Subscribed again: the new bus's activation requests reach it.
    let (out, _) = call_name(&socket, "org.flotilla.Echo");
    out.expect(0);
    init.wait_state("echo-name.service", UnitState::Running);
    assert_fails_at_once(&socket, &init, Duration::from_secs(10));
}

/// `systemctl restart dbus` with a D-Bus service that stays running off
/// the bus (as Debian's logind does): its unit (no `Type=`, a `BusName=`:
/// systemd's `Type=dbus`) is up once its name is owned; the new bus has no
/// owner for it, and busd's whole list of the new bus's names says so, so
/// the init stops it as systemd does and `Restart=always` starts it again,
/// up once it owns its name on the new bus. Its process here is `sleep`;
/// the name is `dbus-test-tool`'s, a child that leaves with the old bus.
#[test]
fn a_name_missing_from_the_restarted_bus_restarts_its_service() {
    let dir = TestDir::new();
    let (config, socket) = bus_config(&dir);
    dir.file(
        "units/dbus.service",
        &format!(
            "[Service]\nExecStart=/usr/bin/dbus-daemon --config-file={} --nofork\n",
            config.display()
        ),
    );
    dir.file(
        "units/kept.service",
        &format!(
            "[Service]\nBusName=org.flotilla.Kept\nRestart=always\nRestartSec=0\n\
             Environment=DBUS_SYSTEM_BUS_ADDRESS=unix:path={}\n\
             ExecStart=/bin/sh -c '/usr/bin/dbus-test-tool echo --system \
             --name=org.flotilla.Kept & exec sleep 1000'\n",
            socket.display()
        ),
    );
    let init = started(&dir);
    let bus = busd_on(&dir, Some(&socket));
    systemctl(&bus, &["start", "dbus.service"]).expect(0);
    on_the_bus(&socket);
    systemctl(&bus, &["start", "kept.service"]).expect(0);
    let first = init.unit("kept.service");
    assert_eq!(
        (first.state, first.status.as_str(), first.restarts),
        (UnitState::Running, "ready (its D-Bus name is taken)", 0),
        "{first:?}"
    );
    let old = first.pid.expect("kept's pid");
    let t = std::time::Instant::now();
    systemctl(&bus, &["restart", "dbus.service"]).expect(0);
    let again = init.wait_unit("kept.service", "restarted, up on the new bus", |u| {
        u.restarts == 1 && u.state == UnitState::Running && u.pid.is_some_and(|p| p != old)
    });
    eprintln!(
        "kept.service up again on the restarted bus in {:.2} s",
        t.elapsed().as_secs_f64()
    );
    assert_eq!(again.status, "ready (its D-Bus name is taken)", "{again:?}");
    assert!(
        !procs::alive(old),
        "the old process runs on after its name was lost"
    );
    // The name answers on the new bus.
    let (out, _) = call_name(&socket, "org.flotilla.Kept");
    out.expect(0);
}

/// `Type=dbus`: the unit is `starting` until its process takes its
/// `BusName=` on the system bus (busd tells the init the bus's names), and
/// then `running`; a unit whose name is already owned when it starts is
/// running at once.
#[test]
fn a_dbus_service_is_ready_when_it_takes_its_name() {
    let dir = TestDir::new();
    let socket = dir.join("bus");
    let fifo = dir.join("go");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    // Takes its name once the test writes to the FIFO.
    dir.file(
        "units/late.service",
        &format!(
            "[Service]\nType=dbus\nBusName=org.flotilla.Late\n\
             Environment=DBUS_SYSTEM_BUS_ADDRESS=unix:path={}\n\
             ExecStart=/bin/sh -c 'read x < {}; exec /usr/bin/dbus-test-tool echo --system \
             --name=org.flotilla.Late'\n",
            socket.display(),
            fifo.display()
        ),
    );
    let init = started(&dir);
    let bus = dbus_daemon(&dir);
    let _busd = busd_on(&dir, Some(&bus.socket));
    on_the_bus(&bus.socket);
    init.ctl(&["start", "--no-block", "late.service"]).expect(0);
    // Its process is known once it has exec'd (docs/performance.md, "How
    // a unit's process starts"), which may come after the state.
    init.wait_unit("late.service", "starting with its process", |u| {
        u.state == UnitState::Starting && u.pid.is_some()
    });
    std::fs::write(&fifo, "go\n").expect("write the FIFO");
    let st = init.wait_state("late.service", UnitState::Running);
    assert_eq!(st.status, "ready (its D-Bus name is taken)");
    // Another unit for the same name, owned already: up at once.
    dir.file(
        "units/again.service",
        "[Service]\nType=dbus\nBusName=org.flotilla.Late\nExecStart=/bin/sleep 1000\n",
    );
    init.ctl(&["reload"]).expect(0);
    init.ctl(&["start", "again.service"]).expect(0);
    init.wait_state("again.service", UnitState::Running);
}
