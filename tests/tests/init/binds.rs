//! `BindPaths=` and `BindReadOnlyPaths=` under the init, on the unit of
//! systemd's TEST-49 (`testsuite-49-namespaced.service`): a file of the
//! host bound into the unit's private `/tmp`, seen by its `ExecStartPre=`
//! and its main process alike; and `bind-mount` (systemd's
//! `BindMountUnit`) into the running unit, with its refusals.

use std::path::Path;

use flotilla_tests::init::TestDir;
use flotilla_tests::{procs, wait_for, WAIT};
use flotilla_units::protocol::{ErrorCode, Reply, Request};
use flotilla_units::state::UnitState;

/// The field `n` (0-based) of the line of `mountinfo` whose mount point is
/// `target` (the last one: the top of the stack).
fn mount_field(mountinfo: &str, target: &str, n: usize) -> String {
    mountinfo
        .lines()
        .rfind(|l| l.split(' ').nth(4) == Some(target))
        .and_then(|l| l.split(' ').nth(n))
        .unwrap_or_default()
        .to_string()
}

/// systemd's namespaced unit, with its host paths in the test's directory
/// (under `/run`: a private `/tmp` would hide the init's notify socket in
/// a directory under `/tmp`). Its `ExecStartPre=` greps the bound file,
/// so the unit is running only if the control process saw it; the main
/// process is looked at through `/proc/PID/root`, which is its mount
/// namespace's view.
#[test]
fn a_file_bound_into_the_private_tmp_reaches_every_command() {
    let dir = TestDir::new_in(Path::new("/run"));
    let fixed = dir.file("fixed", "MARKER_FIXED\n");
    let hidden = dir.join("inaccessible");
    std::fs::create_dir(&hidden).expect("mkdir");
    std::fs::write(hidden.join("secret"), "x").expect("secret");
    let conf = dir.join("conf");
    std::fs::create_dir(&conf).expect("mkdir");
    std::fs::write(conf.join("app.conf"), "CONF\n").expect("conf");
    dir.file(
        "units/bind-fixed.service",
        &format!(
            "[Service]\nType=notify\nRemainAfterExit=yes\nMountAPIVFS=yes\nPrivateTmp=yes\n\
             BindPaths={}:/tmp/testfile_fixed -{}:/tmp/never\n\
             BindReadOnlyPaths={}:/tmp/conf\nInaccessiblePaths={}\n\
             ExecStartPre=grep -q -F MARKER_FIXED /tmp/testfile_fixed\n\
             ExecStart=/bin/sh -c 'systemd-notify --ready; exec sleep 1000'\n",
            fixed.display(),
            dir.join("missing").display(),
            conf.display(),
            hidden.display()
        ),
    );
    let init = dir.start("bind-fixed.service");
    init.wait_state("bind-fixed.service", UnitState::Running);
    let pid = init.pid_of("bind-fixed.service");
    let root = format!("/proc/{pid}/root");
    assert_eq!(
        std::fs::read_to_string(format!("{root}/tmp/testfile_fixed")).expect("bound file"),
        "MARKER_FIXED\n"
    );
    assert_eq!(
        std::fs::read_to_string(format!("{root}/tmp/conf/app.conf")).expect("bound dir"),
        "CONF\n"
    );
    // The optional bind of a missing source is left out, its mount point
    // not made.
    assert!(!Path::new(&format!("{root}/tmp/never")).exists());
    // The inaccessible directory beside them is covered (by an empty
    // tmpfs, which this test, as root, may still list).
    let covered = format!("{root}{}", hidden.display());
    assert!(!Path::new(&format!("{covered}/secret")).exists());
    let mounts = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).expect("mountinfo");
    assert!(
        mount_field(&mounts, "/tmp/testfile_fixed", 5).starts_with("rw"),
        "{mounts}"
    );
    assert!(
        mount_field(&mounts, "/tmp/conf", 5).starts_with("ro"),
        "{mounts}"
    );
    // The host's own /tmp has none of it.
    assert!(
        !Path::new("/tmp/testfile_fixed").exists() || {
            std::fs::read_to_string("/tmp/testfile_fixed").unwrap_or_default() != "MARKER_FIXED\n"
        }
    );
}

fn bind(unit: &str, source: &Path, destination: &str, read_only: bool, mkdir: bool) -> Request {
    Request::BindMount {
        unit: unit.into(),
        source: source.display().to_string(),
        destination: destination.into(),
        read_only,
        mkdir,
    }
}

fn refusal(reply: Reply) -> (ErrorCode, String) {
    match reply {
        Reply::Error { code, message, .. } => (code, message),
        other => panic!("not refused: {other:?}"),
    }
}

