//! `systemctl bind` (docs/dbus.md, "Binding a path into a running unit")
//! with Debian's `/bin/systemctl`: the steps of systemd's TEST-49
//! (`testsuite-49.sh`) against systemd's own two units, written here as
//! the package ships them, and systemd's refusals in its words. The
//! script's files are the real `/run/testservice-49-*` and
//! `/run/inaccessible` of the host (the units name them), removed at the
//! end; the test's directory is under `/run` too, as the namespaced unit's
//! private `/tmp` would hide the init's notify socket under `/tmp`.

use super::{busd, systemctl, units, Busd};
use flotilla_tests::init::{Out, TestDir};
use flotilla_tests::{wait_for, WAIT};
use flotilla_units::state::UnitState;
use std::path::{Path, PathBuf};

/// `testsuite-49-namespaced.service` as systemd-tests 252 ships it.
const NAMESPACED: &str = "[Service]
RuntimeMaxSec=300
Type=notify
RemainAfterExit=yes
MountAPIVFS=yes
PrivateTmp=yes
BindPaths=/run/testservice-49-fixed:/tmp/testfile_fixed
InaccessiblePaths=/run/inaccessible
ExecStartPre=grep -q -F MARKER_FIXED /tmp/testfile_fixed
ExecStart=/bin/sh -c 'systemd-notify --ready; while ! grep -q -F MARKER_RUNTIME /tmp/testfile_runtime; do sleep 0.1; done; test ! -f /run/inaccessible/testfile_fixed'
";

/// `testsuite-49-non-namespaced.service` as systemd-tests 252 ships it.
const NON_NAMESPACED: &str = "[Service]
RuntimeMaxSec=10
Type=notify
RemainAfterExit=yes
ExecStart=/bin/sh -c 'systemd-notify --ready; while ! grep -q -F MARKER_RUNTIME /tmp/testfile_runtime; do sleep 0.1; done; exit 0'
";

/// The host paths the script makes, removed when dropped (also after a
/// failure).
struct HostPaths(Vec<PathBuf>);

impl Drop for HostPaths {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
            let _ = std::fs::remove_dir_all(p);
        }
    }
}

/// Waits until `systemctl show -P SubState UNIT` is no longer `running`,
/// as the script's loop does (with a deadline).
fn wait_not_running(busd: &Busd, unit: &str, limit: std::time::Duration) {
    wait_for(limit, &format!("{unit} no longer running"), || {
        let out = systemctl(busd, &["show", "-P", "SubState", unit]);
        (out.stdout.trim() != "running").then_some(())
    });
}

fn failed_saying(out: &Out, words: &str) {
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains(words), "{out:?}");
}

/// `testsuite-49.sh`, step by step: the namespaced unit starts (its
/// `ExecStartPre=` reads the bound file in its private `/tmp`); a bind
/// below its `InaccessiblePaths=` is refused; a bind with `--mkdir` of
/// the file its main process waits for lets it finish, active
/// (`RemainAfterExit=`); a bind into the unit without a namespace is
/// refused, and that unit is ended by its `RuntimeMaxSec=`.
#[test]
fn systemctl_bind_runs_systemds_test_49() {
    let dir = TestDir::new_in(Path::new("/run"));
    units(&dir);
    dir.file("units/testsuite-49-namespaced.service", NAMESPACED);
    dir.file("units/testsuite-49-non-namespaced.service", NON_NAMESPACED);
    let fixed = Path::new("/run/testservice-49-fixed");
    let runtime = Path::new("/run/testservice-49-runtime");
    let inaccessible = Path::new("/run/inaccessible");
    let _paths = HostPaths(vec![fixed.into(), runtime.into(), inaccessible.into()]);
    std::fs::write(fixed, "MARKER_FIXED\n").expect("fixed");
    std::fs::create_dir_all(inaccessible).expect("inaccessible");
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let busd = busd(&dir);
    let ns = "testsuite-49-namespaced.service";
    let plain = "testsuite-49-non-namespaced.service";

    systemctl(&busd, &["start", ns]).expect(0);
    let out = systemctl(
        &busd,
        &[
            "bind",
            "--mkdir",
            ns,
            "/run/testservice-49-fixed",
            "/run/inaccessible/testfile_fixed",
        ],
    );
    failed_saying(
        &out,
        "/run/inaccessible/testfile_fixed is not accessible to this unit",
    );
    std::fs::write(runtime, "MARKER_RUNTIME\n").expect("runtime");
    systemctl(
        &busd,
        &[
            "bind",
            "--mkdir",
            ns,
            "/run/testservice-49-runtime",
            "/tmp/testfile_runtime",
        ],
    )
    .expect(0);
    wait_not_running(&busd, ns, WAIT);
    systemctl(&busd, &["is-active", ns]).expect(0);
    // Active, its main process gone: nothing to bind into (systemd's
    // words for a unit with no main process).
    let out = systemctl(
        &busd,
        &["bind", ns, "/run/testservice-49-runtime", "/tmp/x"],
    );
    failed_saying(&out, "Unit is not running");

    systemctl(&busd, &["start", plain]).expect(0);
    let out = systemctl(
        &busd,
        &[
            "bind",
            "--mkdir",
            plain,
            "/run/testservice-49-runtime",
            "/tmp/testfile_runtime",
        ],
    );
    failed_saying(
        &out,
        "Unit not running in private mount namespace, cannot activate bind mount",
    );
    // Its RuntimeMaxSec=10 ends it, failed.
    wait_not_running(&busd, plain, WAIT + std::time::Duration::from_secs(10));
    let out = systemctl(&busd, &["is-active", plain]);
    assert_ne!(out.code, 0, "{out:?}");
}

/// systemd's refusals of paths that are not absolute and normal, and of a
/// unit that is no service, as `InvalidArgs` in its words.
#[test]
fn systemctl_bind_refuses_bad_paths_and_units_as_systemd() {
    let dir = TestDir::new_in(Path::new("/run"));
    units(&dir);
    dir.file(
        "units/bind-box.service",
        "[Service]\nPrivateTmp=yes\nExecStart=/bin/sleep 1000\n",
    );
    dir.file(
        "units/bind-box.socket",
        "[Socket]\nListenStream=/run/flotilla-box-test.sock\n",
    );
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let busd = busd(&dir);
    systemctl(&busd, &["start", "bind-box.service"]).expect(0);
    let out = systemctl(&busd, &["bind", "bind-box.service", "/run//x", "/tmp/x"]);
    failed_saying(&out, "Source path must be absolute and normalized.");
    let out = systemctl(&busd, &["bind", "bind-box.service", "/run/x", "/tmp/../x"]);
    failed_saying(&out, "Destination path must be absolute and normalized.");
    let out = systemctl(&busd, &["bind", "bind-box.socket", "/run/x", "/tmp/x"]);
    failed_saying(&out, "Unit is not of type .service");
    let out = systemctl(&busd, &["bind", "nosuch.service", "/run/x", "/tmp/x"]);
    assert_ne!(out.code, 0, "{out:?}");
}
