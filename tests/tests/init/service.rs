//! System tests of a service's context under the init in supervisor mode:
//! each unit in a cgroup of its own, a stop that reaches every process of
//! the unit (a `setsid` child, a daemon a `Type=forking` start forked
//! before it was ready), and the sandbox of a systemd unit file checked
//! from `/proc/PID` (harness: `tests/src/`).
//!
//! Every process a test starts carries the test's mark, and the harness
//! kills every marked process when the test ends, pass or fail.

use flotilla_tests::init::{Init, TestDir};
use flotilla_tests::{procs, wait_for, WAIT};
use flotilla_units::state::UnitState;
use std::path::PathBuf;

/// Whether the machine has a writable cgroup2 (what the stop of a whole
/// unit relies on): the tests below need it, and the suite's machines
/// have it.
fn cgroup2() -> bool {
    std::fs::read_to_string("/proc/self/mountinfo")
        .map(|m| m.lines().any(|l| l.contains(" - cgroup2 ")))
        .unwrap_or(false)
}

/// The PID a script wrote to `file` in the test dir, once it is there.
fn pid_in(dir: &TestDir, file: &str) -> i32 {
    wait_for(WAIT, &format!("{file} written"), || {
        std::fs::read_to_string(dir.join(file))
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
    })
}

/// Waits until `pid` is gone (or a zombie: dead, not yet reaped by
/// whoever inherited it).
fn wait_gone(pid: i32, what: &str) {
    wait_for(WAIT, what, || {
        (!procs::alive(pid) || procs::state(pid) == Some('Z')).then_some(())
    });
}

/// A virtual unit `other`, to switch to: every unit outside its set stops.
fn other_target(dir: &TestDir) {
    dir.unit("other", "unit: other\ntype: virtual\n");
}

/// `NAME.service` running `/bin/sh SCRIPT`, `keys` (lines) in its
/// `[Service]`, started as the target beside `other`, once it runs.
fn running_script(dir: &TestDir, name: &str, keys: &str, script: &std::path::Path) -> Init {
    dir.file(
        &format!("units/{name}.service"),
        &format!("[Service]\n{keys}ExecStart=/bin/sh {}\n", script.display()),
    );
    other_target(dir);
    let init = dir.start(&format!("{name}.service"));
    init.wait_state(&format!("{name}.service"), UnitState::Running);
    init
}

/// Switches to `other` and waits until `unit` has stopped.
fn stop_by_switch(init: &Init, unit: &str) {
    init.ctl(&["set-target", "other"]).expect(0);
    init.wait_state(unit, UnitState::Disabled);
}

#[test]
fn a_setsid_child_dies_with_its_unit_at_stop_and_at_exit() {
    assert!(cgroup2(), "no cgroup2 on this machine");
    let dir = TestDir::new();
    let script = dir.script(
        "leader.sh",
        &format!(
            "setsid sleep 1000 </dev/null >/dev/null 2>&1 &\necho $! > {}\nexec sleep 1000\n",
            dir.join("child.pid").display()
        ),
    );
    dir.unit(
        "web",
        &format!("unit: web\nexec-start: /bin/sh {}\n", script.display()),
    );
    other_target(&dir);
    let init = dir.start("web");
    init.wait_state("web", UnitState::Running);
    let child = pid_in(&dir, "child.pid");
    assert!(procs::alive(child));
    // The child is in the unit's cgroup, below the init's own.
    let cg = std::fs::read_to_string(format!("/proc/{child}/cgroup")).unwrap_or_default();
    assert!(cg.contains("/web"), "{cg}");
    stop_by_switch(&init, "web");
    wait_gone(child, "the setsid child killed at the stop");

    // The same at the init's exit.
    std::fs::remove_file(dir.join("child.pid")).expect("rm");
    let mut init = {
        drop(init);
        dir.start("web")
    };
    init.wait_state("web", UnitState::Running);
    let child = pid_in(&dir, "child.pid");
    init.signal(libc::SIGTERM);
    assert_eq!(init.wait_exit(), 0, "{}", init.output());
    wait_gone(child, "the setsid child killed at the init's exit");
}

#[test]
fn a_forking_daemon_stopped_while_starting_dies() {
    assert!(cgroup2(), "no cgroup2 on this machine");
    let dir = TestDir::new();
    // As pg_ctlcluster does: the start forks the daemon into a session of
    // its own, then waits for it to be ready (here: for ever), so the
    // unit is still `starting` when it is stopped.
    let script = dir.script(
        "start.sh",
        &format!(
            "setsid sleep 1000 </dev/null >/dev/null 2>&1 &\necho $! > {}\nexec sleep 1000\n",
            dir.join("daemon.pid").display()
        ),
    );
    dir.file(
        "units/db.service",
        &format!(
            "[Service]\nType=forking\nPIDFile={}\nExecStart=/bin/sh {}\nTimeoutStartSec=300\n",
            dir.join("never.pid").display(),
            script.display()
        ),
    );
    other_target(&dir);
    let init = dir.start("db.service");
    init.wait_state("db.service", UnitState::Starting);
    let daemon = pid_in(&dir, "daemon.pid");
    assert!(procs::alive(daemon));
    stop_by_switch(&init, "db.service");
    wait_gone(daemon, "the forked daemon killed by the stop");
}

#[test]
fn a_systemd_units_sandbox_from_outside() {
    assert!(cgroup2(), "no cgroup2 on this machine");
    let dir = TestDir::new();
    let name = format!("flotilla-test-{}", std::process::id());
    dir.file(
        "units/box.service",
        &format!(
            "[Service]\nExecStart=/bin/sleep 1000\nNoNewPrivileges=yes\n\
             CapabilityBoundingSet=CAP_NET_BIND_SERVICE\nProtectSystem=strict\n\
             PrivateTmp=yes\nRuntimeDirectory={name}\nUMask=0077\nLimitNOFILE=4321\n"
        ),
    );
    let init = dir.start("box.service");
    init.wait_state("box.service", UnitState::Running);
    let pid = init.pid_of("box.service");
    // `running` once its process has exec'd, although it was handed off
    // to make its runtime directory (its start was told at the hand-off,
    // before the directory existed: systemd's test 33).
    assert_eq!(procs::cmdline(pid), "/bin/sleep 1000");
    assert!(std::path::Path::new(&format!("/run/{name}")).is_dir());
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let field = |k: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(k))
            .map(str::trim)
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(field("NoNewPrivs:"), "1");
    assert_eq!(
        field("CapBnd:"),
        "0000000000000400",
        "CAP_NET_BIND_SERVICE alone"
    );
    assert_eq!(field("Umask:"), "0077");
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("limits");
    assert!(
        limits
            .lines()
            .any(|l| l.starts_with("Max open files") && l.contains("4321")),
        "{limits}"
    );
    // Its own mount namespace: / read-only, its /run/NAME and a private
    // /tmp writable.
    let own = std::fs::read_link(format!("/proc/{pid}/ns/mnt")).expect("ns");
    let mine = std::fs::read_link("/proc/self/ns/mnt").expect("ns");
    assert_ne!(own, mine);
    let mounts = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).expect("mountinfo");
    let opts = |target: &str| {
        mounts
            .lines()
            .rfind(|l| l.split(' ').nth(4) == Some(target))
            .and_then(|l| l.split(' ').nth(5))
            .unwrap_or_default()
            .to_string()
    };
    assert!(opts("/").starts_with("ro"), "/: {}", opts("/"));
    assert!(opts("/tmp").starts_with("rw"), "/tmp: {}", opts("/tmp"));
    assert!(std::path::Path::new(&format!("/run/{name}")).is_dir());
    // Stopped: its runtime directory goes.
    let mut init = init;
    init.signal(libc::SIGTERM);
    assert_eq!(init.wait_exit(), 0, "{}", init.output());
    wait_for(WAIT, "the runtime directory removed", || {
        (!std::path::Path::new(&format!("/run/{name}")).exists()).then_some(())
    });
}

