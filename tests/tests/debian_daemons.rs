//! Debian's own unit files, unchanged, run by the init in supervisor
//! mode, each daemon checked by what it serves and its sandbox checked
//! from `/proc/PID`. The init runs in a network namespace of its own
//! (`unshare --net`), so that a daemon's well-known port never meets
//! another test's; the test talks to it through `nsenter`. cron's runs in
//! a mount namespace too, with a private `/etc/cron.d` holding the test's
//! job.
//!
//! Every process the test starts carries its mark and is killed when the
//! test ends, pass or fail.

use flotilla_tests::init::TestDir;
use flotilla_tests::{bins, procs, wait_for, WAIT};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The init, started in a new network namespace with `lo` up; killed
/// with everything it started on drop.
struct NsInit {
    child: Child,
    mark: String,
    control: std::path::PathBuf,
    output: std::path::PathBuf,
}

/// A /run of the namespace's own (the setup of an init as PID 1).
const PRIVATE_RUN: &str = "mount -t tmpfs -o mode=0755 tmpfs /run";

impl NsInit {
    fn start(dir: &TestDir, target: &str) -> NsInit {
        NsInit::start_as(dir, target, &[])
    }

    /// The init as PID 1 of a PID and mount namespace of its own too, with
    /// a /run of its own: as PID 1 it serves systemd's D-Bus interface,
    /// whose /run/systemd/ must not reach the host's.
    fn start_pid1(dir: &TestDir, target: &str) -> NsInit {
        NsInit::start_with(
            dir,
            target,
            &["--pid", "--fork", "--mount-proc", "--kill-child"],
            PRIVATE_RUN,
        )
    }

    fn start_as(dir: &TestDir, target: &str, unshare: &[&str]) -> NsInit {
        NsInit::start_with(dir, target, unshare, "true")
    }

    /// The init with more namespaces (`unshare`'s options) and `setup`, a
    /// shell command run in them first.
    fn start_with(dir: &TestDir, target: &str, unshare: &[&str], setup: &str) -> NsInit {
        NsInit::start_full(dir, target, unshare, setup, &[])
    }

    /// [`NsInit::start_with`], with more arguments for the init.
    fn start_full(
        dir: &TestDir,
        target: &str,
        unshare: &[&str],
        setup: &str,
        args: &[&str],
    ) -> NsInit {
        NsInit::start_wrapped(dir, target, unshare, setup, args, "")
    }

    /// The init holding only Docker's default capabilities, as PID 1 of a
    /// container started by Docker or podman would (`setpriv` limits the
    /// bounding set, so the init, root, execs with only those).
    fn start_docker(dir: &TestDir, target: &str, args: &[&str]) -> NsInit {
        let wrap = format!("setpriv --bounding-set {DOCKER_CAPS} --");
        NsInit::start_wrapped(dir, target, &[], "true", args, &wrap)
    }

