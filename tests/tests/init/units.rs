//! System tests of the local init, part 1: every unit type, readiness,
//! timeouts, the helper commands and the process context, through the real
//! `init` and `initctl` binaries (harness: `tests/src/`).
//!
//! Each test writes a units directory into its own temp dir, starts the init
//! on it and awaits states through the control socket's `subscribe` stream.
//! Services are real: a python3 sd_notify daemon, Debian's `systemd-notify`,
//! redis and nginx daemonized with pidfiles. The few sleeps here are
//! deliberate: they let a timeout pass to prove it did *not* fire.

use flotilla_tests::init::TestDir;
use flotilla_tests::{procs, wait_for, WAIT};
use flotilla_units::state::{FailureKind, UnitState};
use std::path::Path;
use std::time::{Duration, Instant};

fn touch(dir: &TestDir, name: &str) {
    dir.file(name, "");
}

fn python3() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// A root unit `default` (virtual) that depends on `deps`.
fn default_on(dir: &TestDir, kind: &str, deps: &str) {
    dir.unit(
        "default",
        &format!("unit: default\ntype: virtual\n{kind}: [{deps}]\n"),
    );
}

/// The python3 daemon of the notify test: every sd_notify message of SPEC
/// §4 but WATCHDOG, each step released by a file the test creates.
const NOTIFY_PY: &str = r#"
import os, socket, sys, time
addr = os.environ["NOTIFY_SOCKET"]
d = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
def send(m):
    s.sendto(m.encode(), addr)
def wait_file(name):
    while not os.path.exists(os.path.join(d, name)):
        time.sleep(0.005)
send("EXTEND_TIMEOUT_USEC=20000000\nSTATUS=warming up")
wait_file("go-ready")
send("READY=1\nSTATUS=serving")
wait_file("go-reload")
send("RELOADING=1\nSTATUS=reloading config")
wait_file("go-reloaded")
send("READY=1\nSTATUS=serving again")
wait_file("go-mainpid")
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(w)
    os.read(r, 1)
    with open(os.path.join(d, "child.pid"), "w") as f:
        f.write(str(os.getpid()))
    wait_file("go-stop")
    send("STOPPING=1\nSTATUS=going away")
    wait_file("go-exit")
    sys.exit(0)
send("MAINPID=%d" % pid)
os.write(w, b"x")
sys.exit(0)
"#;

/// A python3 daemon speaking sd_notify without libsystemd: STATUS while
/// starting, EXTEND_TIMEOUT_USEC past a short start-timeout, READY=1,
/// RELOADING=1 and READY=1 again, MAINPID= handing the main process to a
/// child (the old one's exit is then not a failure), STOPPING=1 and a clean
/// exit.
#[test]
fn notified_python_daemon_speaks_every_message() {
    let dir = TestDir::new();
    let py = dir.file("notify.py", NOTIFY_PY);
    dir.unit(
        "svc",
        &format!(
            "unit: svc\ntype: foreground-notified\nexec-start: [{}, {}, {}]\n\
             start-timeout: 2s\nrestart: no\n",
            python3(),
            py.display(),
            dir.path().display()
        ),
    );
    default_on(&dir, "waits-for", "svc");
    let init = dir.start("default");

    let u = init.wait_unit("svc", "starting with STATUS=warming up", |u| {
        u.state == UnitState::Starting && u.status == "warming up"
    });
    let first_pid = u.pid.expect("main pid");
    // EXTEND_TIMEOUT_USEC: past the 2 s start-timeout (counted from the
    // spawn, before this point) it is still starting and reports nothing.
    // The timeout is well above python's start-up on a loaded machine,
    // which must send the extension before it passes.
    let mut sub = init.subscribe();
    let past_timeout = Instant::now() + Duration::from_millis(2500);
    while let Some(u) = sub.next(past_timeout) {
        assert_ne!(u.unit, "svc", "{u:?}");
    }
    assert_eq!(init.unit("svc").state, UnitState::Starting);

    touch(&dir, "go-ready");
    let u = init.wait_unit("svc", "running, serving", |u| {
        u.state == UnitState::Running && u.status == "serving"
    });
    assert_eq!(u.pid, Some(first_pid));

    touch(&dir, "go-reload");
    init.wait_unit("svc", "reloading", |u| {
        u.state == UnitState::Reloading && u.status == "reloading config"
    });
    touch(&dir, "go-reloaded");
    init.wait_unit("svc", "running again", |u| {
        u.state == UnitState::Running && u.status == "serving again"
    });

    touch(&dir, "go-mainpid");
    let child: i32 = wait_for(WAIT, "child.pid", || {
        dir.read("child.pid").trim().parse().ok()
    });
    let u = init.wait_unit("svc", "MAINPID is the child", |u| u.pid == Some(child));
    assert_eq!(u.state, UnitState::Running, "{u:?}");
    wait_for(WAIT, "the first main process to end", || {
        (!procs::alive(first_pid)).then_some(())
    });
    assert_eq!(init.unit("svc").state, UnitState::Running);

    touch(&dir, "go-stop");
    init.wait_state("svc", UnitState::Stopping);
    let mut sub = init.subscribe();
    touch(&dir, "go-exit");
    // It stopped by itself, cleanly: `exited`, as after a clean exit, and
    // it is not started again.
    let seen = sub.until("svc exited", |u| u.unit == "svc" && u.state.is_active());
    let last = seen.last().unwrap();
    assert_eq!(last.state, UnitState::Exited, "{seen:?}");
    assert!(
        seen.iter().all(|u| u.state != UnitState::Starting),
        "{seen:?}"
    );
    assert_eq!(last.restarts, 0);
    assert!(!procs::alive(child));
    // And it stays so (other units may still report, e.g. `degraded`).
    let quiet = Instant::now() + Duration::from_millis(300);
    while let Some(u) = sub.next(quiet) {
        assert_ne!(u.unit, "svc", "{u:?}");
    }
}