#[test]
fn a_forking_daemon_without_a_pidfile_is_found_in_its_cgroup() {
    assert!(cgroup2(), "no cgroup2 on this machine");
    let dir = TestDir::new();
    // The daemon forks a worker of its own: the main process is the one
    // whose parent is not in the unit's cgroup.
    let script = dir.script(
        "daemon.sh",
        &format!(
            "sleep 1000 &\necho $$ > {}\nexec sleep 1000\n",
            dir.join("daemon.pid").display()
        ),
    );
    let start = dir.script(
        "start.sh",
        &format!(
            "setsid /bin/sh {} </dev/null >/dev/null 2>&1 &\n",
            script.display()
        ),
    );
    dir.file(
        "units/fork.service",
        &format!(
            "[Service]\nType=forking\nExecStart=/bin/sh {}\n",
            start.display()
        ),
    );
    let init = dir.start("fork.service");
    let daemon = pid_in(&dir, "daemon.pid");
    let st = init.wait_state("fork.service", UnitState::Running);
    assert_eq!(st.pid, Some(daemon), "{st:?}");
}

/// `GuessMainPID=no` (Debian's `postfix@.service`): no main PID is taken
/// from the cgroup; the service runs while its cgroup holds a process and
/// is done, not failed, once its daemon is gone.
#[test]
fn a_forking_daemon_without_a_guessed_main_pid_runs_while_its_cgroup_does() {
    assert!(cgroup2(), "no cgroup2 on this machine");
    let dir = TestDir::new();
    let start = dir.script(
        "start.sh",
        &format!(
            "setsid sleep 1000 </dev/null >/dev/null 2>&1 &\necho $! > {}\n",
            dir.join("daemon.pid").display()
        ),
    );
    dir.file(
        "units/fork.service",
        &format!(
            "[Service]\nType=forking\nGuessMainPID=no\nExecStart=/bin/sh {}\n",
            start.display()
        ),
    );
    let init = dir.start("fork.service");
    let daemon = pid_in(&dir, "daemon.pid");
    let st = init.wait_state("fork.service", UnitState::Running);
    assert_eq!(st.pid, None, "{st:?}");
    // SAFETY: kill(2) with the PID of the test's own daemon.
    unsafe { libc::kill(daemon, libc::SIGKILL) };
    wait_gone(daemon, "the daemon");
    let st = init.wait_unit("fork.service", "not running", |u| {
        u.state != UnitState::Running
    });
    assert_ne!(st.state, UnitState::Failed, "{st:?}");
}

/// An LSB init script as TEST-26's `issue-24990`: `start` leaves
/// `sleep 1000` behind, `stop` leaves `sleep 10`, and both exit at once;
/// each appends the PID of what it left to `daemons` in the test dir.
pub(crate) fn lsb_script(dir: &TestDir, rel: &str) -> PathBuf {
    let daemons = dir.join("daemons");
    let daemons = daemons.display();
    dir.script(
        rel,
        &format!(
            "### BEGIN INIT INFO\n\
             # Provides:          flotilla-lsb\n\
             # Required-Start:\n\
             # Required-Stop:\n\
             # Default-Start:     2 3 4 5\n\
             # Default-Stop:      0 1 6\n\
             # Short-Description: an LSB script as TEST-26's\n\
             ### END INIT INFO\n\
             case \"$1\" in\n\
             start) sleep 1000 & echo $! >> {daemons} ;;\n\
             stop) sleep 10 & echo $! >> {daemons} ;;\n\
             esac\n\
             exit 0"
        ),
    )
}

/// The PIDs in `daemons` ([`lsb_script`]), once there are `n`.
fn daemons(dir: &TestDir, n: usize) -> Vec<i32> {
    wait_for(WAIT, &format!("{n} daemons"), || {
        let pids: Vec<i32> = dir
            .lines("daemons")
            .iter()
            .flat_map(|l| l.parse())
            .collect();
        (pids.len() >= n).then_some(pids)
    })
}

/// Starts, restarts and stops `unit`, [`lsb_script`]'s service with
/// `GuessMainPID=no` (required by the init's target, so running already):
/// it runs with no main PID while its cgroup holds a process, and its stop
/// and restart are over within [`WAIT`], not at its 5 min stop timeout.
/// The PIDs of the daemons its commands left: start, stop, start, stop.
pub(crate) fn start_restart_stop(init: &Init, dir: &TestDir, unit: &str) -> Vec<i32> {
    let st = init.wait_state(unit, UnitState::Running);
    assert_eq!(st.pid, None, "{st:?}");
    daemons(dir, 1);
    init.ctl(&["restart", unit]).expect(0);
    daemons(dir, 3);
    let st = init.wait_state(unit, UnitState::Running);
    assert_eq!(st.pid, None, "{st:?}");
    init.ctl(&["stop", unit]).expect(0);
    init.wait_state(unit, UnitState::Disabled);
    daemons(dir, 4)
}