/// `bind-mount` (systemd's `BindMountUnit`) into TEST-49's running unit:
/// the main process, which waits for the file, sees it appear in its
/// private `/tmp` and exits; a read-only bind is read-only; a bind below
/// an inaccessible path, into a unit without a namespace, into one not
/// running, and without `mkdir` to a missing place are refused, nothing
/// mounted.
#[test]
fn a_bind_into_a_running_unit_reaches_its_namespace_only() {
    let dir = TestDir::new_in(Path::new("/run"));
    let runtime = dir.file("runtime", "MARKER_RUNTIME\n");
    let conf = dir.join("conf");
    std::fs::create_dir(&conf).expect("mkdir");
    let hidden = dir.join("inaccessible");
    std::fs::create_dir(&hidden).expect("mkdir");
    dir.file(
        "units/bind-runtime.service",
        &format!(
            "[Service]\nType=notify\nPrivateTmp=yes\nInaccessiblePaths={}\n\
             ExecStart=/bin/sh -c 'systemd-notify --ready; \
             while ! grep -q -F MARKER_RUNTIME /tmp/testfile_runtime; do sleep 0.1; done; \
             exec sleep 1000'\n",
            hidden.display()
        ),
    );
    dir.file(
        "units/bind-plain.service",
        "[Service]\nExecStart=/bin/sleep 1000\n",
    );
    dir.file(
        "units/bind-both.target",
        "[Unit]\nWants=bind-runtime.service bind-plain.service\n",
    );
    let init = dir.start("bind-both.target");
    init.wait_all(
        &["bind-runtime.service", "bind-plain.service"],
        UnitState::Running,
    );
    let pid = init.pid_of("bind-runtime.service");
    let mut client = init.client();
    // systemd's order: the inaccessible path first, then the namespace,
    // then whether it runs.
    let (code, message) = refusal(client.call(bind(
        "bind-runtime.service",
        &runtime,
        &format!("{}/testfile_fixed", hidden.display()),
        false,
        true,
    )));
    assert_eq!(code, ErrorCode::Invalid);
    assert_eq!(
        message,
        format!(
            "{}/testfile_fixed is not accessible to this unit",
            hidden.display()
        )
    );
    let (code, message) = refusal(client.call(bind(
        "bind-plain.service",
        &runtime,
        "/tmp/testfile_runtime",
        false,
        true,
    )));
    assert_eq!(code, ErrorCode::Invalid);
    assert_eq!(
        message,
        "Unit not running in private mount namespace, cannot activate bind mount"
    );
    // Without mkdir a missing destination fails with the kernel's word.
    let (code, message) = refusal(client.call(bind(
        "bind-runtime.service",
        &runtime,
        "/tmp/testfile_runtime",
        false,
        false,
    )));
    assert_eq!(code, ErrorCode::Failed);
    assert!(
        message.starts_with(&format!(
            "Failed to mount {} on /tmp/testfile_runtime in unit's namespace: No such file",
            runtime.display()
        )),
        "{message}"
    );
    // Read-only, a directory made for it.
    let reply = client.call(bind(
        "bind-runtime.service",
        &conf,
        "/tmp/a/conf",
        true,
        true,
    ));
    assert!(matches!(reply, Reply::Accepted { .. }), "{reply:?}");
    let mounts = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).expect("mountinfo");
    assert!(
        mount_field(&mounts, "/tmp/a/conf", 5).starts_with("ro"),
        "{mounts}"
    );
    // The file the main process waits for: it goes on to its sleep.
    let reply = client.call(bind(
        "bind-runtime.service",
        &runtime,
        "/tmp/testfile_runtime",
        false,
        true,
    ));
    assert!(matches!(reply, Reply::Accepted { .. }), "{reply:?}");
    wait_for(WAIT, "the main process past its wait", || {
        (procs::cmdline(pid) == "sleep 1000").then_some(())
    });
    // Only the unit sees it: not the host, not its other unit.
    let plain = init.pid_of("bind-plain.service");
    assert!(
        !Path::new(&format!("/proc/{plain}/root/tmp/testfile_runtime")).exists()
            || std::fs::read_to_string(format!("/proc/{plain}/root/tmp/testfile_runtime"))
                .unwrap_or_default()
                != "MARKER_RUNTIME\n"
    );
    // A unit that is down has no namespace to bind into.
    init.ctl(&["stop", "bind-runtime.service"]).expect(0);
    init.wait_state("bind-runtime.service", UnitState::Disabled);
    let (code, message) = refusal(client.call(bind(
        "bind-runtime.service",
        &runtime,
        "/tmp/testfile_runtime",
        false,
        true,
    )));
    assert_eq!(code, ErrorCode::Invalid);
    assert_eq!(message, "Unit is not running");
}