/// Debian's `systemd-notify --ready` from a shell script: the unit is
/// `starting` until it runs, then `running` with its STATUS=.
#[test]
fn notified_by_systemd_notify() {
    let dir = TestDir::new();
    let sh = dir.script(
        "svc.sh",
        &format!(
            "while [ ! -e {d}/go ]; do sleep 0.01; done\n\
             systemd-notify --ready --status='up via systemd-notify'\n\
             exec sleep 100",
            d = dir.path().display()
        ),
    );
    dir.unit(
        "svc",
        &format!(
            "unit: svc\ntype: foreground-notified\nexec-start: {}\n",
            sh.display()
        ),
    );
    default_on(&dir, "depends-on", "svc");
    let init = dir.start("default");
    init.wait_state("svc", UnitState::Starting);
    assert_eq!(init.unit("default").state, UnitState::Waiting);
    touch(&dir, "go");
    let u = init.wait_unit("svc", "ready", |u| u.state == UnitState::Running);
    assert_eq!(u.status, "up via systemd-notify");
    init.wait_state("default", UnitState::Running);
}

/// start-timeout: a notified unit that never says READY=1 is stopped and
/// `failed`, and its process is gone.
#[test]
fn notified_without_ready_fails_at_start_timeout() {
    let dir = TestDir::new();
    dir.unit(
        "mute",
        "unit: mute\ntype: foreground-notified\nexec-start: sleep 100\n\
         start-timeout: 300ms\nrestart: no\n",
    );
    default_on(&dir, "waits-for", "mute");
    // The timeout runs from the start's decision, which comes after this
    // instant: a sound lower bound however late the polls below see states.
    let t0 = Instant::now();
    let init = dir.start("default");
    // Starting from the start's decision; with a PID once it has exec'd.
    let pid = init
        .wait_unit("mute", "starting with a PID", |u| {
            u.state == UnitState::Starting && u.pid.is_some()
        })
        .pid
        .unwrap();
    let u = init.wait_state("mute", UnitState::Failed);
    assert!(
        t0.elapsed() >= Duration::from_millis(300),
        "{:?}",
        t0.elapsed()
    );
    assert!(u.status.contains("start timed out"), "{u:?}");
    assert!(!procs::alive(pid));
    // waits-for: the failed dependency still lets `default` start, degraded.
    let d = init.wait_state("default", UnitState::Running);
    assert!(d.degraded);
}

/// foreground-supervised without readiness options is running at spawn.
#[test]
fn supervised_plain_is_running_at_spawn() {
    let dir = TestDir::new();
    dir.unit("svc", "unit: svc\nexec-start: sleep 100\n");
    default_on(&dir, "depends-on", "svc");
    let init = dir.start("default");
    let u = init.wait_state("svc", UnitState::Running);
    let pid = u.pid.unwrap();
    assert!(procs::alive(pid));
    // (The status may come before the new process has finished its exec.)
    wait_for(WAIT, "sleep 100 running", || {
        (procs::cmdline(pid) == "sleep 100").then_some(())
    });
    assert_eq!(u.kind.as_str(), "foreground-supervised");
    init.wait_state("default", UnitState::Running);
}