/// Kills the test's daemons by their PIDs.
pub(crate) fn kill_all(pids: &[i32]) {
    for &pid in pids {
        // SAFETY: kill(2) with the PID of a daemon the test's script left.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// The service Debian's `systemd-sysv-generator` writes for an LSB script
/// (`KillMode=process`, `GuessMainPID=no`, `RemainAfterExit=yes`): its
/// stop runs the script's `stop` and ends there, as systemd's with no
/// main process to signal; what the script left keeps running (TEST-26's
/// `issue-24990`, whose stop hung when it waited for the cgroup).
#[test]
fn a_sysv_service_stops_with_its_stop_command() {
    assert!(cgroup2(), "no cgroup2 on this machine");
    let dir = TestDir::new();
    let (init, pids) = lsb_service(&dir, "process");
    // Its starts' daemons (its stops' end by themselves), and the words
    // systemd has for them.
    let alive = [pids[0], pids[2]].map(procs::alive);
    let left = format!(
        "unit process {} (sleep) remains running after unit stopped",
        pids[2]
    );
    wait_for(WAIT, "the note of what was left", || {
        let log = init.ctl(&["logs", "lsb.service"]).stdout.clone();
        log.contains(&left).then_some(())
    });
    kill_all(&pids);
    assert_eq!(alive, [true, true], "{pids:?}");
}

/// The same with `KillMode=control-group`: the stop signals the cgroup
/// and waits for it to be empty, so nothing the script left survives it.
#[test]
fn a_sysv_like_service_of_kill_mode_control_group_stops_its_cgroup() {
    assert!(cgroup2(), "no cgroup2 on this machine");
    let dir = TestDir::new();
    let (_init, pids) = lsb_service(&dir, "control-group");
    for pid in &pids {
        wait_gone(*pid, "a daemon of the stopped service");
    }
}

/// [`lsb_script`] in the service the SysV generator would write, with
/// `kill_mode`, started, restarted and stopped ([`start_restart_stop`]):
/// the init, and the PIDs of the daemons.
fn lsb_service(dir: &TestDir, kill_mode: &str) -> (Init, Vec<i32>) {
    let script = lsb_script(dir, "lsb");
    let s = script.display();
    dir.file(
        "units/lsb.service",
        &format!(
            "[Service]\nType=forking\nRestart=no\nTimeoutSec=5min\nIgnoreSIGPIPE=no\n\
             KillMode={kill_mode}\nGuessMainPID=no\nRemainAfterExit=yes\n\
             SuccessExitStatus=5 6\nExecStart={s} start\nExecStop={s} stop\n"
        ),
    );
    dir.unit(
        "default",
        "unit: default\ntype: virtual\ndepends-on: [lsb.service]\n",
    );
    let init = dir.start("default");
    let pids = start_restart_stop(&init, dir, "lsb.service");
    (init, pids)
}

/// Debian's `rpc-statd-notify.service`: `Type=forking`, no pidfile,
/// `RemainAfterExit=yes`, and a start command (`sm-notify`) that exits 0
/// leaving no daemon. As under systemd, it is active (exited), not a
/// start that times out; without `RemainAfterExit=` it is done, inactive,
/// and not failed.
#[test]
fn a_forking_start_that_leaves_no_process_is_done() {
    assert!(cgroup2(), "no cgroup2 on this machine");
    let dir = TestDir::new();
    dir.file(
        "units/notify.service",
        "[Service]\nType=forking\nRemainAfterExit=yes\nExecStart=-/bin/true\nTimeoutStartSec=300\n",
    );
    dir.file(
        "units/once.service",
        "[Service]\nType=forking\nExecStart=/bin/true\nTimeoutStartSec=300\n",
    );
    dir.file(
        "units/both.target",
        "[Unit]\nWants=notify.service once.service\n",
    );
    let init = dir.start("both.target");
    let st = init.wait_state("notify.service", UnitState::Exited);
    assert_eq!(st.pid, None, "{st:?}");
    // Never `failed`, and never `running`: done, as a oneshot is.
    init.wait_unit("once.service", "done", |u| {
        matches!(u.state, UnitState::Exited | UnitState::Disabled)
    });
}

#[test]
fn systemd_command_lines_environment_and_output() {
    let dir = TestDir::new();
    let out = dir.join("out.txt");
    dir.file("env", "GREETING=hello world\nWHO=flotilla\n");
    let show = dir.script(
        "show.sh",
        "echo \"${DROP-unset}:$KEEP:$ALSO:${INIT_UNIT-unset}\"\n",
    );
    // `$GREETING` alone splits into words, `${WHO}` inside one stays
    // whole; `@` gives the program its own argv[0]; the second
    // ExecStart= of a oneshot runs after the first; StandardOutput=
    // appends to a file.
    dir.file(
        "units/multi.service",
        &format!(
            "[Service]\nType=oneshot\nEnvironmentFile={env}\n\
             ExecStart=/bin/sh -c 'echo \"$#:$1:$2:$3\"' sh $GREETING x${{WHO}}y\n\
             ExecStart=@/bin/sh myname -c 'echo \"$0\"'\n\
             ExecStart=-/bin/false\n\
             ExecStart=/bin/sh {show}\n\
             Environment=DROP=1 KEEP=2 ALSO=3\n\
             UnsetEnvironment=DROP ALSO=4 INIT_UNIT\n\
             StandardOutput=append:{out}\n",
            env = dir.join("env").display(),
            show = show.display(),
            out = out.display()
        ),
    );
    let init = dir.start("multi.service");
    init.wait_state("multi.service", UnitState::Exited);
    let text = std::fs::read_to_string(&out).expect("output file");
    // UnsetEnvironment= takes out a name, even one the init sets, and an
    // assignment only with its value.
    assert_eq!(text, "3:hello:world:xflotillay\nmyname\nunset:2:3:unset\n");
}

#[test]
fn send_sighup_follows_the_kill_signal() {
    let dir = TestDir::new();
    let log = dir.join("signals");
    let script = dir.script(
        "shell.sh",
        &format!(
            "trap 'echo TERM >> {log}' TERM\n\
             trap 'echo HUP >> {log}; exit 0' HUP\n\
             echo $$ > {ready}\n\
             while :; do sleep 1000 & wait $!; done\n",
            log = log.display(),
            ready = dir.join("ready").display()
        ),
    );
    let init = running_script(&dir, "shell", "SendSIGHUP=yes\n", &script);
    // Running once the shell has exec'd, which is before its traps are
    // set: a stop in between (a loaded machine) kills it unheard.
    let pid = pid_in(&dir, "ready");
    stop_by_switch(&init, "shell.service");
    wait_gone(pid, "the shell");
    let heard = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(heard.contains("HUP"), "the shell heard: {heard:?}");
}

/// `SendSIGKILL=no`: a process that ignores the stop's signal is not sent
/// `SIGKILL` when `TimeoutStopSec=` passes, nor killed with its cgroup
/// once the unit is down: it runs on (the test ends it).
#[test]
fn send_sigkill_no_leaves_a_stubborn_process_running() {
    let dir = TestDir::new();
    let script = dir.script(
        "stubborn.sh",
        &format!(
            // The PID written once TERM is ignored, which the test waits
            // for before the stop.
            "trap '' TERM\necho $$ > {}\nexec sleep 1000\n",
            dir.join("main.pid").display()
        ),
    );
    let keys = "SendSIGKILL=no\nTimeoutStopSec=1\n";
    let init = running_script(&dir, "stubborn", keys, &script);
    let pid = pid_in(&dir, "main.pid");
    stop_by_switch(&init, "stubborn.service");
    let alive = procs::alive(pid) && procs::state(pid) != Some('Z');
    // SAFETY: kill(2) with the PID of the test's own service.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    assert!(alive, "SendSIGKILL=no: the process is left running");
    wait_gone(pid, "the stubborn process");
}

#[test]
fn kill_mode_process_leaves_the_rest_running() {
    assert!(cgroup2(), "no cgroup2 on this machine");
    let dir = TestDir::new();
    let script = dir.script(
        "leader.sh",
        &format!(
            "sleep 1000 &\necho $! > {}\nexec sleep 1000\n",
            dir.join("child.pid").display()
        ),
    );
    let init = running_script(&dir, "keep", "KillMode=process\n", &script);
    let child = pid_in(&dir, "child.pid");
    stop_by_switch(&init, "keep.service");
    assert!(
        procs::alive(child) && procs::state(child) != Some('Z'),
        "KillMode=process: the child stays"
    );
}

#[test]
fn a_daemon_that_stops_pinging_its_watchdog_fails() {
    let dir = TestDir::new();
    // Pings every 100 ms while the file `ping` exists, then hangs.
    let py = dir.file(
        "dog.py",
        "import os, socket, sys, time\n\
         s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n\
         assert os.environ['WATCHDOG_USEC'] == '1000000'\n\
         while os.path.exists(sys.argv[1]):\n\
         \x20   s.sendto(b'WATCHDOG=1', os.environ['NOTIFY_SOCKET'])\n\
         \x20   time.sleep(0.1)\n\
         time.sleep(1000)\n",
    );
    let ping = dir.file("ping", "");
    dir.unit(
        "dog",
        &format!(
            "unit: dog\nexec-start: [/usr/bin/python3, {}, {}]\nwatchdog-sec: 1s\nrestart: no\n",
            py.display(),
            ping.display()
        ),
    );
    let init = dir.start("dog");
    init.wait_state("dog", UnitState::Running);
    // Alive well past its watchdog interval while it pings: nothing about
    // it is reported for 2.5 s.
    let mut sub = init.subscribe();
    let quiet = std::time::Instant::now() + std::time::Duration::from_millis(2500);
    while let Some(u) = sub.next(quiet) {
        assert_ne!(u.unit, "dog", "{u:?}");
    }
    assert_eq!(init.unit("dog").state, UnitState::Running);
    std::fs::remove_file(&ping).expect("rm ping");
    let st = init.wait_state("dog", UnitState::Failed);
    assert!(st.status.contains("watchdog timeout"), "{st:?}");
    assert_eq!(
        st.result,
        Some(flotilla_units::state::FailureKind::Watchdog),
        "{st:?}"
    );
}

#[test]
fn status_shows_what_a_units_cgroup_uses() {
    assert!(cgroup2(), "no cgroup2 on this machine");
    let dir = TestDir::new();
    let script = dir.script(
        "busy.sh",
        &format!(
            "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done\ntouch {}\nexec sleep 1000\n",
            dir.join("done").display()
        ),
    );
    dir.unit(
        "busy",
        &format!("unit: busy\nexec-start: /bin/sh {}\n", script.display()),
    );
    let init = dir.start("busy");
    wait_for(WAIT, "the busy loop done", || {
        dir.join("done").exists().then_some(())
    });
    // The cgroup's CPU time (cpu.stat is in every cgroup2 directory; memory
    // and tasks only where their controllers are enabled, as in the VM).
    let usage = init
        .unit("busy")
        .usage
        .expect("usage from the unit's cgroup");
    let cpu = usage.cpu_usec.expect("cpu.stat's usage_usec");
    assert!(cpu >= 1_000, "{usage:?}");
    let text = init.ctl(&["status", "busy"]).expect(0).stdout.clone();
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("CPU: ")),
        "{text}"
    );
    // The whole system's status reads no cgroup.
    let all = init.status().units;
    assert!(all.iter().all(|u| u.usage.is_none()), "{all:?}");
}

