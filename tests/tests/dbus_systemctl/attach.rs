//! `AttachProcessesToUnit` (docs/dbus.md, "Moving processes into a
//! delegated unit") on the host's cgroup2, called with GLib's `gdbus` (its
//! errors carry systemd's names) as root and as `nobody`, and from inside
//! a delegated unit as Debian's `systemd --user` calls it for `systemd-run
//! --scope --user` (systemd's test 20): an empty unit name (the caller's
//! own) and the scope's cgroup below its own.

use super::{busd, systemctl, units, Busd};
use flotilla_tests::init::{run, Out, TestDir};
use flotilla_tests::{procs, wait_for, WAIT};
use flotilla_units::state::UnitState;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A `sleep` of the test's, as root or as `nobody`, killed by its PID
/// when dropped.
struct Sleeper(Child);

impl Sleeper {
    fn new(dir: &TestDir, nobody: bool) -> Sleeper {
        let mut cmd = if nobody {
            let mut c = Command::new("setpriv");
            c.args([
                "--reuid=nobody",
                "--regid=nogroup",
                "--clear-groups",
                "sleep",
                "1000",
            ]);
            c
        } else {
            let mut c = Command::new("sleep");
            c.arg("1000");
            c
        };
        let child = cmd
            .env(procs::MARK_VAR, &dir.mark)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("start sleep");
        Sleeper(child)
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }

    /// Whether it ended (reaped here).
    fn ended(&mut self) -> bool {
        self.0.try_wait().ok().flatten().is_some()
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `AttachProcessesToUnit(unit, sub, [pid])` with `gdbus call`, as
/// `nobody` when asked.
fn attach(bus: &Busd, nobody: bool, unit: &str, sub: &str, pid: u32) -> Out {
    let mut cmd = if nobody {
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            "gdbus",
        ]);
        c
    } else {
        Command::new("gdbus")
    };
    cmd.arg("call")
        .arg("--address")
        .arg(format!("unix:path={}", bus.socket.display()))
        .args([
            "--dest",
            "org.freedesktop.systemd1",
            "--object-path",
            "/org/freedesktop/systemd1",
            "--method",
            "org.freedesktop.systemd1.Manager.AttachProcessesToUnit",
            // GVariant text: a quoted string, even an empty one.
            &format!("'{unit}'"),
            &format!("'{sub}'"),
            &format!("@au [{pid}]"),
        ]);
    run(cmd, Duration::from_secs(15))
}

/// Panics unless `out` is the D-Bus error `name` with `message` in it.
#[track_caller]
fn refused(out: &Out, name: &str, message: &str) {
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains(&format!("{name}: ")) && out.stderr.contains(message),
        "wanted {name}: {message}; got {out:?}"
    );
}

/// Where the cgroup2 tree is mounted.
fn cgroup2_mount() -> String {
    let mounts = std::fs::read_to_string("/proc/self/mounts").expect("/proc/self/mounts");
    mounts
        .lines()
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .find(|f| f.get(2) == Some(&"cgroup2"))
        .and_then(|f| f.get(1).map(|m| m.to_string()))
        .expect("a cgroup2 mount")
}

/// The cgroup2 path of process `pid` (`/flotilla-N/deleg.service`).
fn cgroup_of(pid: u32) -> String {
    let cg = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).expect("its cgroup");
    cg.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .expect("a cgroup2 line")
        .to_string()
}