/// ready-wait: `starting` for the wait, then `running`; a process that
/// exits before the wait is over fails.
#[test]
fn supervised_ready_wait() {
    let dir = TestDir::new();
    dir.unit(
        "slow",
        "unit: slow\nexec-start: sleep 100\nready-wait: 400ms\n",
    );
    dir.unit(
        "quitter",
        "unit: quitter\nexec-start: [sh, -c, 'exit 0']\nready-wait: 2s\nrestart: no\n",
    );
    default_on(&dir, "waits-for", "slow, quitter");
    // Taken before the init exists: the wait starts after it.
    let t0 = Instant::now();
    let init = dir.start("default");
    init.wait_state("slow", UnitState::Starting);
    init.wait_state("slow", UnitState::Running);
    assert!(
        t0.elapsed() >= Duration::from_millis(400),
        "{:?}",
        t0.elapsed()
    );
    let q = init.wait_state("quitter", UnitState::Failed);
    assert!(q.status.contains("before it was ready"), "{q:?}");
}

/// ready-grep: `starting` until a line of stdout or stderr matches.
#[test]
fn supervised_ready_grep_on_stdout_and_stderr() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    for (name, redirect) in [("out", ""), ("err", " >&2")] {
        let sh = dir.script(
            &format!("{name}.sh"),
            &format!(
                "echo booting{redirect}\n\
                 while [ ! -e {d}/go ]; do sleep 0.01; done\n\
                 echo 'listening on 127.0.0.1:80'{redirect}\nexec sleep 100"
            ),
        );
        dir.unit(
            name,
            &format!(
                "unit: {name}\nexec-start: {}\nready-grep: '^listening on'\n",
                sh.display()
            ),
        );
    }
    default_on(&dir, "depends-on", "out, err");
    let init = dir.start("default");
    init.wait_all(&["out", "err"], UnitState::Starting);
    // Output that does not match keeps them starting.
    wait_for(WAIT, "booting in the log", || {
        init.ctl(&["logs", "err"])
            .stdout
            .contains("booting")
            .then_some(())
    });
    assert_eq!(init.unit("out").state, UnitState::Starting);
    touch(&dir, "go");
    init.wait_all(&["out", "err", "default"], UnitState::Running);
}

/// background-pidfile with a real forking daemon: redis-server daemonizes,
/// writes its pidfile, and the init supervises that PID; it answers on its
/// socket; stopping the unit stops the daemon.
#[test]
fn pidfile_redis() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    dir.unit(
        "redis",
        &format!(
            "unit: redis\ntype: background-pidfile\npidfile: {d}/redis.pid\n\
             exec-start: [redis-server, --daemonize, 'yes', --pidfile, {d}/redis.pid, \
             --port, '0', --unixsocket, {d}/redis.sock, --dir, {d}, --save, '', \
             --appendonly, 'no', --logfile, {d}/redis.log]\nstop-timeout: 5s\n"
        ),
    );
    dir.unit("other", "unit: other\ntype: virtual\n");
    default_on(&dir, "depends-on", "redis");
    let init = dir.start("default");
    let u = init.wait_state("redis", UnitState::Running);
    assert_eq!(u.restarts, 0, "{u:?}");
    let pid = u.pid.unwrap();
    assert_eq!(
        procs::pidfile_alive(&dir.join("redis.pid")),
        Some(pid),
        "the supervised PID is the pidfile's"
    );
    let ping = flotilla_tests::init::run(
        {
            let mut c = std::process::Command::new("redis-cli");
            c.args(["-s", &format!("{d}/redis.sock"), "ping"]);
            c
        },
        WAIT,
    );
    assert_eq!(ping.stdout.trim(), "PONG", "{ping:?}");
    init.ctl(&["set-target", "other", "--wait"]).expect(0);
    init.wait_state("redis", UnitState::Disabled);
    wait_for(WAIT, "redis to be gone", || {
        (!procs::alive(pid)).then_some(())
    });
}

fn nginx_conf(d: &str, port: u16, body: &str) -> String {
    format!(
            "daemon on;\npid {d}/nginx.pid;\nerror_log {d}/logs/error.log;\nworker_processes 1;\n\
             events {{ worker_connections 16; }}\n\
             http {{\n access_log off;\n client_body_temp_path {d}/tmp/body;\n\
             proxy_temp_path {d}/tmp/proxy;\n fastcgi_temp_path {d}/tmp/fastcgi;\n\
             uwsgi_temp_path {d}/tmp/uwsgi;\n scgi_temp_path {d}/tmp/scgi;\n\
             server {{ listen 127.0.0.1:{port}; location / {{ return 200 \"{body}\\n\"; }} }}\n}}\n"
    )
}