/// The cgroup2 mount point (the checks of the test below write below it).
fn cgroup2_mount() -> String {
    let mi = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    mi.lines()
        .filter(|l| l.contains(" - cgroup2 "))
        .find_map(|l| l.split(' ').nth(4).map(str::to_string))
        .expect("a cgroup2 mount")
}

/// Stops `unit` (a switch to `other`) and starts it again at once (back
/// to `target`), `times` times, each time awaiting a new main process
/// that runs in the unit's cgroup.
fn stop_start_at_once(init: &Init, target: &str, unit: &str, times: usize) {
    for i in 0..times {
        init.ctl(&["set-target", "other"]).expect(0);
        init.wait_state(unit, UnitState::Disabled);
        init.ctl(&["set-target", target]).expect(0);
        let st = init.wait_state(unit, UnitState::Running);
        let pid = st.pid.expect("a main process");
        let cg = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
        assert!(cg.ends_with(&format!("/{unit}\n")), "start {i}: {cg}");
    }
}

#[test]
fn a_unit_whose_cgroup_was_killed_starts_again_at_once() {
    assert!(cgroup2(), "no cgroup2 on this machine");
    let dir = TestDir::new();
    // The start makes a cgroup below its own: its unit's cgroup cannot be
    // removed when the run ends (it has a child), so the next run starts
    // in the cgroup the end of the last one killed.
    let mount = cgroup2_mount();
    let nest = dir.script(
        "nest.sh",
        &format!("mkdir -p {mount}$(sed -n 's/^0:://p' /proc/self/cgroup)/keep\nexec sleep 1000\n"),
    );
    dir.unit(
        "nest",
        &format!("unit: nest\nexec-start: /bin/sh {}\n", nest.display()),
    );
    // A double-fork: each end kills a process that may still be dying
    // when the next start comes (the cgroup is removed, or reused).
    let fork = dir.script(
        "fork.sh",
        "(setsid sleep 1000 </dev/null >/dev/null 2>&1 &)\nexec sleep 1000\n",
    );
    dir.unit(
        "fork",
        &format!("unit: fork\nexec-start: /bin/sh {}\n", fork.display()),
    );
    other_target(&dir);
    let init = dir.start("nest");
    init.wait_state("nest", UnitState::Running);
    stop_start_at_once(&init, "nest", "nest", 3);
    init.ctl(&["set-target", "fork"]).expect(0);
    init.wait_state("fork", UnitState::Running);
    stop_start_at_once(&init, "fork", "fork", 20);
}

