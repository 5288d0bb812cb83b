//! `PAMName=`: a unit's process inside a real PAM session (Linux-PAM's
//! own modules, a service file of the test's in `/etc/pam.d`), opened by
//! `flotilla-pam` and closed when the process ends.

use flotilla_tests::init::{Init, TestDir};
use flotilla_tests::{bins, procs, wait_for, WAIT};
use flotilla_units::state::UnitState;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

/// A PAM service of the test's, `/etc/pam.d/NAME`, removed at the end.
struct PamService {
    name: String,
    path: PathBuf,
}

impl PamService {
    fn new(tag: &str, stack: &str) -> PamService {
        let name = format!("flotilla-test-{}-{tag}", std::process::id());
        let path = PathBuf::from("/etc/pam.d").join(&name);
        std::fs::write(&path, stack).expect("write the PAM service");
        PamService { name, path }
    }
}

impl Drop for PamService {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A file `nobody` may append to.
fn shared_file(dir: &TestDir, rel: &str) -> PathBuf {
    let p = dir.file(rel, "");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    p
}

fn start(dir: &TestDir, unit: &str) -> Init {
    // Built beside the init, where the init looks for it.
    let helper = bins::pam();
    assert!(helper.exists(), "{}", helper.display());
    dir.unit("other", "unit: other\ntype: virtual\n");
    dir.start(unit)
}

#[test]
fn the_process_runs_as_its_user_inside_the_session_until_it_stops() {
    let dir = TestDir::new();
    let events = shared_file(&dir, "events");
    // pam_exec runs the hook at the open (as root) and at the close (in
    // the holder, as the unit's user); pam_env sets a variable.
    let hook = dir.script(
        "hook.sh",
        &format!("echo \"$PAM_TYPE $PAM_USER\" >> {}", events.display()),
    );
    let env = dir.file("pam_env.conf", "FLOTILLA_PAM_SESSION DEFAULT=opened\n");
    let pam = PamService::new(
        "session",
        &format!(
            "account required pam_permit.so\n\
             session required pam_env.so conffile={} readenv=0\n\
             session required pam_exec.so {}\n",
            env.display(),
            hook.display()
        ),
    );
    let seen = shared_file(&dir, "seen");
    let script = dir.script(
        "svc.sh",
        &format!(
            "echo \"$(id -un) $FLOTILLA_PAM_SESSION $INIT_UNIT\" > {}\nexec sleep 1000",
            seen.display()
        ),
    );
    dir.file(
        "units/pam.service",
        &format!(
            // KillMode=process: the holder is left to close the session
            // on its own. With the cgroup's modes flotilla kills what is
            // left of the unit once its main process is gone, where
            // systemd waits for the cgroup to empty first (service-context.md
            // says so): the holder may be killed before it closes.
            "[Service]\nUser=nobody\nPAMName={}\nKillMode=process\nExecStart=/bin/sh {}\n",
            pam.name,
            script.display()
        ),
    );
    let init = start(&dir, "pam.service");
    init.wait_state("pam.service", UnitState::Running);
    wait_for(WAIT, "the service's line", || {
        (!dir.read("seen").is_empty()).then_some(())
    });
    // Its own user, the variable PAM's modules set, the init's own.
    assert_eq!(dir.read("seen"), "nobody opened pam.service\n");
    assert_eq!(dir.read("events"), "open_session nobody\n");
    // The main PID is the program's, not a helper's: the helper executed
    // it in its own process. The script writes its line, then execs
    // `sleep`: awaited, as the line may be read between the two.
    let pid = init.pid_of("pam.service");
    wait_for(WAIT, "the main process to be sleep", || {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
        (comm.trim() == "sleep").then_some(())
    });
    init.ctl(&["set-target", "other"]).expect(0);
    init.wait_state("pam.service", UnitState::Disabled);
    wait_for(WAIT, "the session's close", || {
        dir.read("events").contains("close_session").then_some(())
    });
    assert_eq!(
        dir.read("events"),
        "open_session nobody\nclose_session nobody\n"
    );
    assert!(!procs::alive(pid) || procs::state(pid) == Some('Z'));
}

#[test]
fn an_account_pam_refuses_fails_the_start_with_systemd_status() {
    let dir = TestDir::new();
    let pam = PamService::new(
        "deny",
        "account required pam_deny.so\nsession required pam_permit.so\n",
    );
    let ran = dir.join("ran");
    dir.file(
        "units/denied.service",
        &format!(
            "[Service]\nType=oneshot\nUser=nobody\nPAMName={}\nExecStart=/usr/bin/touch {}\n",
            pam.name,
            ran.display()
        ),
    );
    let init = start(&dir, "denied.service");
    let st = init.wait_state("denied.service", UnitState::Failed);
    // systemd's EXIT_PAM.
    assert_eq!(st.exit_status, Some(224), "{st:?}");
    assert!(!ran.exists(), "the program ran without its session");
    let logs = init.ctl(&["logs", "denied.service"]);
    assert!(
        logs.stdout.contains(&format!(
            "flotilla-pam: PAM service {} for nobody: pam_acct_mgmt:",
            pam.name
        )),
        "{}",
        logs.stdout
    );
}

#[test]
fn without_a_user_there_is_no_session() {
    let dir = TestDir::new();
    let events = shared_file(&dir, "events");
    let hook = dir.script(
        "hook.sh",
        &format!("echo \"$PAM_TYPE\" >> {}", events.display()),
    );
    let pam = PamService::new(
        "nouser",
        &format!(
            "account required pam_permit.so\nsession required pam_exec.so {}\n",
            hook.display()
        ),
    );
    dir.file(
        "units/root.service",
        &format!(
            "[Service]\nType=oneshot\nRemainAfterExit=yes\nPAMName={}\nExecStart=/usr/bin/id -u\n",
            pam.name
        ),
    );
    let init = start(&dir, "root.service");
    init.wait_state("root.service", UnitState::Exited);
    // systemd ignores PAMName= without User=.
    assert_eq!(dir.read("events"), "");
}

/// A command line's `$NAME` and `${NAME}` take the variables the session
/// sets, as systemd expands them after PAM: `systemd-run --user -M
/// testuser@.host` (systemd's test 04) runs `systemd-stdio-bridge
/// -punix:path=${XDG_RUNTIME_DIR}/bus` in a session of `login`, where
/// pam_systemd sets the variable.
#[test]
fn the_command_line_takes_the_variables_the_session_sets() {
    let dir = TestDir::new();
    let env = dir.file("pam_env.conf", "FLOTILLA_PAM_DIR DEFAULT=/run/flotilla-x\n");
    let pam = PamService::new(
        "expand",
        &format!(
            "account required pam_permit.so\n\
             session required pam_env.so conffile={} readenv=0\n",
            env.display()
        ),
    );
    let seen = shared_file(&dir, "seen");
    let script = dir.script("svc.sh", &format!("echo \"$@\" > {}", seen.display()));
    dir.file(
        "units/pam.service",
        &format!(
            "[Service]\nType=oneshot\nRemainAfterExit=yes\nUser=nobody\nPAMName={}\n\
             ExecStart=/bin/sh {} ${{FLOTILLA_PAM_DIR}}/bus $FLOTILLA_PAM_DIR $$HOME\n",
            pam.name,
            script.display()
        ),
    );
    let init = start(&dir, "pam.service");
    init.wait_state("pam.service", UnitState::Exited);
    assert_eq!(
        dir.read("seen"),
        "/run/flotilla-x/bus /run/flotilla-x $HOME\n"
    );
}