/// background-pidfile with nginx (`daemon on; pid ...;`) on a loopback
/// port: it serves HTTP while running; `initctl reload nginx` runs its
/// exec-reload with `$MAINPID` (SIGHUP: new configuration, same master);
/// its binary upgrade moves it to a new master, which the init follows
/// through the pidfile; a SIGKILL of the daemon is a failure the init notices (restart: no keeps
/// it failed), and the workers it left are killed with it.
#[test]
fn pidfile_nginx_with_reload() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    let port = flotilla_tests::etcd::free_port();
    for sub in ["tmp", "logs"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    dir.file("nginx.conf", &nginx_conf(&d, port, "hello from nginx"));
    dir.unit(
        "nginx",
        &format!(
            "unit: nginx\ntype: background-pidfile\npidfile: {d}/nginx.pid\n\
             exec-start: [/usr/sbin/nginx, -p, {d}, -e, {d}/logs/error.log, -c, {d}/nginx.conf]\n\
             exec-reload: /bin/kill -HUP $MAINPID\nrestart: no\n"
        ),
    );
    default_on(&dir, "waits-for", "nginx");
    let init = dir.start("default");
    let u = init.wait_state("nginx", UnitState::Running);
    let pid = u.pid.unwrap();
    assert_eq!(procs::pidfile_alive(&dir.join("nginx.pid")), Some(pid));
    let body = http_get(port);
    assert!(body.contains("hello from nginx"), "{body}");

    dir.file("nginx.conf", &nginx_conf(&d, port, "reloaded nginx"));
    let mut sub = init.subscribe();
    init.ctl(&["reload", "nginx"]).expect(0);
    let seen = sub.until("nginx reloaded", |u| {
        u.unit == "nginx" && u.state == UnitState::Running
    });
    assert!(
        seen.iter().any(|u| u.state == UnitState::Reloading),
        "{seen:?}"
    );
    assert_eq!(seen.last().unwrap().pid, Some(pid));
    wait_for(WAIT, "the new configuration to serve", || {
        http_get(port).contains("reloaded nginx").then_some(())
    });

    // nginx's binary upgrade (what Debian's `invoke-rc.d nginx upgrade`
    // does after a package upgrade): SIGUSR2 starts a new master, which
    // writes the pidfile (the old one's becomes nginx.pid.oldbin); SIGQUIT
    // ends the old master. As systemd does, the init reads the pidfile when
    // the main process exits and follows the new master: no restart.
    procs::signal(pid, libc::SIGUSR2);
    let new = wait_for(WAIT, "the new master's pidfile", || {
        procs::pidfile_alive(&dir.join("nginx.pid")).filter(|&p| p != pid)
    });
    procs::signal(pid, libc::SIGQUIT);
    let u = init.wait_unit("nginx", "the new master as the main process", |u| {
        u.pid == Some(new)
    });
    assert_eq!((u.state, u.restarts), (UnitState::Running, 0), "{u:?}");
    assert!(http_get(port).contains("reloaded nginx"));

    procs::signal(new, libc::SIGKILL);
    let u = init.wait_state("nginx", UnitState::Failed);
    assert!(u.status.contains("SIGKILL"), "{u:?}");
    // Its workers went with it: the group got the kill signal.
    wait_for(WAIT, "the nginx workers to go", || {
        std::net::TcpStream::connect(("127.0.0.1", port))
            .is_err()
            .then_some(())
    });
}

fn http_get(port: u16) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect nginx");
    s.set_read_timeout(Some(WAIT)).unwrap();
    s.write_all(b"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

/// background-scripted: active (no PID) once the start script exits 0;
/// stopped by its stop script, which finds what the start script left.
#[test]
fn scripted_start_and_stop_scripts() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    let start = dir.script(
        "start.sh",
        &format!("sleep 100 &\necho $! > {d}/bg.pid\necho started >> {d}/events"),
    );
    let stop = dir.script(
        "stop.sh",
        &format!("kill $(cat {d}/bg.pid)\necho stopped >> {d}/events"),
    );
    dir.unit(
        "bg",
        &format!(
            "unit: bg\ntype: background-scripted\nexec-start: {}\nexec-stop: {}\n",
            start.display(),
            stop.display()
        ),
    );
    dir.unit("other", "unit: other\ntype: virtual\n");
    default_on(&dir, "depends-on", "bg");
    let init = dir.start("default");
    let u = init.wait_state("bg", UnitState::Running);
    assert_eq!(u.pid, None);
    let bg = procs::pidfile_alive(&dir.join("bg.pid")).expect("background process");
    init.ctl(&["set-target", "other", "--wait"]).expect(0);
    init.wait_state("bg", UnitState::Disabled);
    assert_eq!(dir.lines("events"), ["started", "stopped"]);
    wait_for(WAIT, "the background process to go", || {
        (!procs::alive(bg)).then_some(())
    });
}