/// `Delegate=yes` with `User=`: the unit's user may make cgroups below its
/// unit's and move its processes into them; without it, the same script
/// as the same user is refused. The stop kills the whole subtree.
#[test]
fn a_delegated_unit_manages_the_cgroups_below_its_own() {
    use std::os::unix::fs::PermissionsExt;
    assert!(cgroup2(), "no cgroup2 on this machine");
    let dir = TestDir::new();
    let out = dir.join("out");
    std::fs::create_dir(&out).expect("mkdir");
    for (p, mode) in [(dir.path(), 0o711), (out.as_path(), 0o777)] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }
    let mount = cgroup2_mount();
    let script = dir.script(
        "nest.sh",
        &format!(
            "cg={mount}$(sed -n 's/^0:://p' /proc/self/cgroup)\n\
             if mkdir \"$cg/work\" 2>/dev/null && echo $$ > \"$cg/work/cgroup.procs\"\n\
             then r=delegated; else r=refused; fi\n\
             echo $r > {o}/$1.new && mv {o}/$1.new {o}/$1\nexec sleep 1000\n",
            o = out.display()
        ),
    );
    for (name, delegate) in [("deleg", "Delegate=yes\n"), ("plain", "")] {
        dir.file(
            &format!("units/{name}.service"),
            &format!(
                "[Service]\nUser=nobody\n{delegate}ExecStart=/bin/sh {} {name}\n",
                script.display()
            ),
        );
    }
    dir.unit(
        "both",
        "unit: both\ntype: virtual\ndepends-on: [deleg.service, plain.service]\n",
    );
    other_target(&dir);
    let init = dir.start("both");
    let result = |name: &str| {
        wait_for(WAIT, &format!("{name} wrote its result"), || {
            std::fs::read_to_string(out.join(name)).ok()
        })
    };
    assert_eq!(result("deleg"), "delegated\n");
    assert_eq!(result("plain"), "refused\n");
    let pid = init
        .wait_state("deleg.service", UnitState::Running)
        .pid
        .expect("a pid");
    let cg = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
    assert!(cg.ends_with("/deleg.service/work\n"), "{cg}");
    stop_by_switch(&init, "deleg.service");
    wait_gone(
        pid,
        "the process in the delegated cgroup killed by the stop",
    );
}

/// `RestartKillSignal=`: `initctl restart` stops the unit with it, a
/// stop by a switch with `KillSignal=`.
#[test]
fn a_restart_by_hand_sends_the_restart_kill_signal() {
    let dir = TestDir::new();
    let got = dir.join("got");
    let script = dir.script(
        "traps.sh",
        &format!(
            "trap 'echo usr2 >> {g}; exit 0' USR2\ntrap 'echo term >> {g}; exit 0' TERM\n\
             echo up >> {g}\nsleep 1000 & wait\n",
            g = got.display()
        ),
    );
    dir.file(
        "units/traps.service",
        &format!(
            "[Service]\nExecStart=/bin/sh {}\nRestartKillSignal=SIGUSR2\n",
            script.display()
        ),
    );
    other_target(&dir);
    let init = dir.start("traps.service");
    let lines = |n: usize| {
        wait_for(WAIT, &format!("{n} lines in {}", got.display()), || {
            let t = std::fs::read_to_string(&got).unwrap_or_default();
            (t.lines().count() >= n).then_some(t)
        })
    };
    lines(1);
    init.ctl(&["restart", "traps.service"]).expect(0);
    assert_eq!(lines(3), "up\nusr2\nup\n");
    stop_by_switch(&init, "traps.service");
    assert_eq!(lines(4), "up\nusr2\nup\nterm\n");
}

/// `WorkingDirectory=-PATH`: a missing directory is no failure, the unit
/// runs in the init's directory; without the `-`, the start fails naming
/// the `chdir`.
#[test]
fn an_optional_working_directory_may_be_missing() {
    let dir = TestDir::new();
    let out = dir.join("pwd");
    let missing = dir.join("missing");
    for (name, prefix) in [("optional", "-"), ("required", "")] {
        dir.file(
            &format!("units/{name}.service"),
            &format!(
                "[Service]\nType=oneshot\nRemainAfterExit=yes\nWorkingDirectory={prefix}{}\n\
                 ExecStart=/bin/sh -c 'pwd > {}'\n",
                missing.display(),
                out.display()
            ),
        );
    }
    let init = dir.start("optional.service");
    init.wait_state("optional.service", UnitState::Exited);
    let pwd = std::fs::read_to_string(&out).expect("the unit ran");
    assert_ne!(pwd.trim(), missing.display().to_string());
    init.ctl(&["set-target", "required.service"]).expect(0);
    let st = init.wait_state("required.service", UnitState::Failed);
    let why = format!("{st:?}");
    assert!(
        why.contains(&format!("chdir {}", missing.display())),
        "{why}"
    );
}

/// `PartOf=`: `initctl restart` of the unit restarts the one that is part
/// of it; a crash of the unit does not.
#[test]
fn a_unit_part_of_another_restarts_with_it() {
    let dir = TestDir::new();
    dir.file(
        "units/web.service",
        "[Service]\nExecStart=/bin/sleep 1000\nRestart=always\nRestartSec=50ms\n",
    );
    dir.file(
        "units/worker.service",
        "[Unit]\nPartOf=web.service\n[Service]\nExecStart=/bin/sleep 1000\n",
    );
    dir.unit(
        "both",
        "unit: both\ntype: virtual\ndepends-on: [web.service, worker.service]\n",
    );
    let init = dir.start("both");
    let worker = init.wait_state("worker.service", UnitState::Running).pid;
    let web = init.wait_state("web.service", UnitState::Running).pid;
    init.ctl(&["restart", "web.service"]).expect(0);
    init.wait("web and worker restarted", |s| {
        let running = |n: &str, old| {
            s.units
                .iter()
                .any(|u| u.unit == n && u.state == UnitState::Running && u.pid != old)
        };
        running("web.service", web) && running("worker.service", worker)
    });
    let worker = init.unit("worker.service").pid;
    let web = init.unit("web.service").pid.expect("web runs");
    // SAFETY: kill(2) on the test's own unit's process.
    unsafe { libc::kill(web, libc::SIGKILL) };
    init.wait("web back after its crash", |s| {
        s.units
            .iter()
            .any(|u| u.unit == "web.service" && u.state == UnitState::Running && u.pid != Some(web))
    });
    assert_eq!(init.unit("worker.service").pid, worker);
}