    /// [`NsInit::start_full`], the init's command run by `wrap` (words).
    fn start_wrapped(
        dir: &TestDir,
        target: &str,
        unshare: &[&str],
        setup: &str,
        args: &[&str],
        wrap: &str,
    ) -> NsInit {
        let out = std::fs::File::create(dir.join("init.out")).expect("init.out");
        let child = Command::new("unshare")
            .args(unshare)
            .args([
                "--net",
                "--",
                "/bin/sh",
                "-c",
                &format!("{setup} && ip link set lo up && exec {wrap} \"$0\" \"$@\""),
            ])
            .arg(bins::init())
            .arg("--units")
            .arg(dir.units())
            .arg("--control")
            .arg(dir.control())
            .args(["--target", target])
            .args(args)
            .env(procs::MARK_VAR, &dir.mark)
            .env_remove("NOTIFY_SOCKET")
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("dup"))
            .stderr(out)
            .spawn()
            .expect("unshare");
        NsInit {
            child,
            mark: dir.mark.clone(),
            control: dir.control(),
            output: dir.join("init.out"),
        }
    }

    /// What the init says of its units (`initctl status`) and the last
    /// 40 lines of its output, which hold the units' logs.
    fn explain(&self) -> String {
        let status = Command::new(bins::initctl())
            .arg("--control")
            .arg(&self.control)
            .arg("status")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_else(|e| format!("initctl: {e}"));
        let out = std::fs::read_to_string(&self.output).unwrap_or_default();
        let lines: Vec<&str> = out.lines().collect();
        let tail = lines[lines.len().saturating_sub(40)..].join("\n");
        format!("initctl status:\n{status}\ninit output (last 40 lines):\n{tail}")
    }

    /// Runs `argv` in the init's network namespace; its standard output.
    fn run_in(&self, argv: &[&str]) -> Option<String> {
        let out = Command::new("nsenter")
            .arg(format!("--net=/proc/{}/ns/net", self.child.id()))
            .arg("--")
            .args(argv)
            .stderr(Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

impl Drop for NsInit {
    fn drop(&mut self) {
        // Its descendants first, by descent: a daemon that rewrote its
        // process title lost the mark.
        procs::kill_all(&procs::descendants(self.child.id() as i32));
        let _ = self.child.kill();
        let _ = self.child.wait();
        procs::kill_marked(&self.mark);
    }
}

/// Docker's default capability set (moby's `oci/caps/defaults.go`), as
/// `setpriv --bounding-set` takes it.
const DOCKER_CAPS: &str = "-all,+chown,+dac_override,+fsetid,+fowner,+mknod,+net_raw,+setgid,\
                           +setuid,+setfcap,+setpcap,+net_bind_service,+sys_chroot,+kill,\
                           +audit_write";

/// Whether this process holds `CAP_SYS_RESOURCE` (which the init needs
/// to raise a hard limit above its own, as in `LimitNOFILE=65535`).
fn has_sys_resource() -> bool {
    let eff = status_field(std::process::id() as i32, "CapEff:");
    u64::from_str_radix(&eff, 16).is_ok_and(|c| c & (1 << 24) != 0)
}

/// Copies Debian's unit file `name` into the units directory, unchanged
/// but for one line where this machine cannot honour a key: without
/// `CAP_SYS_RESOURCE` (a container that dropped it), flotilla's own
/// `X-SkipUnsupported=` (which systemd ignores) lets the `Limit*=` keys
/// be left out, with a note in the unit's log, rather than fail the unit.
fn install_debians(dir: &TestDir, name: &str) {
    let mut text = std::fs::read_to_string(format!("/lib/systemd/system/{name}"))
        .unwrap_or_else(|e| panic!("Debian's {name}: {e}"));
    if !has_sys_resource() {
        text.push_str("\n[Service]\nX-SkipUnsupported=LimitNOFILE\n");
    }
    std::fs::write(dir.units().join(name), text).expect("write unit");
}

/// The one process below the init whose command line starts with
/// `program` (found by descent: a daemon that rewrites its process title,
/// as redis does, loses its environment and with it the test's mark).
/// On a timeout it prints what the init says of its units and the tail
/// of its output, so that a failure names the unit, its state and its log.
fn process(init: &NsInit, program: &str) -> i32 {
    let root = init.child.id() as i32;
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let found = procs::descendants(root)
            .into_iter()
            .find(|&p| procs::cmdline(p).starts_with(program));
        if let Some(pid) = found {
            return pid;
        }
        if std::time::Instant::now() > deadline {
            panic!(
                "timed out after {WAIT:?} waiting for {program}\n{}",
                init.explain()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A field of `/proc/PID/status`.
fn status_field(pid: i32, key: &str) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .map(|v| v.trim().to_string())
        .unwrap_or_default()
}

/// The options of the last mount on `target` in `pid`'s mount namespace.
fn mount_options(pid: i32, target: &str) -> String {
    let mounts = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).unwrap_or_default();
    mounts
        .lines()
        .rfind(|l| l.split(' ').nth(4) == Some(target))
        .and_then(|l| l.split(' ').nth(5))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn redis_from_debians_unit_file() {
    let dir = TestDir::new();
    install_debians(&dir, "redis-server.service");
    check_redis(&NsInit::start(&dir, "redis-server.service"));
}

#[test]
fn redis_from_debians_unit_file_under_pid1() {
    let dir = TestDir::new();
    install_debians(&dir, "redis-server.service");
    let init = NsInit::start_pid1(&dir, "redis-server.service");
    check_redis(&init);
    let pid = process(&init, &bins::init().display().to_string());
    let nspid = status_field(pid, "NSpid:");
    assert_eq!(nspid.split_whitespace().last(), Some("1"), "PID 1: {nspid}");
}

/// Debian's template `redis-server@.service`, unchanged, run as the
/// instance `redis-server@6390.service` that the init's target names: the
/// instance reads `/etc/redis/redis-6390.conf` (`%i`), which the test
/// writes in a directory of its own bound over `/etc/redis` in the init's
/// mount namespace. The init is PID 1 of a PID namespace.
#[test]
fn redis_instance_from_debians_template_under_pid1() {
    let dir = TestDir::new();
    let name = "redis-server@.service";
    std::fs::copy(
        format!("/lib/systemd/system/{name}"),
        dir.units().join(name),
    )
    .expect("Debian's redis-server@.service");
    if !has_sys_resource() {
        // A drop-in of the template, as an administrator would add one.
        dir.file(
            &format!("units/{name}.d/skip.conf"),
            "[Service]\nX-SkipUnsupported=LimitNOFILE\n",
        );
    }
    dir.file(
        "etc-redis/redis-6390.conf",
        "port 6390\nbind 127.0.0.1\nsupervised systemd\ndaemonize no\n\
         pidfile /run/redis-6390/redis-server.pid\nlogfile \"\"\ndir /var/lib/redis\nsave \"\"\n",
    );
    let init = NsInit::start_with(
        &dir,
        "redis-server@6390.service",
        &["--pid", "--fork", "--mount-proc", "--kill-child"],
        &format!(
            "{PRIVATE_RUN} && mount --bind {} /etc/redis",
            dir.join("etc-redis").display()
        ),
    );
    let pong = wait_for(WAIT, "the instance answers PING on its port", || {
        init.run_in(&["redis-cli", "-h", "127.0.0.1", "-p", "6390", "ping"])
            .filter(|o| o.trim() == "PONG")
    });
    assert_eq!(pong.trim(), "PONG");
    let pid = process(&init, "/usr/bin/redis-server");
    assert_eq!(procs::uid(pid), Some(uid_of("redis")));
    assert_eq!(status_field(pid, "NoNewPrivs:"), "1");
    assert!(
        std::path::Path::new(&format!("/proc/{pid}/root/run/redis-6390")).is_dir(),
        "RuntimeDirectory=redis-%i, seen in the daemon's mount namespace"
    );
    let pid1 = process(&init, &bins::init().display().to_string());
    let nspid = status_field(pid1, "NSpid:");
    assert_eq!(nspid.split_whitespace().last(), Some("1"), "PID 1: {nspid}");
}

/// redis answers, and its sandbox is what Debian's unit file asks for.
fn check_redis(init: &NsInit) {
    let pong = wait_for(WAIT, "redis answers PING", || {
        init.run_in(&["redis-cli", "-h", "127.0.0.1", "ping"])
            .filter(|o| o.trim() == "PONG")
    });
    assert_eq!(pong.trim(), "PONG");
    let pid = process(init, "/usr/bin/redis-server");
    assert_eq!(status_field(pid, "NoNewPrivs:"), "1");
    assert_eq!(status_field(pid, "CapBnd:"), "0000000000000000");
    assert_eq!(status_field(pid, "Seccomp:"), "2");
    assert_eq!(status_field(pid, "Umask:"), "0007");
    assert_eq!(procs::uid(pid), Some(uid_of("redis")));
    let own = std::fs::read_link(format!("/proc/{pid}/ns/mnt")).expect("ns");
    let mine = std::fs::read_link("/proc/self/ns/mnt").expect("ns");
    assert_ne!(own, mine, "a mount namespace of its own");
    assert!(
        mount_options(pid, "/usr").starts_with("ro") || mount_options(pid, "/").starts_with("ro")
    );
    assert!(
        mount_options(pid, "/tmp").starts_with("rw"),
        "a private /tmp"
    );
    assert!(mount_options(pid, "/var/lib/redis").starts_with("rw"));
    assert!(
        std::path::Path::new("/run/redis").is_dir(),
        "RuntimeDirectory="
    );
    // PrivateUsers=true: root and redis mapped, nobody else.
    let redis = uid_of("redis");
    let uid_map: Vec<Vec<String>> = std::fs::read_to_string(format!("/proc/{pid}/uid_map"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect();
    let r = redis.to_string();
    assert_eq!(uid_map, [["0", "0", "1"], [r.as_str(), r.as_str(), "1"]]);
    // NoExecPaths=/ with ExecPaths=/usr/bin/redis-server /usr/lib /lib.
    assert!(
        mount_options(pid, "/").contains("noexec"),
        "{}",
        mount_options(pid, "/")
    );
    assert!(!mount_options(pid, "/usr/lib").contains("noexec"));
    assert!(!mount_options(pid, "/usr/bin/redis-server").contains("noexec"));
}

fn uid_of(user: &str) -> u32 {
    let passwd = std::fs::read_to_string("/etc/passwd").expect("passwd");
    passwd
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.first() == Some(&user)).then(|| f.get(2)?.parse().ok())?
        })
        .expect("user")
}

#[test]
fn nginx_from_debians_unit_file() {
    let dir = TestDir::new();
    install_debians(&dir, "nginx.service");
    let init = NsInit::start(&dir, "nginx.service");
    // A forking daemon with a pidfile, an ExecStartPre= check, KillMode=mixed.
    let code = wait_for(WAIT, "nginx answers over HTTP", || {
        init.run_in(&[
            "curl",
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "http://127.0.0.1/",
        ])
        .filter(|c| c.trim() == "200")
    });
    assert_eq!(code.trim(), "200");
    let master = process(&init, "nginx: master process");
    let cg = std::fs::read_to_string(format!("/proc/{master}/cgroup")).unwrap_or_default();
    assert!(cg.contains("/nginx.service"), "in its own cgroup: {cg}");
}

/// Debian's cron takes `/run/crond.pid` for the whole machine: a second
/// cron started while one runs exits at once ("cron already running"). So
/// each cron test gives its init a /run of its own (a cron already running
/// on the machine, as one apt's postinst may start, holds the host's), and
/// the two run one after the other.
static CRON: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn cron_from_debians_unit_file() {
    let _one_cron = CRON.lock().unwrap_or_else(|e| e.into_inner());
    let dir = TestDir::new();
    install_debians(&dir, "cron.service");
    // A job of the test's own in a private /etc/cron.d (the init runs in a
    // mount namespace of its own too): cron runs it at the next minute.
    let crond = dir.join("cron.d");
    std::fs::create_dir(&crond).expect("mkdir");
    let ran = dir.join("cron-ran");
    std::fs::write(
        crond.join("flotilla-test"),
        format!("* * * * * root echo ran > {}\n", ran.display()),
    )
    .expect("write the job");
    let init = NsInit::start_with(
        &dir,
        "cron.service",
        &["--mount"],
        &format!(
            "mount --bind {} /etc/cron.d && {PRIVATE_RUN}",
            crond.display()
        ),
    );
    // `$EXTRA_OPTS`, unset in /etc/default/cron, expands to no word at all.
    let pid = process(&init, "/usr/sbin/cron");
    assert_eq!(procs::cmdline(pid), "/usr/sbin/cron -f");
    // The shell makes the file before it writes the line: read once it
    // holds a whole line.
    let text = wait_for(Duration::from_secs(90), "the cron job's file", || {
        std::fs::read_to_string(&ran)
            .ok()
            .filter(|t| t.ends_with('\n'))
    });
    assert_eq!(text, "ran\n");
}

/// Debian's `/etc/init.d/cron`, a SysV script, as a unit
/// (`sysv-scripts: true`) where no unit file on the path names cron: its
/// `S01cron` links in `/etc/rc2.d` … `rc5.d` (which `update-rc.d` made
/// from its `Default-Start`) make `multi-user.target` want it, as
/// systemd's generator does. The init runs `cron start`, and `cron stop`
/// when the target no longer wants it. Its own `/run` (a tmpfs) keeps the
/// script's pidfile and `/lib/lsb/init-functions`' view of the machine
/// private.
#[test]
fn cron_from_debians_sysv_script_enabled_by_its_runlevel_links() {
    let _one_cron = CRON.lock().unwrap_or_else(|e| e.into_inner());
    let dir = TestDir::new();
    dir.unit(
        "multi-user.target",
        "unit: multi-user.target\ntype: virtual\n",
    );
    dir.unit("rescue", "unit: rescue\ntype: virtual\n");
    // The machine's other enabled scripts are masked: cron alone runs.
    let mut others = std::collections::BTreeSet::new();
    for level in 2..=5 {
        let Ok(entries) = std::fs::read_dir(format!("/etc/rc{level}.d")) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(script) = name.strip_prefix('S').and_then(|n| n.get(2..)) {
                if script != "cron" {
                    others.insert(format!("{script}.service"));
                }
            }
        }
    }
    for name in &others {
        std::os::unix::fs::symlink("/dev/null", dir.units().join(name)).expect("mask");
    }
    let cfg = dir.file("init.yaml", "sysv-scripts: true\n");
    let cfg = cfg.to_str().expect("utf-8");
    let units = dir.units().display().to_string();
    let out = dir.run_init(&[
        "--check",
        "--units",
        &units,
        "--config",
        cfg,
        "--target",
        "multi-user.target",
    ]);
    out.expect(0);
    assert!(
        out.stdout
            .contains("unit cron.service: from /etc/init.d/cron (SysV init script)")
            && out.stdout.contains(
                "target multi-user.target requires 2 unit(s): cron.service multi-user.target"
            ),
        "{}",
        out.stdout
    );
    let init = NsInit::start_full(
        &dir,
        "multi-user.target",
        &["--mount"],
        "mount -t tmpfs tmpfs /run",
        &["--config", cfg],
    );
    let pid = process(&init, "/usr/sbin/cron");
    // Started by the script (start-stop-daemon, no -f): a daemon.
    assert_eq!(procs::cmdline(pid), "/usr/sbin/cron");
    let u = wait_for(WAIT, "cron.service running", || {
        let out = dir.ctl(&["status", "cron.service", "--json"]);
        let u: serde_json::Value = serde_json::from_str(&out.stdout).ok()?;
        (u["state"] == "running").then_some(u)
    });
    assert_eq!(u["source"], "/etc/init.d/cron", "{u}");
    assert_eq!(u["type"], "background-scripted", "{u}");
    // Another target: the script's stop ends the daemon.
    dir.ctl(&["set-target", "rescue", "--wait"]).expect(0);
    wait_for(WAIT, "cron stopped by its script", || {
        (!procs::alive(pid)).then_some(())
    });
    drop(init);
}

#[test]
fn openssh_from_debians_unit_file() {
    let dir = TestDir::new();
    install_debians(&dir, "ssh.service");
    let init = NsInit::start(&dir, "ssh.service");
    // Type=notify (Debian's sshd says READY=1), an ExecStartPre= check,
    // `$SSHD_OPTS` from an optional EnvironmentFile=, RuntimeDirectory=
    // (made by sshd's own process, handed off), KillMode=process.
    let keys = wait_for(WAIT, "sshd answers ssh-keyscan", || {
        init.run_in(&["ssh-keyscan", "-T", "5", "-t", "ed25519", "127.0.0.1"])
            .filter(|o| o.contains("ssh-ed25519"))
    });
    let host = std::fs::read_to_string("/etc/ssh/ssh_host_ed25519_key.pub").expect("host key");
    let material = host.split_whitespace().nth(1).expect("key material");
    assert!(keys.contains(material), "the machine's host key: {keys}");
    let pid = process(&init, "sshd: /usr/sbin/sshd -D");
    assert_eq!(procs::uid(pid), Some(0));
    // READY=1 arrived: running, not starting.
    wait_for(WAIT, "ssh.service running", || {
        let out = dir.ctl(&["status", "ssh.service"]);
        out.stdout
            .lines()
            .any(|l| l.trim().starts_with("State: running"))
            .then_some(())
    });
    let run = std::fs::metadata("/run/sshd").expect("RuntimeDirectory=sshd");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(run.permissions().mode() & 0o7777, 0o755);
    let cg = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
    assert!(cg.contains("/ssh.service"), "in its own cgroup: {cg}");
}

/// Debian's `dbus.socket` and `dbus.service`, unchanged, run by the init as
/// PID 1 of a PID and mount namespace (`/run` a tmpfs of its own): the init
/// binds `/run/dbus/system_bus_socket`, a client's call waits in it before
/// any dbus-daemon runs, starts `dbus.service` (`--address=systemd:`: the
/// daemon takes the socket from `LISTEN_FDS`), and is answered.
#[test]
fn dbus_socket_activated_from_debians_unit_files() {
    let dir = TestDir::new();
    install_debians(&dir, "dbus.socket");
    install_debians(&dir, "dbus.service");
    if !has_sys_resource() {
        // OOMScoreAdjust=-900 lowers the score: CAP_SYS_RESOURCE too.
        let unit = dir.units().join("dbus.service");
        let mut text = std::fs::read_to_string(&unit).expect("dbus.service");
        text.push_str("X-SkipUnsupported=LimitNOFILE OOMScoreAdjust\n");
        std::fs::write(&unit, text).expect("write unit");
    }
    let init = NsInit::start_with(
        &dir,
        "dbus.socket",
        &["--pid", "--fork", "--mount-proc", "--kill-child"],
        PRIVATE_RUN,
    );
    wait_for(WAIT, "dbus.socket listening", || {
        let out = dir.ctl(&["status", "dbus.socket"]);
        out.stdout
            .contains("stream /run/dbus/system_bus_socket")
            .then_some(())
    });
    let service = dir.ctl(&["status", "dbus.service"]);
    assert!(
        service
            .stdout
            .lines()
            .any(|l| l.trim().starts_with("State: disabled")),
        "no daemon before the first call: {}",
        service.stdout
    );
    let mnt = format!("--mount=/proc/{}/ns/mnt", init.child.id());
    let net = format!("--net=/proc/{}/ns/net", init.child.id());
    let names = wait_for(WAIT, "dbus-send answered", || {
        let out = Command::new("nsenter")
            .args([&mnt, &net, "--"])
            .args([
                "dbus-send",
                "--system",
                "--print-reply",
                "--reply-timeout=5000",
                "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus.ListNames",
            ])
            .env(procs::MARK_VAR, &dir.mark)
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        (out.status.success() && text.contains("org.freedesktop.DBus")).then_some(text)
    });
    assert!(names.contains("method return"), "{names}");
    let pid = process(&init, "/usr/bin/dbus-daemon");
    assert_eq!(procs::uid(pid), Some(uid_of("messagebus")));
    // Type=notify: dbus-daemon said READY=1 once it had its socket.
    wait_for(WAIT, "dbus.service running", || {
        let out = dir.ctl(&["status", "dbus.service"]);
        out.stdout
            .lines()
            .any(|l| l.trim().starts_with("State: running"))
            .then_some(())
    });
}

/// Debian's `syslog.socket` and `rsyslog.service` (with its alias
/// `syslog.service`, the link `[Install] Alias=` makes), unchanged, run by
/// the init as PID 1 of a PID and mount namespace (`/run` and `/var/log`
/// tmpfs of its own): a line sent to `/run/systemd/journal/syslog` before
/// any rsyslogd runs starts it through the alias, and reaches
/// `/var/log/syslog`. rsyslog takes its socket from `LISTEN_FDS` only
/// where `sd_booted()` says systemd runs (`/run/systemd/system` exists):
/// the test's `/run` says so; flotilla itself never makes it.
#[test]
fn rsyslog_socket_activated_from_debians_unit_files() {
    let dir = TestDir::new();
    install_debians(&dir, "syslog.socket");
    install_debians(&dir, "rsyslog.service");
    std::os::unix::fs::symlink("rsyslog.service", dir.units().join("syslog.service"))
        .expect("alias link");
    let init = NsInit::start_with(
        &dir,
        "syslog.socket",
        &["--pid", "--fork", "--mount-proc", "--kill-child"],
        &format!("{PRIVATE_RUN} && mkdir -p /run/systemd/system && mount -t tmpfs tmpfs /var/log"),
    );
    wait_for(WAIT, "syslog.socket listening", || {
        let out = dir.ctl(&["status", "syslog.socket"]);
        out.stdout
            .contains("datagram /run/systemd/journal/syslog")
            .then_some(())
    });
    let mnt = format!("--mount=/proc/{}/ns/mnt", init.child.id());
    let line = format!("flotilla-test-{}", dir.mark);
    let sent = Command::new("nsenter")
        .args([
            &mnt,
            "--",
            "logger",
            "-u",
            "/run/systemd/journal/syslog",
            &line,
        ])
        .status()
        .expect("logger");
    assert!(sent.success());
    wait_for(WAIT, "the line in /var/log/syslog", || {
        let out = Command::new("nsenter")
            .args([&mnt, "--", "cat", "/var/log/syslog"])
            .output()
            .ok()?;
        String::from_utf8_lossy(&out.stdout)
            .contains(&line)
            .then_some(())
    });
    let st = dir.ctl(&["status", "rsyslog.service"]);
    assert!(
        st.stdout.contains("triggered by syslog.socket"),
        "{}",
        st.stdout
    );
}

/// Copies Debian's unit file `name` into the units directory, unchanged.
fn install_unchanged(dir: &TestDir, name: &str) {
    std::fs::copy(
        format!("/lib/systemd/system/{name}"),
        dir.units().join(name),
    )
    .unwrap_or_else(|e| panic!("Debian's {name}: {e}"));
}

/// `initctl status UNIT --json`, parsed.
fn unit_json(dir: &TestDir, unit: &str) -> serde_json::Value {
    let out = dir.ctl(&["status", unit, "--json"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    serde_json::from_str(&out.stdout).expect("status JSON")
}

/// The settings named in a unit's `not_applied`.
fn not_applied(v: &serde_json::Value) -> Vec<String> {
    v["not_applied"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|n| n["setting"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// `initctl analyze security UNIT --json`: the row of `setting`.
fn security_row(dir: &TestDir, unit: &str, setting: &str) -> serde_json::Value {
    let out = dir.ctl(&["analyze", "security", unit, "--json"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("security JSON");
    let e = v["exposure"].as_f64().expect("exposure");
    assert!((0.0..=10.0).contains(&e), "{v}");
    v["settings"]
        .as_array()
        .and_then(|a| a.iter().find(|r| r["setting"] == setting).cloned())
        .unwrap_or_else(|| panic!("no {setting} in {v}"))
}

/// A field of `/proc/PID/limits` (`Max open files`): soft and hard.
fn limit_of(pid: i32, name: &str) -> (String, String) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("limits");
    let line = text.lines().find(|l| l.starts_with(name)).expect("limit");
    let f: Vec<&str> = line[name.len()..].split_whitespace().collect();
    (f[0].to_string(), f[1].to_string())
}

/// Debian's unchanged `redis-server.service` under an init that holds
/// only Docker's default capabilities: no `CAP_SYS_ADMIN` (no mount
/// namespace: `ProtectSystem=`, `PrivateTmp=` … left out, as systemd
/// leaves a sandbox out that only restricts), no `CAP_SYS_RESOURCE`
/// (`LimitNOFILE=65535` set to the hard limit held). redis answers; the
/// status names each setting not applied; `analyze security` says what
/// `/proc` says.
#[test]
fn redis_under_dockers_default_capabilities_names_what_was_not_applied() {
    let dir = TestDir::new();
    install_unchanged(&dir, "redis-server.service");
    let init = NsInit::start_docker(&dir, "redis-server.service", &[]);
    let pong = wait_for(WAIT, "redis answers PING", || {
        init.run_in(&["redis-cli", "-h", "127.0.0.1", "ping"])
            .filter(|o| o.trim() == "PONG")
    });
    assert_eq!(pong.trim(), "PONG");
    let pid = process(&init, "/usr/bin/redis-server");
    let v = unit_json(&dir, "redis-server.service");
    assert_eq!(v["state"], "running", "{v}");
    let names = not_applied(&v);
    for s in [
        "ProtectSystem",
        "PrivateTmp",
        "ProtectHome",
        "PrivateDevices",
    ] {
        assert!(names.iter().any(|n| n == s), "{s} not named: {v}");
    }
    // The hard limit held by the init (this machine's, or infinity).
    let held =
        std::fs::read_to_string(format!("/proc/{}/limits", std::process::id())).expect("limits");
    let held = held
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(4))
        .expect("hard")
        .to_string();
    let (soft, hard) = limit_of(pid, "Max open files");
    if held == "unlimited" || held.parse::<u64>().is_ok_and(|h| h >= 65535) {
        assert_eq!((soft.as_str(), hard.as_str()), ("65535", "65535"));
    } else {
        assert_eq!((soft, hard), (held.clone(), held.clone()), "clamped");
        assert!(names.iter().any(|n| n == "LimitNOFILE"), "{v}");
    }
    // The plain status and the degraded list name them too.
    let plain = dir.ctl(&["status", "redis-server.service"]).stdout;
    assert!(
        plain.contains("Not applied: ProtectSystem: not applied"),
        "{plain}"
    );
    let list = dir.ctl(&["list", "--degraded"]).stdout;
    assert!(
        list.contains("redis-server.service") && list.contains("ProtectSystem"),
        "{list}"
    );
    let log = std::fs::read_to_string(dir.join("init.out")).unwrap_or_default();
    assert!(
        log.contains("started redis-server.service (not applied: "),
        "{log}"
    );
    // What was kept: seccomp, no-new-privileges, no capabilities, its user.
    assert_eq!(status_field(pid, "NoNewPrivs:"), "1");
    assert_eq!(status_field(pid, "Seccomp:"), "2");
    assert_eq!(status_field(pid, "CapBnd:"), "0000000000000000");
    assert_eq!(procs::uid(pid), Some(uid_of("redis")));
    // analyze security against /proc: no mount namespace of its own, so
    // ProtectSystem=strict is declared and not achieved; NoNewPrivileges=
    // is achieved.
    let own = std::fs::read_link(format!("/proc/{pid}/ns/mnt")).expect("ns");
    let mine = std::fs::read_link("/proc/self/ns/mnt").expect("ns");
    assert_eq!(own, mine, "no mount namespace without CAP_SYS_ADMIN");
    assert!(!mount_options(pid, "/").starts_with("ro"));
    let ps = security_row(&dir, "redis-server.service", "ProtectSystem");
    assert_eq!(
        (ps["declared"].as_str(), ps["achieved"].as_bool()),
        (Some("strict"), Some(false)),
        "{ps}"
    );
    let nnp = security_row(&dir, "redis-server.service", "NoNewPrivileges");
    assert_eq!(nnp["achieved"], true, "{nnp}");
    let cb = security_row(&dir, "redis-server.service", "CapabilityBoundingSet");
    assert_eq!(cb["achieved"], true, "{cb}");
    assert!(
        cb["detail"]
            .as_str()
            .unwrap_or("")
            .contains("CapBnd: 0000000000000000"),
        "{cb}"
    );
    let out = dir.ctl(&["analyze", "security", "no-such.service"]);
    assert_eq!(out.code, 4, "{}{}", out.stdout, out.stderr);
}

/// The same unit under `sandbox: strict` (the config's) fails to start,
/// and says which setting and why.
#[test]
fn redis_under_dockers_default_capabilities_fails_under_sandbox_strict() {
    let dir = TestDir::new();
    install_unchanged(&dir, "redis-server.service");
    dir.file("init.yaml", "sandbox: strict\n");
    let config = dir.join("init.yaml").display().to_string();
    let _init = NsInit::start_docker(&dir, "redis-server.service", &["--config", &config]);
    let v = wait_for(WAIT, "redis-server.service fails", || {
        let out = dir.ctl(&["status", "redis-server.service", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out.stdout).ok()?;
        (v["state"] == "failed").then_some(v)
    });
    let status = v["status"].as_str().unwrap_or("");
    assert!(status.contains("(sandbox: strict)"), "{v}");
    assert!(status.contains("CAP_SYS_"), "{v}");
    assert!(not_applied(&v).is_empty(), "{v}");
}

/// Debian's unchanged `postgresql@.service`, as `postgresql@15-main`,
/// under Docker's default capabilities: `OOMScoreAdjust=-900` needs
/// `CAP_SYS_RESOURCE`, so it is skipped, as systemd skips it in a
/// container, and named; the cluster answers `psql`.
#[test]
fn postgresql_under_dockers_default_capabilities_answers_and_names_oom_score() {
    let cluster = std::fs::read_dir("/etc/postgresql")
        .ok()
        .and_then(|mut d| d.next())
        .and_then(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .expect("a PostgreSQL cluster (the postgresql package makes one)");
    let dir = TestDir::new();
    install_unchanged(&dir, "postgresql@.service");
    let unit = format!("postgresql@{cluster}-main.service");
    let _init = NsInit::start_docker(&dir, &unit, &[]);
    let v = wait_for(Duration::from_secs(60), "postgresql is running", || {
        let out = dir.ctl(&["status", &unit, "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out.stdout).ok()?;
        (v["state"] == "running").then_some(v)
    });
    assert!(not_applied(&v).iter().any(|n| n == "OOMScoreAdjust"), "{v}");
    let pid = v["pid"].as_i64().expect("pid") as i32;
    assert_eq!(
        std::fs::read_to_string(format!("/proc/{pid}/oom_score_adj"))
            .unwrap_or_default()
            .trim(),
        "0",
        "left at the init's"
    );
    let answer = wait_for(WAIT, "psql answers", || {
        let out = Command::new("runuser")
            .args(["-u", "postgres", "--", "psql", "-At", "-c", "select 40 + 2"])
            .stderr(Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    });
    assert_eq!(answer, "42");
    let plain = dir.ctl(&["status", &unit]).stdout;
    assert!(
        plain.contains("Not applied: OOMScoreAdjust: OOMScoreAdjust=-900 skipped"),
        "{plain}"
    );
}

/// Debian's `systemd-timesyncd.service` (`ExecStart=!!…`, `User=systemd-timesync`,
/// `AmbientCapabilities=CAP_SYS_TIME`): `!!` is a no-op on a kernel with
/// ambient capabilities, so the daemon runs as its user holding
/// `CAP_SYS_TIME` (read as `!` it ran as root and could not drop to its
/// user). The unit file is Debian's but for an empty
/// `ConditionVirtualization=`, which resets its conditions: the test
/// machine may be a container, where `!container` would skip the unit.
/// The init is PID 1 of namespaces of its own, with `/run` and
/// `/var/lib/systemd` on tmpfs and only `lo` up, so that the daemon
/// reaches no time server and leaves the host's clock and state alone.
/// Its control socket, and so the notify sockets beside it, are in that
/// `/run`, as a booted init's are: the unit's `PrivateTmp=` hides the
/// test's directory in `/tmp`.
#[test]
fn timesyncd_from_debians_unit_file_runs_as_its_user_with_cap_sys_time() {
    let dir = TestDir::new();
    install_unchanged(&dir, "systemd-timesyncd.service");
    let unit = dir.units().join("systemd-timesyncd.service");
    let mut text = std::fs::read_to_string(&unit).expect("systemd-timesyncd.service");
    assert!(text.contains("ExecStart=!!/lib/systemd/systemd-timesyncd"));
    text.push_str("\n[Unit]\nConditionVirtualization=\n");
    std::fs::write(&unit, text).expect("write unit");
    let control = "/run/flotilla-test/control.sock";
    let init = NsInit::start_full(
        &dir,
        "systemd-timesyncd.service",
        &["--pid", "--fork", "--mount-proc", "--kill-child"],
        &format!("{PRIVATE_RUN} && mount -t tmpfs tmpfs /var/lib/systemd"),
        &["--control", control],
    );
    // The socket in the init's mount namespace, reached through its root.
    let control = format!("/proc/{}/root{control}", init.child.id());
    let status = || {
        let out = Command::new(bins::initctl())
            .args(["--control", &control, "status", "systemd-timesyncd.service"])
            .env("NO_COLOR", "1")
            .output()
            .expect("initctl");
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    };
    // Type=notify: READY=1 once it runs as its user.
    let deadline = std::time::Instant::now() + WAIT;
    let shown = loop {
        let shown = status();
        if shown
            .lines()
            .any(|l| l.trim().starts_with("State: running"))
        {
            break shown;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "systemd-timesyncd.service not running:\n{shown}\n{}",
            std::fs::read_to_string(dir.join("init.out")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let pid = process(&init, "/lib/systemd/systemd-timesyncd");
    assert_eq!(procs::uid(pid), Some(uid_of("systemd-timesync")), "{shown}");
    let ambient = u64::from_str_radix(&status_field(pid, "CapAmb:"), 16).unwrap_or(0);
    let sys_time = 1u64 << 25;
    assert_eq!(ambient, sys_time, "CapAmb {ambient:x}: {shown}");
    let bounding = u64::from_str_radix(&status_field(pid, "CapBnd:"), 16).unwrap_or(0);
    assert_eq!(bounding, sys_time, "CapBnd {bounding:x}");
    assert!(shown.contains("Restarts: 0"), "{shown}");
}