/// oneshot: `starting` while it runs, `exited` after status 0 (and it
/// stays exited: not run again), `failed` after a non-zero status.
#[test]
fn oneshot_exit_codes() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    dir.unit(
        "ok",
        &format!(
            "unit: ok\ntype: oneshot\nexec-start: [sh, -c, 'while [ ! -e {d}/go ]; do sleep 0.01; done; echo ran >> {d}/runs']\n"
        ),
    );
    dir.unit(
        "bad",
        "unit: bad\ntype: oneshot\nexec-start: [sh, -c, 'exit 3']\n",
    );
    default_on(&dir, "waits-for", "ok, bad");
    let init = dir.start("default");
    init.wait_state("ok", UnitState::Starting);
    let b = init.wait_state("bad", UnitState::Failed);
    assert!(b.status.contains("exit status 3"), "{b:?}");
    assert_eq!(b.result, Some(FailureKind::ExitCode), "{b:?}");
    assert_eq!(b.exit_status, Some(3), "{b:?}");
    assert_eq!(b.restarts, 0);
    touch(&dir, "go");
    let u = init.wait_state("ok", UnitState::Exited);
    assert_eq!(u.pid, None);
    assert!(!u.degraded);
    let root = init.wait_state("default", UnitState::Running);
    assert!(root.degraded, "a failed waits-for dependency degrades");
    assert_eq!(dir.lines("runs"), ["ran"]);
}

/// virtual: `running` with no process once its dependencies allow.
#[test]
fn virtual_units_have_no_process() {
    let dir = TestDir::new();
    dir.unit("net", "unit: net\ntype: virtual\n");
    default_on(&dir, "depends-on", "net");
    let init = dir.start("default");
    let s = init.wait_all(&["net", "default"], UnitState::Running);
    for u in &s.units {
        assert_eq!(u.pid, None);
        assert_eq!(u.kind.as_str(), "virtual");
    }
    assert_eq!(s.target_state, UnitState::Running);
    assert!(!s.degraded);
}

/// stop-timeout: a process that ignores SIGTERM is SIGKILLed after the
/// timeout, and the unit ends `disabled`.
#[test]
fn stop_timeout_escalates_to_sigkill() {
    let dir = TestDir::new();
    dir.unit(
        "stubborn",
        "unit: stubborn\nexec-start: [sh, -c, \"trap '' TERM; echo ready; while :; do sleep 0.05; done\"]\n\
         ready-grep: ready\nstop-timeout: 400ms\n",
    );
    dir.unit("other", "unit: other\ntype: virtual\n");
    default_on(&dir, "depends-on", "stubborn");
    let init = dir.start("default");
    let pid = init.wait_state("stubborn", UnitState::Running).pid.unwrap();
    let mut sub = init.subscribe();
    let t0 = Instant::now();
    init.ctl(&["set-target", "other"]).expect(0);
    let seen = sub.until("stubborn disabled", |u| {
        u.unit == "stubborn" && u.state == UnitState::Disabled
    });
    assert!(t0.elapsed() >= Duration::from_millis(350));
    assert!(
        seen.iter()
            .any(|u| u.unit == "stubborn" && u.status.contains("SIGKILL")),
        "{seen:?}"
    );
    assert!(!procs::alive(pid));
}

/// kill-signal: a stop sends the configured signal to the process group.
#[test]
fn kill_signal_is_sent_on_stop() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    dir.unit(
        "usr1",
        &format!(
            "unit: usr1\nexec-start: [sh, -c, \"trap 'echo got-usr1 > {d}/sig; exit 0' USR1; echo ready; \
             while :; do sleep 0.05; done\"]\nready-grep: ready\nkill-signal: SIGUSR1\nstop-timeout: 5s\n"
        ),
    );
    dir.unit("other", "unit: other\ntype: virtual\n");
    default_on(&dir, "depends-on", "usr1");
    let init = dir.start("default");
    init.wait_state("usr1", UnitState::Running);
    init.ctl(&["set-target", "other", "--wait"]).expect(0);
    init.wait_state("usr1", UnitState::Disabled);
    assert_eq!(dir.read("sig").trim(), "got-usr1");
}