/// A crash loop under systemd's start limit, from a `.service` file: the
/// first start and two restarts run, the next start is refused and the
/// unit is `failed` for good with the reason; its `OnFailure=` unit runs.
#[test]
fn a_crash_loop_hits_its_start_limit() {
    let dir = TestDir::new();
    let runs = dir.join("runs");
    let alerted = dir.join("alerted");
    dir.file(
        "units/loop.service",
        &format!(
            "[Unit]\nStartLimitIntervalSec=1h\nStartLimitBurst=3\nOnFailure=alert.service\n\
             [Service]\nExecStart=/bin/sh -c 'echo run >> {}; exit 3'\n\
             Restart=always\nRestartSec=50ms\n",
            runs.display()
        ),
    );
    dir.file(
        "units/alert.service",
        &format!(
            "[Service]\nType=oneshot\nExecStart=/bin/touch {}\n",
            alerted.display()
        ),
    );
    let init = dir.start("loop.service");
    let st = init.wait_unit("loop.service", "failed for good", |u| {
        u.state == UnitState::Failed && u.restart_in_ms.is_none()
    });
    assert_eq!(
        st.status, "start limit hit: more than 3 starts in 1h",
        "{st:?}"
    );
    let ran = std::fs::read_to_string(&runs).expect("runs");
    assert_eq!(ran.lines().count(), 3, "{ran}");
    flotilla_tests::wait_for(std::time::Duration::from_secs(10), "alert ran", || {
        alerted.exists().then_some(())
    });
}

#[test]
fn device_allow_lets_a_unit_open_only_the_devices_it_names() {
    assert!(cgroup2(), "no cgroup2 on this machine");
    let dir = TestDir::new();
    let out = dir.join("devices.out");
    // Each line: a device access and whether the kernel allowed it.
    let probe = dir.script(
        "probe.sh",
        "try() { if sh -c \"$2\" 2>/dev/null; then echo \"$1 ok\"; else echo \"$1 denied\"; fi; }\n\
         try null-w 'echo x > /dev/null'\n\
         try zero-r 'head -c1 /dev/zero > /dev/null'\n\
         try kmsg-r ': < /dev/kmsg'\n\
         try kmsg-w 'echo flotilla-device-test > /dev/kmsg'\n",
    );
    let unit = |name: &str, keys: &str| {
        dir.file(
            &format!("units/{name}.service"),
            &format!(
                "[Service]\nType=oneshot\n{keys}\nExecStart=/bin/sh {}\nStandardOutput=append:{}\n",
                probe.display(),
                out.display()
            ),
        );
    };
    // strict: /dev/null alone. auto with a list is closed: the standard
    // devices, and here the `mem` driver's devices (/dev/kmsg) read-only.
    unit("strict", "DevicePolicy=strict\nDeviceAllow=/dev/null rw");
    unit("closed", "DeviceAllow=char-mem r");
    dir.unit(
        "default",
        "unit: default\ntype: virtual\ndepends-on: [strict.service]\n",
    );
    dir.unit(
        "second",
        "unit: second\ntype: virtual\ndepends-on: [closed.service]\n",
    );
    let init = dir.start("default");
    init.wait_state("strict.service", UnitState::Exited);
    init.ctl(&["set-target", "second"]).expect(0);
    init.wait_state("closed.service", UnitState::Exited);
    let text = std::fs::read_to_string(&out).expect("the probes' output");
    assert_eq!(
        text,
        "null-w ok\nzero-r denied\nkmsg-r denied\nkmsg-w denied\n\
         null-w ok\nzero-r ok\nkmsg-r ok\nkmsg-w denied\n"
    );
}

#[test]
fn ip_address_deny_drops_what_ip_address_allow_does_not_name() {
    assert!(cgroup2(), "no cgroup2 on this machine");
    let dir = TestDir::new();
    // The test's own listener, outside the units' cgroups: connections
    // wait in its backlog.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("port").port();
    let out = dir.join("ip.out");
    let client = dir.script(
        "client.py",
        &format!(
            "import errno, socket, sys\n\
             s = socket.socket()\n\
             s.settimeout(2)\n\
             try:\n\
             \x20   s.connect(('127.0.0.1', {port}))\n\
             \x20   print(sys.argv[1], 'connected')\n\
             except OSError as e:\n\
             \x20   print(sys.argv[1], errno.errorcode.get(e.errno, 'timeout'))\n"
        ),
    );
    let unit = |name: &str, keys: &str| {
        dir.file(
            &format!("units/{name}.service"),
            &format!(
                "[Service]\nType=oneshot\n{keys}\nExecStart=/usr/bin/python3 {} {name}\n\
                 StandardOutput=append:{}\n",
                client.display(),
                out.display()
            ),
        );
    };
    unit("denied", "IPAddressDeny=any");
    unit("allowed", "IPAddressDeny=any\nIPAddressAllow=localhost");
    unit("open", "IPAddressAllow=10.0.0.0/8");
    dir.unit(
        "default",
        "unit: default\ntype: virtual\nrequires: [denied.service]\n",
    );
    dir.unit(
        "second",
        "unit: second\ntype: virtual\ndepends-on: [allowed.service]\n",
    );
    dir.unit(
        "third",
        "unit: third\ntype: virtual\ndepends-on: [open.service]\n",
    );
    let init = dir.start("default");
    init.wait_state("denied.service", UnitState::Exited);
    // Nothing reached the listener.
    listener.set_nonblocking(true).expect("nonblocking");
    assert!(
        listener
            .accept()
            .is_err_and(|e| e.kind() == std::io::ErrorKind::WouldBlock),
        "a connection got through IPAddressDeny=any"
    );
    init.ctl(&["set-target", "second"]).expect(0);
    init.wait_state("allowed.service", UnitState::Exited);
    init.ctl(&["set-target", "third"]).expect(0);
    init.wait_state("open.service", UnitState::Exited);
    let text = std::fs::read_to_string(&out).expect("the clients' output");
    // The dropped SYN is sent again until the client gives up (or, on
    // some kernels, connect(2) fails with EPERM).
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        matches!(lines[0], "denied timeout" | "denied EPERM"),
        "{text}"
    );
    assert_eq!(lines[1..], ["allowed connected", "open connected"]);
}

/// `LoadCredential=`/`SetCredential=` through the init: the unit's process
/// finds its credentials in `$CREDENTIALS_DIRECTORY`, files of its user
/// that only it may read, and the directory is gone after the stop.
#[test]
fn credentials_reach_the_unit_and_go_at_its_stop() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TestDir::new();
    let name = format!("cred-{}", std::process::id());
    let key = dir.file("key.pem", "secret\n");
    // Where the unit, running as nobody, writes what it found.
    let out = dir.join("out");
    std::fs::create_dir(&out).expect("mkdir");
    for (p, mode) in [(dir.path(), 0o711), (out.as_path(), 0o777)] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }
    let report = out.join("report");
    let script = dir.script(
        "show.sh",
        &format!(
            "{{ echo \"dir=$CREDENTIALS_DIRECTORY\"; cd \"$CREDENTIALS_DIRECTORY\" && \
             stat -c '%n %a %U' . key tok && cat key tok && echo; }} > {r}.new\n\
             mv {r}.new {r}\nexec sleep 1000\n",
            r = report.display()
        ),
    );
    dir.unit(
        &name,
        &format!(
            "unit: {name}\nuser: nobody\n\
             load-credential: [\"key:{}\"]\nset-credential: \"tok:abc\"\n\
             exec-start: /bin/sh {}\n",
            key.display(),
            script.display()
        ),
    );
    other_target(&dir);
    let init = dir.start(&name);
    init.wait_state(&name, UnitState::Running);
    let creds = std::path::PathBuf::from(format!("/run/credentials/{name}"));
    let text = wait_for(WAIT, "the unit reported its credentials", || {
        std::fs::read_to_string(&report).ok()
    });
    assert_eq!(
        text,
        format!(
            "dir={}\n. 500 nobody\nkey 400 nobody\ntok 400 nobody\nsecret\nabc\n",
            creds.display()
        )
    );
    stop_by_switch(&init, &name);
    assert!(!creds.exists(), "{} left after the stop", creds.display());
}