#[test]
fn a_delegated_units_user_moves_its_processes_into_it_as_systemds_test_20_asks() {
    let dir = TestDir::new();
    let roots = Sleeper::new(&dir, false);
    let mut mine = Sleeper::new(&dir, true);
    let scoped = Sleeper::new(&dir, true);
    units(&dir);
    dir.file(
        "units/deleg.service",
        "[Service]\nDelegate=yes\nUser=nobody\nExecStart=/bin/sleep 1000\n",
    );
    // As systemd --user does: its scope's cgroup made in its own subtree,
    // then the system manager asked to move the process there.
    let out = dir.join("self.out");
    dir.file(
        "units/self.sh",
        "cg=\"$MNT$(sed -n 's/^0:://p' /proc/self/cgroup)\"\n\
         mkdir \"$cg/app.slice\" \"$cg/app.slice/run-r1.scope\"\n\
         gdbus call --address \"unix:path=$SOCK\" --dest org.freedesktop.systemd1 \
         --object-path /org/freedesktop/systemd1 --method \
         org.freedesktop.systemd1.Manager.AttachProcessesToUnit \"''\" \
         \"'/app.slice/run-r1.scope'\" \"@au [$PID]\" >\"$OUT.new\" 2>&1\n\
         echo \"exit $?\" >>\"$OUT.new\"\n\
         mv \"$OUT.new\" \"$OUT\"\n\
         exec sleep 1000\n",
    );
    dir.file(
        "units/self.service",
        &format!(
            "[Service]\nDelegate=yes\nUser=nobody\nEnvironment=MNT={} SOCK={} PID={} OUT={}\n\
             ExecStart=/bin/sh {}\n",
            cgroup2_mount(),
            dir.join("private").display(),
            scoped.pid(),
            out.display(),
            dir.join("units/self.sh").display(),
        ),
    );
    // nobody writes the result beside the units.
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .expect("chmod the test's directory");
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);

    // Not active yet.
    let got = attach(&bus, false, "deleg.service", "", roots.pid());
    refused(
        &got,
        "org.freedesktop.DBus.Error.InvalidArgs",
        "Unit is not active, refusing.",
    );
    systemctl(&bus, &["start", "deleg.service"]).expect(0);
    let main = init.pid_of("deleg.service");
    let unit_cg = cgroup_of(u32::try_from(main).expect("a PID"));
    assert!(unit_cg.ends_with("/deleg.service"), "{unit_cg}");

    // Root moves anyone's process.
    attach(&bus, false, "deleg.service", "", roots.pid()).expect(0);
    assert_eq!(cgroup_of(roots.pid()), unit_cg);

    // nobody moves only its own, into a cgroup below that exists.
    let got = attach(&bus, true, "deleg.service", "", roots.pid());
    refused(
        &got,
        "org.freedesktop.DBus.Error.AccessDenied",
        &format!(
            "Process {} not owned by client's UID. Refusing.",
            roots.pid()
        ),
    );
    let got = attach(&bus, true, "extra.service", "", mine.pid());
    refused(
        &got,
        "org.freedesktop.DBus.Error.InvalidArgs",
        "Process migration not available on non-delegated units.",
    );
    let got = attach(&bus, true, "deleg.service", "sub", mine.pid());
    refused(
        &got,
        "org.freedesktop.DBus.Error.InvalidArgs",
        "Control group path is not absolute: sub",
    );
    let got = attach(&bus, true, "deleg.service", "/a/../b", mine.pid());
    refused(
        &got,
        "org.freedesktop.DBus.Error.InvalidArgs",
        "Control group path is not normalized: /a/../b",
    );
    let got = attach(&bus, true, "deleg.service", "", 1);
    refused(
        &got,
        "org.freedesktop.DBus.Error.InvalidArgs",
        "Process 1 is a manager process, refusing.",
    );
    let none = u32::try_from(i32::MAX).expect("fits");
    let got = attach(&bus, true, "deleg.service", "", none);
    refused(
        &got,
        "org.freedesktop.DBus.Error.UnixProcessIdUnknown",
        &format!("Process with ID {none} does not exist."),
    );
    let got = attach(&bus, true, "nonesuch.service", "", mine.pid());
    refused(
        &got,
        "org.freedesktop.systemd1.NoSuchUnit",
        "nonesuch.service",
    );
    let got = attach(&bus, true, "deleg.service", "/sub", mine.pid());
    refused(
        &got,
        "org.freedesktop.DBus.Error.Failed",
        "Failed to attach processes to control group",
    );
    assert_ne!(cgroup_of(mine.pid()), format!("{unit_cg}/sub"));
    let sub = PathBuf::from(format!("{}{unit_cg}/sub", cgroup2_mount()));
    std::fs::create_dir(&sub).expect("make the subcgroup");
    attach(&bus, true, "deleg.service", "/sub", mine.pid()).expect(0);
    assert_eq!(cgroup_of(mine.pid()), format!("{unit_cg}/sub"));

    // From inside a delegated unit, with no unit named: its own.
    systemctl(&bus, &["start", "self.service"]).expect(0);
    let said = wait_for(WAIT, "self.service's call", || {
        std::fs::read_to_string(&out).ok()
    });
    assert!(said.ends_with("exit 0\n"), "{said}");
    let self_cg = cgroup_of(u32::try_from(init.pid_of("self.service")).expect("a PID"));
    assert_eq!(
        cgroup_of(scoped.pid()),
        format!("{self_cg}/app.slice/run-r1.scope")
    );

    // The moved processes are the unit's: its stop ends them with it.
    systemctl(&bus, &["stop", "deleg.service"]).expect(0);
    wait_for(WAIT, "the processes moved into deleg.service ended", || {
        mine.ended().then_some(())
    });
    drop(bus);
    drop(init);
}