/// exec-start-pre, exec-stop and exec-stop-post run in order; a `-` prefix
/// ignores a failure; `$MAINPID` in exec-stop is the main PID.
#[test]
fn helper_commands_run_in_order() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    dir.unit(
        "svc",
        &format!(
            "unit: svc\n\
             exec-start-pre:\n  - [sh, -c, 'echo pre1 >> {d}/order']\n  - -/bin/false\n  - [sh, -c, 'echo pre3 >> {d}/order']\n\
             exec-start: [sh, -c, 'echo main >> {d}/order; exec sleep 100']\n\
             exec-stop: [sh, -c, 'echo stop $MAINPID >> {d}/order; kill $MAINPID']\n\
             exec-stop-post:\n  - -/bin/false\n  - [sh, -c, 'echo post >> {d}/order']\n"
        ),
    );
    dir.unit("other", "unit: other\ntype: virtual\n");
    default_on(&dir, "depends-on", "svc");
    let init = dir.start("default");
    let pid = init.wait_state("svc", UnitState::Running).pid.unwrap();
    wait_for(WAIT, "main in the order file", || {
        (dir.lines("order").len() == 3).then_some(())
    });
    init.ctl(&["set-target", "other", "--wait"]).expect(0);
    init.wait_state("svc", UnitState::Disabled);
    assert_eq!(
        dir.lines("order"),
        [
            "pre1".to_string(),
            "pre3".to_string(),
            "main".to_string(),
            format!("stop {pid}"),
            "post".to_string()
        ]
    );
    assert!(!procs::alive(pid));
}

/// A failing exec-start-pre (no `-`) fails the start: the main command
/// never runs, exec-stop-post still does.
#[test]
fn failing_start_pre_fails_the_unit() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    dir.unit(
        "svc",
        &format!(
            "unit: svc\nexec-start-pre: [[sh, -c, 'exit 7']]\n\
             exec-start: [sh, -c, 'echo main >> {d}/order; exec sleep 100']\n\
             exec-stop-post: [[sh, -c, 'echo post >> {d}/order']]\nrestart: no\n"
        ),
    );
    default_on(&dir, "waits-for", "svc");
    let init = dir.start("default");
    let u = init.wait_state("svc", UnitState::Failed);
    assert!(u.status.contains("exec-start-pre: exit status 7"), "{u:?}");
    assert_eq!(dir.lines("order"), ["post"]);
}

/// user and group: the unit runs as `nobody`/`nogroup` (its own `id`
/// output in its log, and the kernel's view of the process).
#[test]
fn runs_as_user_and_group() {
    let dir = TestDir::new();
    dir.unit(
        "who",
        "unit: who\nexec-start: [sh, -c, 'echo uid=$(id -u) gid=$(id -g) groups=$(id -G); exec sleep 100']\n\
         user: nobody\ngroup: nogroup\n",
    );
    default_on(&dir, "depends-on", "who");
    let init = dir.start("default");
    let pid = init.wait_state("who", UnitState::Running).pid.unwrap();
    let line = wait_for(WAIT, "id output", || {
        let out = init.ctl(&["logs", "who"]).stdout;
        out.lines()
            .find(|l| l.starts_with("uid="))
            .map(str::to_string)
    });
    assert_eq!(line, "uid=65534 gid=65534 groups=65534");
    assert_eq!(procs::uid(pid), Some(65534));
}

/// environment, environment-file (a missing `-` file is fine),
/// working-directory, and the init's own variables for the unit.
#[test]
fn environment_and_working_directory() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    std::fs::create_dir(dir.join("work")).unwrap();
    dir.file(
        "env",
        "FROM_FILE=file value\n# a comment\nSHARED=from file\n",
    );
    dir.unit(
        "env",
        &format!(
            "unit: env\ntype: oneshot\n\
             exec-start: [sh, -c, 'echo \"A=$A FROM_FILE=$FROM_FILE SHARED=$SHARED UNIT=$INIT_UNIT PWD=$(pwd)\"']\n\
             environment:\n  A: '0022'\n  SHARED: from unit\n\
             environment-file: [{d}/env, -{d}/missing]\nworking-directory: {d}/work\n"
        ),
    );
    default_on(&dir, "depends-on", "env");
    let init = dir.start("default");
    init.wait_state("env", UnitState::Exited);
    let out = init.ctl(&["logs", "env"]).expect(0).stdout.clone();
    assert!(
        out.contains(&format!(
            "A=0022 FROM_FILE=file value SHARED=from unit UNIT=env PWD={d}/work"
        )),
        "{out}"
    );
}

/// A missing required environment file fails the start with a message
/// naming it.
#[test]
fn missing_environment_file_fails_the_start() {
    let dir = TestDir::new();
    dir.unit(
        "env",
        "unit: env\nexec-start: sleep 100\nenvironment-file: /nonexistent/flotilla.env\nrestart: no\n",
    );
    default_on(&dir, "waits-for", "env");
    let init = dir.start("default");
    let u = init.wait_state("env", UnitState::Failed);
    assert!(u.status.contains("/nonexistent/flotilla.env"), "{u:?}");
}

