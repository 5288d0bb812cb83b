//! The descriptor store (`FDSTORE=1`, `FileDescriptorStoreMax=`) through
//! the real `init` and `initctl` (harness: `tests/src/`): a Python service
//! hands the init descriptors on its notify socket (`SCM_RIGHTS`) and
//! gets them back at its next start as `LISTEN_FDS`/`LISTEN_FDNAMES`;
//! what it asks for at each start is in a file the test writes before
//! restarting it. The init's own descriptors are read in `/proc/PID/fd`.
//! Each test takes well under a second.

use flotilla_tests::init::{Init, TestDir};
use flotilla_tests::{wait_for, WAIT};
use flotilla_units::state::UnitState;
use std::io::Write;
use std::os::unix::net::UnixListener;

/// The service: says what it was handed (`got names=… data=…`), then
/// does what `todo` says (one action a line), then `READY=1`.
const KEEPER: &str = r#"
import array, os, socket, sys
todo_path = sys.argv[1]
n = int(os.environ.get("LISTEN_FDS", "0"))
names = os.environ.get("LISTEN_FDNAMES", "")
handed = list(zip(names.split(":") if n else [], range(3, 3 + n)))
datas = []
for name, fd in handed:
    if name == "data":
        datas.append(os.pread(fd, 64, 0).decode())
    if name == "conn":
        # What the peer wrote while the service was down waits in the
        # stored socket, as a service's output does in journald's.
        os.set_blocking(fd, False)
        try:
            datas.append("conn:" + os.read(fd, 64).decode().strip())
        except BlockingIOError:
            datas.append("conn:")
print("got fds=%d names=%s data=%s" % (n, names, ",".join(datas)), flush=True)
addr = os.environ["NOTIFY_SOCKET"]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
def send(msg, fds=()):
    anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", list(fds)))] if fds else []
    s.sendmsg([msg.encode()], anc, 0, addr)
todo = open(todo_path).read().split("\n") if os.path.exists(todo_path) else []
keep = []
for line in todo:
    words = line.split()
    if not words:
        continue
    if words[0] == "store-data":
        fd = os.memfd_create("data")
        os.write(fd, words[1].encode())
        send("FDSTORE=1\nFDNAME=data\nFDPOLL=0", [fd])
        os.close(fd)
    elif words[0] == "store-conn":
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(words[1])
        print("conn ino=%d" % os.fstat(c.fileno()).st_ino, flush=True)
        send("FDSTORE=1\nFDNAME=conn", [c.fileno()])
        c.close()
    elif words[0] == "store-pipes":
        fds = []
        for _ in range(int(words[1])):
            r, w = os.pipe()
            keep.append(w)
            fds.append(r)
        send("FDSTORE=1\nFDNAME=pipe\nFDPOLL=0", fds)
        for fd in fds:
            os.close(fd)
    elif words[0] == "again":
        # What it was handed, stored again: the store keeps one of each.
        send("FDSTORE=1\nFDNAME=data\nFDPOLL=0", [fd for name, fd in handed if name == "data"])
    elif words[0] == "remove":
        send("FDSTOREREMOVE=1\nFDNAME=" + words[1])
    elif words[0] == "remove-unnamed":
        send("FDSTOREREMOVE=1")
    elif words[0] in ("bad-name", "plain"):
        fd = os.memfd_create("x")
        os.write(fd, words[0].encode())
        msg = "FDSTORE=1\nFDNAME=a:b\nFDPOLL=0" if words[0] == "bad-name" else "STATUS=plain"
        send(msg, [fd])
        os.close(fd)
print("stored", flush=True)
send("READY=1")
import signal
while True:
    signal.pause()
"#;

/// `keeper.service` with `FileDescriptorStoreMax=max`.
fn keeper(dir: &TestDir, max: u32) -> Init {
    let script = dir.file("keeper.py", KEEPER);
    dir.file(
        "units/keeper.service",
        &format!(
            "[Service]\nType=notify\nExecStart=/usr/bin/python3 {} {}\n\
             FileDescriptorStoreMax={max}\nRestart=on-failure\nRestartSec=50ms\n",
            script.display(),
            dir.join("todo").display()
        ),
    );
    dir.unit(
        "default",
        "unit: default\ntype: virtual\ndepends-on: [keeper.service]\n",
    );
    dir.init().target("default").binary(dir.init_copy()).start()
}