/// `ImportCredential=` through the init, from a systemd unit file as
/// Debian 13 writes them: every credential of the init's own
/// `$CREDENTIALS_DIRECTORY` whose name matches a glob, renamed by
/// `GLOB:RENAME`; a `LoadCredential=` of the same ID wins; a
/// `SetCredential=` stands in only for what no import brought; what
/// matches nothing is no error.
#[test]
fn import_credential_takes_what_matches_from_the_store() {
    let dir = TestDir::new();
    let name = format!("import-{}.service", std::process::id());
    // The init's own credentials (what a container manager passes it).
    let store = dir.join("store");
    std::fs::create_dir(&store).expect("mkdir store");
    for (f, text) in [
        ("agetty.autologin", "root"),
        ("agetty.other", "from-store"),
        ("tty.serial.ttyS0.agetty.baud", "115200"),
        ("tty.serial.ttyS1.agetty.baud", "9600"),
        ("login.motd", "hello"),
        ("unrelated", "no"),
    ] {
        std::fs::write(store.join(f), text).expect("a credential");
    }
    let other = dir.file("other.txt", "from-load");
    let report = dir.join("report");
    dir.file(
        &format!("units/{name}"),
        &format!(
            "[Service]\nImportCredential=agetty.*\n\
             ImportCredential=tty.serial.ttyS0.agetty.*:agetty.\n\
             ImportCredential=nothing.matches.*\n\
             LoadCredential=agetty.other:{}\n\
             SetCredential=login.motd:fallback\nSetCredential=login.issue:fallback\n\
             ExecStart=/bin/sh -c 'cd \"$CREDENTIALS_DIRECTORY\" && \
             for f in *; do echo \"$f=$(cat $f)\"; done > {r}.new; mv {r}.new {r}; \
             exec sleep 1000'\n",
            other.display(),
            r = report.display()
        ),
    );
    other_target(&dir);
    let init = dir
        .init()
        .target(&name)
        .env("CREDENTIALS_DIRECTORY", &store.display().to_string())
        .start();
    init.wait_state(&name, UnitState::Running);
    let text = wait_for(WAIT, "the unit listed its credentials", || {
        std::fs::read_to_string(&report).ok()
    });
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        [
            "agetty.autologin=root",
            "agetty.baud=115200",
            "agetty.other=from-load",
            "login.issue=fallback",
            "login.motd=fallback",
        ],
        "{text}"
    );
    stop_by_switch(&init, &name);
}

/// `RemoveIPC=yes` through the init: what the unit's user made in System
/// V IPC and `/dev/shm` is gone after its stop; root's stays.
#[test]
fn remove_ipc_cleans_the_users_objects_at_the_stop() {
    use std::os::unix::fs::PermissionsExt;
    // A user no account has, for this test's objects alone.
    let uid = 61_235;
    let dir = TestDir::new();
    let name = format!("ipc-{}", std::process::id());
    let out = dir.join("out");
    std::fs::create_dir(&out).expect("mkdir");
    for (p, mode) in [(dir.path(), 0o711), (out.as_path(), 0o777)] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }
    let shm_file = format!("/dev/shm/flotilla-{name}");
    let report = out.join("ids");
    let script = dir.script(
        "ipc.sh",
        &format!(
            "ipcmk -M 4096 > {r}.new && ipcmk -Q >> {r}.new && echo x > {shm_file} && \
             mv {r}.new {r}\nexec sleep 1000\n",
            r = report.display()
        ),
    );
    dir.unit(
        &name,
        &format!(
            "unit: {name}\nuser: \"{uid}\"\ngroup: \"{uid}\"\nremove-ipc: yes\n\
             exec-start: /bin/sh {}\n",
            script.display()
        ),
    );
    other_target(&dir);
    let roots = format!("/dev/shm/flotilla-{name}-root");
    std::fs::write(&roots, "x").expect("root's file");
    let init = dir.start(&name);
    init.wait_state(&name, UnitState::Running);
    let text = wait_for(WAIT, "the unit made its IPC objects", || {
        std::fs::read_to_string(&report).ok()
    });
    let ids: Vec<String> = text
        .lines()
        .filter_map(|l| l.split(':').nth(1).map(|v| v.trim().to_string()))
        .collect();
    assert_eq!(ids.len(), 2, "{text}");
    let listed = |kind: &str, id: &str| {
        std::fs::read_to_string(format!("/proc/sysvipc/{kind}"))
            .unwrap_or_default()
            .lines()
            .any(|l| l.split_whitespace().nth(1) == Some(id))
    };
    assert!(listed("shm", &ids[0]) && listed("msg", &ids[1]));
    assert!(std::path::Path::new(&shm_file).exists());
    stop_by_switch(&init, &name);
    assert!(!listed("shm", &ids[0]), "the segment is left");
    assert!(!listed("msg", &ids[1]), "the queue is left");
    assert!(!std::path::Path::new(&shm_file).exists());
    assert!(std::path::Path::new(&roots).exists());
    std::fs::remove_file(&roots).expect("rm");
}