/// background-scripted without exec-stop: a stop sends `kill-signal` to
/// the process group its start script left behind (docs/units.md).
#[test]
fn scripted_without_stop_script_signals_the_group() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    let start = dir.script("start.sh", &format!("sleep 100 &\necho $! > {d}/bg.pid"));
    dir.unit(
        "bg",
        &format!(
            "unit: bg\ntype: background-scripted\nexec-start: {}\n",
            start.display()
        ),
    );
    dir.unit("other", "unit: other\ntype: virtual\n");
    default_on(&dir, "depends-on", "bg");
    let init = dir.start("default");
    init.wait_state("bg", UnitState::Running);
    let bg = procs::pidfile_alive(&dir.join("bg.pid")).expect("background process");
    init.ctl(&["set-target", "other", "--wait"]).expect(0);
    init.wait_state("bg", UnitState::Disabled);
    wait_for(WAIT, "the background process to go", || {
        (!procs::alive(bg)).then_some(())
    });
}

/// start-timeout also bounds exec-start-pre: a hanging pre command is
/// killed and the unit fails; the main command never runs.
#[test]
fn hanging_start_pre_times_out() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    dir.unit(
        "svc",
        &format!(
            "unit: svc\nexec-start-pre: [[sh, -c, 'echo $$ > {d}/pre.pid; exec sleep 100']]\n\
             exec-start: [sh, -c, 'echo main >> {d}/order; exec sleep 100']\n\
             start-timeout: 300ms\nrestart: no\n"
        ),
    );
    default_on(&dir, "waits-for", "svc");
    let init = dir.start("default");
    let pre: i32 = wait_for(WAIT, "pre.pid", || dir.read("pre.pid").trim().parse().ok());
    let u = init.wait_state("svc", UnitState::Failed);
    assert!(u.status.contains("start timed out"), "{u:?}");
    wait_for(WAIT, "the pre command to be killed", || {
        (!procs::alive(pre)).then_some(())
    });
    assert_eq!(dir.read("order"), "");
}

/// stop-timeout also bounds exec-stop: a hanging stop command and the main
/// process both get SIGKILL, and the unit ends disabled.
#[test]
fn hanging_exec_stop_times_out() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    dir.unit(
        "svc",
        &format!(
            "unit: svc\nexec-start: [sh, -c, \"trap '' TERM; echo ready; while :; do sleep 0.05; done\"]\n\
             ready-grep: ready\n\
             exec-stop: [sh, -c, 'echo $$ > {d}/stop.pid; exec sleep 100']\nstop-timeout: 300ms\n"
        ),
    );
    dir.unit("other", "unit: other\ntype: virtual\n");
    default_on(&dir, "depends-on", "svc");
    let init = dir.start("default");
    let main = init.wait_state("svc", UnitState::Running).pid.unwrap();
    let t0 = Instant::now();
    init.ctl(&["set-target", "other"]).expect(0);
    let stop: i32 = wait_for(WAIT, "stop.pid", || {
        dir.read("stop.pid").trim().parse().ok()
    });
    init.wait_state("svc", UnitState::Disabled);
    assert!(t0.elapsed() >= Duration::from_millis(250));
    assert!(!procs::alive(main));
    assert!(!procs::alive(stop));
}

/// A `user:` unit of type `foreground-notified` whose user may not reach
/// its notify socket (the directory above it is private): the init says so
/// at the spawn, in the unit's log, naming the unit, the socket and the
/// directory, rather than leaving it `starting` with no word why. Once the
/// directory lets the user through, the same unit becomes ready.
#[test]
fn notify_socket_out_of_reach_is_reported_at_spawn() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TestDir::new();
    dir.unit(
        "svc",
        // The main process itself sends READY=1 (it stays `starting` when
        // the send is refused), so that no helper process that is gone by
        // the time the init reads the datagram is in the way.
        "unit: svc\ntype: foreground-notified\nuser: nobody\nrestart: no\n\
         exec-start: [/usr/bin/python3, -c, \"import os, socket, time\\n\
         s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\\n\
         try: s.sendto(b'READY=1', os.environ['NOTIFY_SOCKET'])\\n\
         except OSError: pass\\n\
         time.sleep(100)\"]\n",
    );
    default_on(&dir, "depends-on", "svc");
    let private =
        |mode| std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(mode)).unwrap();
    private(0o700);
    let init = dir.start("default");
    let d = dir.path().display();
    let want = format!(
        "svc: notify socket {d}/notify/1 is out of reach of user nobody: it may not search {d} \
         (owner 0:0, mode 0700), so READY=1 cannot arrive and the start will time out"
    );
    wait_for(WAIT, "the note in the unit's log", || {
        init.ctl(&["logs", "svc"])
            .stdout
            .contains(&want)
            .then_some(())
    });
    assert_eq!(
        init.unit("svc").state,
        UnitState::Starting,
        "{}",
        init.ctl(&["logs", "svc"]).stdout
    );

    private(0o755);
    init.ctl(&["restart", "svc"]);
    init.wait_state("svc", UnitState::Running);
    let notes = init.ctl(&["logs", "svc"]).stdout;
    assert_eq!(notes.matches("out of reach").count(), 1, "{notes}");
}