/// The unit's log.
fn log(init: &Init) -> String {
    let out = init.ctl(&["logs", "keeper.service"]);
    out.expect(0);
    out.stdout.clone()
}

/// Restarts the service with `todo` and waits for its `stored` line: the
/// `got …` line it printed at this start.
fn restart(init: &Init, dir: &TestDir, todo: &str) -> String {
    dir.file("todo", todo);
    let before = log(init).lines().filter(|l| l.ends_with("stored")).count();
    let old = init.pid_of("keeper.service");
    init.ctl(&["restart", "keeper.service"]).expect(0);
    init.wait_unit("keeper.service", "running again", |u| {
        u.state == UnitState::Running && u.pid.is_some_and(|p| p != old)
    });
    got_line(init, before + 1)
}

/// The `got …` line of start number `n` (from 1), once it said `stored`
/// and the unit is running: its `READY=1` came after its store messages
/// on the same socket, so the init has dealt with them. On a time-out,
/// the unit's state and log.
fn got_line(init: &Init, n: usize) -> String {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let text = log(init);
        let stored = text.lines().filter(|l| l.ends_with("stored")).count();
        let got: Vec<&str> = text.lines().filter(|l| l.contains("got fds=")).collect();
        let running = init.unit("keeper.service").state == UnitState::Running;
        if let (true, true, Some(l)) = (running, stored >= n, got.get(n - 1)) {
            return l.to_string();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "start {n} of keeper.service: state {}, log:\n{text}\ninit:\n{}",
            init.unit("keeper.service").state,
            init.output()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The sockets `/proc/PID/fd` of the init links to (`socket:[INO]`).
fn init_holds(init: &Init, ino: &str) -> bool {
    let want = format!("socket:[{ino}]");
    std::fs::read_dir(format!("/proc/{}/fd", init.pid))
        .map(|d| {
            d.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .any(|t| t.as_os_str() == want.as_str())
        })
        .unwrap_or(false)
}

#[test]
fn stored_descriptors_come_back_at_the_next_start_by_name() {
    let dir = TestDir::new();
    let listener = UnixListener::bind(dir.join("peer.sock")).expect("bind");
    dir.file(
        "todo",
        &format!(
            "store-data hello\nstore-conn {}\n",
            dir.join("peer.sock").display()
        ),
    );
    let init = keeper(&dir, 4);
    let first = got_line(&init, 1);
    assert!(first.contains("got fds=0 names= data="), "{first}");
    let (peer, _) = listener.accept().expect("the service connects");
    let text = log(&init);
    let ino = text
        .lines()
        .find_map(|l| l.split("conn ino=").nth(1))
        .expect("the connection's inode")
        .trim()
        .to_string();
    assert!(
        init_holds(&init, &ino),
        "the init holds the stored connection"
    );

    // A restart hands both back, the data first (the order stored), and
    // storing what came back again keeps one of each. What the peer wrote
    // meanwhile is read by the new process.
    (&peer).write_all(b"written-meanwhile\n").expect("write");
    let second = restart(&init, &dir, "again\n");
    assert!(
        second.contains("got fds=2 names=data:conn data=hello,conn:written-meanwhile"),
        "{second}"
    );
    let third = restart(&init, &dir, "");
    assert!(
        third.contains("got fds=2 names=data:conn data=hello,conn:"),
        "{third}"
    );

    // The peer closes: the connection leaves the store (hang-up), the
    // memfd (FDPOLL=0, and not pollable) stays.
    drop(peer);
    wait_for(WAIT, "the init to close the hung-up connection", || {
        (!init_holds(&init, &ino)).then_some(())
    });
    let fourth = restart(&init, &dir, "remove data\n");
    assert!(
        fourth.contains("got fds=1 names=data data=hello"),
        "{fourth}"
    );
    // FDSTOREREMOVE=1 took it out: nothing comes back.
    let fifth = restart(&init, &dir, "");
    assert!(fifth.contains("got fds=0 names= data="), "{fifth}");
}

#[test]
fn the_max_is_kept_and_a_stop_empties_the_store() {
    let dir = TestDir::new();
    dir.file("todo", "store-pipes 3\n");
    let init = keeper(&dir, 2);
    got_line(&init, 1);
    wait_for(WAIT, "the note of the descriptor over the max", || {
        log(&init)
            .contains(
                "the descriptor store is full (FileDescriptorStoreMax=2): 1 descriptor(s) closed",
            )
            .then_some(())
    });
    let second = restart(&init, &dir, "");
    assert!(second.contains("got fds=2 names=pipe:pipe"), "{second}");

    // Stopped for good: emptied; the next start gets nothing.
    init.ctl(&["stop", "keeper.service"]).expect(0);
    init.wait_state("keeper.service", UnitState::Disabled);
    wait_for(WAIT, "the store emptied", || {
        log(&init)
            .contains("descriptor store emptied: 2 descriptor(s) closed")
            .then_some(())
    });
    init.ctl(&["start", "keeper.service"]).expect(0);
    init.wait_state("keeper.service", UnitState::Running);
    let third = got_line(&init, 3);
    assert!(third.contains("got fds=0 names="), "{third}");
}

/// What the store refuses is closed and said in the unit's log: a name
/// that cannot be one (stored under `stored`), descriptors sent without
/// `FDSTORE=1`, `FDSTOREREMOVE=1` without a name; and with
/// `FileDescriptorStoreMax=0` nothing is kept.
#[test]
fn refusals_are_said_in_the_units_log() {
    let dir = TestDir::new();
    dir.file("todo", "bad-name\nplain\nremove-unnamed\n");
    let init = keeper(&dir, 4);
    got_line(&init, 1);
    let text = log(&init);
    for note in [
        "notify: FDNAME=a:b is not a valid name, stored as `stored`",
        "notify: 1 descriptor(s) sent without FDSTORE=1, closed",
        "FDSTOREREMOVE=1 without FDNAME=: nothing removed",
    ] {
        assert!(text.contains(note), "{note}\n{text}");
    }
    let second = restart(&init, &dir, "");
    assert!(second.contains("got fds=1 names=stored"), "{second}");
    drop(init);

    let dir = TestDir::new();
    dir.file("todo", "store-data x\n");
    let init = keeper(&dir, 0);
    got_line(&init, 1);
    let text = log(&init);
    let note = "notify: FDSTORE=1 but the unit has no descriptor store \
                (FileDescriptorStoreMax=0): 1 descriptor(s) closed";
    assert!(text.contains(note), "{text}");
    let second = restart(&init, &dir, "");
    assert!(second.contains("got fds=0 names="), "{second}");
}

#[test]
fn the_store_survives_a_reexec() {
    let dir = TestDir::new();
    dir.file("todo", "store-data kept\n");
    let init = keeper(&dir, 8);
    got_line(&init, 1);
    let out = init.ctl(&["daemon-reexec"]);
    out.expect(0);
    assert!(
        init.output().contains("init: re-executed"),
        "{}",
        init.output()
    );
    let second = restart(&init, &dir, "");
    assert!(
        second.contains("got fds=1 names=data data=kept"),
        "{second}"
    );
    // A crash and the automatic restart keep it too.
    let pid = init.pid_of("keeper.service");
    flotilla_tests::procs::signal(pid, libc::SIGKILL);
    init.wait_unit("keeper.service", "restarted after the crash", |u| {
        u.state == UnitState::Running && u.restarts == 1 && u.pid.is_some_and(|p| p != pid)
    });
    let third = got_line(&init, 3);
    assert!(third.contains("got fds=1 names=data data=kept"), "{third}");
}

/// Debian's journald (`/lib/systemd/systemd-journald` and its unit files,
/// copied unchanged) under the init, in a mount namespace of its own (a
/// tmpfs `/run`, `/var/log/journal` and `/dev`, so that nothing of the
/// host's journal or `/dev/log` is touched): a service whose output goes to
/// the journal keeps writing there across `initctl restart
/// systemd-journald.service`, because journald keeps each output stream in
/// its descriptor store and gets it back at its next start. Without the
/// store the stream ended with the old journald. Takes a few seconds.
#[test]
fn journald_keeps_a_services_output_across_its_restart() {
    let dir = TestDir::new();
    for f in [
        "systemd-journald.service",
        "systemd-journald.socket",
        "systemd-journald-dev-log.socket",
        "systemd-journald-audit.socket",
    ] {
        let text = std::fs::read_to_string(format!("/lib/systemd/system/{f}")).expect(f);
        dir.file(&format!("units/{f}"), &text);
    }
    let tag = format!("tick-{}", std::process::id());
    let counter = dir.join("n");
    dir.file(
        "units/tick.service",
        &format!(
            "[Unit]\nDefaultDependencies=no\nWants=systemd-journald.socket\n\
             After=systemd-journald.socket\n[Service]\nExecStart=/bin/sh -c 'i=0; while :; do \
             i=$((i+1)); echo {tag} $i; echo $i > {n}; sleep 0.05; done'\n",
            n = counter.display()
        ),
    );
    dir.unit(
        "default",
        "unit: default\ntype: virtual\ndepends-on: [systemd-journald.service, tick.service]\n",
    );
    let d = dir.path().display();
    let init = dir
        .init()
        .in_mount_namespace(&format!(
            "mount -t tmpfs -o mode=0755 tmpfs /run; \
             mount -t tmpfs -o mode=2755 tmpfs /var/log/journal; \
             mkdir {d}/host-dev; mount --rbind /dev {d}/host-dev; \
             mount -t tmpfs -o mode=0755 tmpfs /dev; \
             for n in null zero full random urandom kmsg tty; do \
             [ -e {d}/host-dev/$n ] || continue; touch /dev/$n; \
             mount --bind {d}/host-dev/$n /dev/$n; done"
        ))
        .target("default")
        .start();
    let journald = init.wait_state("systemd-journald.service", UnitState::Running);
    init.wait_state("tick.service", UnitState::Running);
    let journal = || {
        let mut cmd = std::process::Command::new("nsenter");
        cmd.arg("-t").arg(init.pid.to_string()).args([
            "-m",
            "--",
            "journalctl",
            "--no-pager",
            "-o",
            "cat",
        ]);
        flotilla_tests::init::run(cmd, std::time::Duration::from_secs(30))
            .stdout
            .clone()
    };
    let count = || -> u64 {
        std::fs::read_to_string(&counter)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0)
    };
    // The journal has the service's line `tag n` (polled: journalctl
    // is run each time; on a time-out, the unit's state and log).
    let await_line = |n: u64, what: &str| {
        let deadline = std::time::Instant::now() + 3 * WAIT;
        loop {
            let text = journal();
            if text.lines().any(|l| l == format!("{tag} {n}")) {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{what}: no `{tag} {n}` in the journal; tick.service {:?}, \
                 journald {:?}\n{}\n{}\njournal tail:\n{}",
                init.unit("tick.service").state,
                init.unit("systemd-journald.service").state,
                init.ctl(&["logs", "tick.service"]).stdout,
                init.ctl(&["logs", "systemd-journald.service"]).stdout,
                text.lines().rev().take(10).collect::<Vec<_>>().join("\n")
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    };
    let before = wait_for(WAIT, "tick to count", || Some(count()).filter(|&n| n > 2));
    await_line(before, "before the restart");

    init.ctl(&["restart", "systemd-journald.service"]).expect(0);
    let again = init.wait_unit("systemd-journald.service", "running again", |u| {
        u.state == UnitState::Running && u.pid.is_some() && u.pid != journald.pid
    });
    assert!(again.pid.is_some());
    // A line written after the new journald is up reaches it, over the
    // stream the old one had.
    let after = count() + 5;
    await_line(after, "after the restart");
    let tick = init.unit("tick.service");
    assert_eq!((tick.state, tick.restarts), (UnitState::Running, 0));
}