/// `ExitType=cgroup` (systemd's test 56): a service whose main process
/// exited with success stays `running` while a process it left runs in its
/// cgroup, and ends cleanly (not failed, whatever killed that process) once
/// the cgroup is empty; a stop meanwhile reaches what is left. With the
/// default, `ExitType=main`, the same service ends with its main process.
#[test]
fn exit_type_cgroup_lasts_until_its_cgroup_is_empty() {
    assert!(cgroup2(), "no cgroup2 on this machine");
    let dir = TestDir::new();
    let script = dir.script(
        "leave.sh",
        &format!(
            "sleep 1000 </dev/null >/dev/null 2>&1 &\necho $! > {}\n",
            dir.join("left.pid").display()
        ),
    );
    let unit = |exit_type: &str| {
        format!(
            "[Service]\nExecStart=/bin/sh {}\nExitType={exit_type}\n",
            script.display()
        )
    };
    dir.file("units/left.service", &unit("cgroup"));
    other_target(&dir);
    let init = dir.start("left.service");
    let left = pid_in(&dir, "left.pid");
    wait_for(WAIT, "left.service waiting for its cgroup", || {
        init.unit("left.service")
            .status
            .contains("until its cgroup is empty")
            .then_some(())
    });
    assert_eq!(init.unit("left.service").state, UnitState::Running);
    // SIGKILL to what is left: the result is the main process's (0).
    assert!(procs::alive(left));
    // SAFETY: kill(2) of the process the unit left, by its PID.
    unsafe { libc::kill(left, libc::SIGKILL) };
    init.wait_state("left.service", UnitState::Exited);
    let u = init.unit("left.service");
    assert!(u.result.is_none() && u.ended, "{u:?}");

    // Stopped while it waits: what is left is stopped with it.
    std::fs::remove_file(dir.join("left.pid")).expect("rm");
    init.ctl(&["restart", "left.service"]).expect(0);
    let left = pid_in(&dir, "left.pid");
    wait_for(WAIT, "left.service waiting again", || {
        init.unit("left.service")
            .status
            .contains("until its cgroup is empty")
            .then_some(())
    });
    stop_by_switch(&init, "left.service");
    wait_gone(left, "the process left, stopped with its unit");
    drop(init);

    // ExitType=main: over when the main process exits.
    std::fs::remove_file(dir.join("left.pid")).expect("rm");
    dir.file("units/left.service", &unit("main"));
    let init = dir.start("left.service");
    let left = pid_in(&dir, "left.pid");
    init.wait_state("left.service", UnitState::Exited);
    wait_gone(left, "the process left, killed when the main process ended");
}

/// systemd's test 20 (its `test-mainpidsh3.service`): a forking service
/// whose pidfile is a link its (unprivileged) owner made up into root's
/// files, naming another unit's process, is refused that PID and waits
/// for a better file until its start times out (`Result=timeout`); a
/// pidfile an unprivileged user owns naming the unit's own process is
/// taken, as is root's file of root's process (docs/systemd-units.md,
/// "Pidfiles").
#[test]
fn a_pidfile_through_a_users_link_into_roots_files_is_refused() {
    assert!(cgroup2(), "no cgroup2 on this machine");
    let dir = TestDir::new();
    for d in ["root", "game", "own"] {
        std::fs::create_dir(dir.join(d)).expect("mkdir");
    }
    for d in ["game", "own"] {
        std::os::unix::fs::chown(dir.join(d), Some(65534), Some(65534)).expect("chown");
    }
    let daemon = "sleep 1000 </dev/null >/dev/null 2>&1 &";
    let unit = |name: &str, start: &str| {
        dir.file(
            &format!("units/{name}.service"),
            &format!(
                "[Service]\nType=forking\nPIDFile={pid}\nTimeoutStartSec=2s\n\
                 ExecStart=/bin/sh -c '{daemon} {start}'\n",
                pid = dir.join(name).join("pid").display(),
            ),
        );
    };
    let root = dir.join("root");
    unit("root", &format!("echo $! > {}/pid", root.display()));
    let game = dir.join("game");
    unit(
        "game",
        &format!(
            "ln -s ../root/pid {g}/pid && chown -h 65534:65534 {g}/pid",
            g = game.display()
        ),
    );
    let own = dir.join("own");
    unit(
        "own",
        &format!(
            "echo $! > {o}/mine && ln -s mine {o}/pid && chown -h 65534:65534 {o}/mine {o}/pid",
            o = own.display()
        ),
    );
    dir.unit(
        "default",
        "unit: default\ntype: virtual\n\
         depends-on: [root.service, own.service, game.service]\n",
    );
    let init = dir.start("default");
    let root_st = init.wait_state("root.service", UnitState::Running);
    assert_eq!(root_st.pid, Some(pid_in(&dir, "root/pid")), "{root_st:?}");
    let own_st = init.wait_state("own.service", UnitState::Running);
    assert_eq!(own_st.pid, Some(pid_in(&dir, "own/mine")), "{own_st:?}");
    let game_st = init.wait_state("game.service", UnitState::Failed);
    assert_eq!(
        game_st.result,
        Some(flotilla_units::state::FailureKind::Timeout),
        "{game_st:?}"
    );
    assert!(
        game_st.status.contains("unsafe path transition"),
        "{game_st:?}\n{}",
        init.output()
    );
    assert_ne!(game_st.pid, root_st.pid, "{game_st:?}");
}

/// systemd's test 20 as it is written: the game is played by a
/// `DynamicUser=yes` service from its own `RuntimeDirectory=`, which is
/// made in its place (`/run/NAME`, the dynamic user's, not below
/// `/run/private`: removed at every stop, it is not private, as under
/// systemd), so that its link `../ROOT/pid` reaches root's pidfile in
/// `/run`; the PID read through it is refused and the start times out.
#[test]
fn a_dynamic_users_link_from_its_runtime_directory_is_refused() {
    assert!(cgroup2(), "no cgroup2 on this machine");
    let dir = TestDir::new();
    let name = format!("flotilla-pidgame-{}", std::process::id());
    let (root, game) = (format!("{name}-root"), format!("{name}-game"));
    let daemon = "sleep 1000 </dev/null >/dev/null 2>&1 &";
    dir.file(
        "units/root.service",
        &format!(
            "[Service]\nType=forking\nRuntimeDirectory={root}\nPIDFile=/run/{root}/pid\n\
             ExecStart=/bin/sh -c '{daemon} echo $! > /run/{root}/pid'\n"
        ),
    );
    dir.file(
        "units/game.service",
        &format!(
            "[Unit]\nAfter=root.service\n[Service]\nType=forking\nDynamicUser=yes\n\
             RuntimeDirectory={game}\n\
             PIDFile=/run/{game}/pid\nTimeoutStartSec=2s\n\
             ExecStart=/bin/sh -c '{daemon} ln -s ../{root}/pid /run/{game}/pid && \
             test -f /run/{game}/pid'\n"
        ),
    );
    dir.unit(
        "default",
        "unit: default\ntype: virtual\ndepends-on: [root.service, game.service]\n",
    );
    let init = dir.start("default");
    init.wait_state("root.service", UnitState::Running);
    init.wait_unit("game.service", "waiting for its pidfile", |u| {
        u.status.contains("waiting for the pidfile")
    });
    let meta = std::fs::symlink_metadata(format!("/run/{game}"));
    let st = init.wait_state("game.service", UnitState::Failed);
    assert_eq!(
        st.result,
        Some(flotilla_units::state::FailureKind::Timeout),
        "{st:?}\n{}",
        init.output()
    );
    assert!(st.status.contains("unsafe path transition"), "{st:?}");
    let meta = meta.expect("the runtime directory, while it started");
    assert!(meta.is_dir(), "in its place, not a link: {meta:?}");
}