/// A `foreground-notified` unit with `private-tmp` under an init whose
/// control directory (and so its notify socket) is under `/tmp`: the
/// unit's private `/tmp` hides the socket, and the init says so at the
/// spawn, on the console and in the unit's log, as for a socket its user
/// may not reach, instead of leaving it `starting` until its time-out with
/// no word why. The same unit without `private-tmp` becomes ready, with no
/// such note.
#[test]
fn notify_socket_hidden_by_private_tmp_is_reported_at_spawn() {
    let dir = TestDir::new();
    assert!(dir.path().starts_with("/tmp"), "{}", dir.path().display());
    let unit = |name: &str, private: bool| {
        format!(
            "unit: {name}\ntype: foreground-notified\nprivate-tmp: {private}\nrestart: no\n\
             exec-start: [/usr/bin/python3, -c, \"import os, socket, time\\n\
             s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\\n\
             try: s.sendto(b'READY=1', os.environ['NOTIFY_SOCKET'])\\n\
             except OSError as e: print('sd_notify:', e.strerror, flush=True)\\n\
             time.sleep(100)\"]\n"
        )
    };
    dir.unit("hidden", &unit("hidden", true));
    dir.unit("open", &unit("open", false));
    dir.unit(
        "default",
        "unit: default\ntype: virtual\ndepends-on: [hidden, open]\n",
    );
    let init = dir.start("default");
    init.wait_state("open", UnitState::Running);
    let logs = |u: &str| init.ctl(&["logs", u]).stdout;
    let socket = dir.path().join("notify");
    let note = wait_for(WAIT, "the note in hidden's log", || {
        let text = logs("hidden");
        let note = text.lines().find(|l| l.contains("out of reach"))?;
        Some(note.to_string())
    });
    let path = note
        .split("notify socket ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .expect("the socket's path");
    assert!(path.starts_with(&*socket.to_string_lossy()), "{note}");
    assert!(
        note.ends_with(&format!(
            "hidden: notify socket {path} is out of reach of the unit: its PrivateTmp= puts \
             something else at /tmp in its mount namespace, so READY=1 cannot arrive and the \
             start will time out"
        )),
        "{note}"
    );
    assert!(init.output().contains("init: hidden: notify socket "));
    // The unit's own word: the socket is not there for it.
    wait_for(WAIT, "hidden's failed send", || {
        logs("hidden")
            .contains("sd_notify: No such file or directory")
            .then_some(())
    });
    assert_eq!(
        init.unit("hidden").state,
        UnitState::Starting,
        "{}",
        logs("hidden")
    );
    let open = logs("open");
    assert!(
        !open.contains("out of reach") && !open.contains("sd_notify"),
        "{open}"
    );
}

/// `ExecStartPost=` (YAML `exec-start-post`): runs once the main process
/// is up, the unit `starting` until it is done, and sees the main PID;
/// then the unit is running. One that fails fails the start and stops the
/// main process.
#[test]
fn exec_start_post_runs_after_the_main_process_is_up() {
    let dir = TestDir::new();
    let d = dir.path().display();
    dir.file(
        "units/web.service",
        &format!(
            "[Service]\nExecStart=/bin/sleep 100\n\
             ExecStartPost=/bin/sh -c 'echo $MAINPID > {d}/post; until [ -e {d}/go ]; do sleep 0.02; done'\n"
        ),
    );
    dir.file(
        "units/bad.service",
        "[Service]\nExecStart=/bin/sleep 100\nExecStartPost=/bin/false\n",
    );
    dir.file(
        "units/default.target",
        "[Unit]\nWants=web.service bad.service\n",
    );
    let init = dir.start("default.target");
    let web = init.wait_unit("web.service", "running its post command", |u| {
        u.state == UnitState::Starting && u.status == "running exec-start-post"
    });
    let post = wait_for(WAIT, "the post command's file", || {
        let text = std::fs::read_to_string(dir.join("post")).ok()?;
        text.ends_with('\n').then_some(text)
    });
    assert_eq!(post.trim(), web.pid.expect("main pid").to_string());
    touch(&dir, "go");
    init.wait_state("web.service", UnitState::Running);
    let bad = init.wait_state("bad.service", UnitState::Failed);
    assert!(bad.status.contains("exec-start-post"), "{bad:?}");
    assert_eq!(bad.pid, None);
}
