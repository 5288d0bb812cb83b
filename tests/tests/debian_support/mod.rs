//! Harness of the Debian boot test: the image of `contrib/debian/build`
//! booted by `contrib/debian/run` under qemu, its serial console read as
//! it arrives (with the line still being written, for a prompt such as
//! `login: ` that ends no line) and written to (a login), ssh into the
//! guest through qemu's user-mode forward, qemu's monitor, and the disk's
//! file system examined from the host once qemu has exited. qemu is
//! killed by its PID when its guard drops, even when the test fails.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

// systemd's side of a comparison, recorded and kept, keyed by the image.
pub mod oracle;

/// What the console reader shares: finished lines with their arrival
/// times, the line being written (and when it began), and the end.
#[derive(Default)]
struct ConsoleState {
    lines: Vec<(Instant, String)>,
    partial: Vec<u8>,
    partial_since: Option<Instant>,
    eof: bool,
}

/// A serial console: every byte qemu writes, kept as lines.
#[derive(Clone, Default)]
pub struct Console {
    inner: Arc<(Mutex<ConsoleState>, Condvar)>,
}

impl Console {
    /// Starts a thread that reads `r` until EOF, echoing each finished line
    /// to stderr after `echo` and the seconds since the reader started
    /// (qemu's start: a console line's time on the host, to set beside the
    /// kernel's own stamps and across the inits).
    pub fn follow(mut r: impl Read + Send + 'static, echo: &'static str) -> Console {
        let console = Console::default();
        let c = console.clone();
        let start = Instant::now();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            loop {
                let n = match r.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                let now = Instant::now();
                let (m, cv) = &*c.inner;
                let mut st = m.lock().unwrap();
                for &b in &buf[..n] {
                    if st.partial.is_empty() {
                        st.partial_since = Some(now);
                    }
                    if b == b'\n' {
                        let line =
                            crate::pid1_support::plain(&String::from_utf8_lossy(&st.partial));
                        let since = st.partial_since.take().unwrap_or(now);
                        let at = since.duration_since(start).as_secs_f64();
                        eprintln!("{echo}{at:7.2} {line}");
                        st.lines.push((since, line));
                        st.partial.clear();
                    } else {
                        st.partial.push(b);
                    }
                }
                cv.notify_all();
            }
            let (m, cv) = &*c.inner;
            m.lock().unwrap().eof = true;
            cv.notify_all();
        });
        console
    }

    /// The line being written, cleaned of escapes.
    fn partial_of(st: &ConsoleState) -> String {
        crate::pid1_support::plain(&String::from_utf8_lossy(&st.partial))
    }

    /// Waits for `needle` in a line that arrived after line number `from`
    /// (or in the line being written); returns the line's number and the
    /// time its first byte arrived.
    pub fn wait_from(&self, from: usize, needle: &str, limit: Duration) -> (usize, Instant) {
        let deadline = Instant::now() + limit;
        let (m, cv) = &*self.inner;
        let mut st = m.lock().unwrap();
        loop {
            if let Some(i) = st
                .lines
                .iter()
                .skip(from)
                .position(|(_, l)| l.contains(needle))
            {
                return (from + i, st.lines[from + i].0);
            }
            if Console::partial_of(&st).contains(needle) {
                let t = st.partial_since.unwrap_or_else(Instant::now);
                return (st.lines.len(), t);
            }
            let now = Instant::now();
            if now >= deadline || st.eof {
                let tail: Vec<&String> = st
                    .lines
                    .iter()
                    .rev()
                    .take(40)
                    .rev()
                    .map(|(_, l)| l)
                    .collect();
                panic!(
                    "no console line with {needle:?} within {limit:?} (qemu exited: {}); last lines:\n{tail:#?}\npartial: {:?}",
                    st.eof,
                    Console::partial_of(&st)
                );
            }
            st = cv.wait_timeout(st, deadline - now).unwrap().0;
        }
    }

    /// Waits for `needle` anywhere on the console.
    pub fn wait(&self, needle: &str, limit: Duration) -> Instant {
        self.wait_from(0, needle, limit).1
    }

    /// Every finished line so far.
    pub fn all(&self) -> Vec<String> {
        let st = self.inner.0.lock().unwrap();
        st.lines.iter().map(|(_, l)| l.clone()).collect()
    }

    /// Waits until qemu closed the console (it exited).
    pub fn wait_eof(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        let (m, cv) = &*self.inner;
        let mut st = m.lock().unwrap();
        while !st.eof {
            let now = Instant::now();
            assert!(now < deadline, "the console did not end within {limit:?}");
            st = cv.wait_timeout(st, deadline - now).unwrap().0;
        }
    }
}

/// Which init the kernel starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Init {
    Flotilla,
    Systemd,
}

impl Init {
    /// `contrib/debian/run --init` value.
    pub fn name(self) -> &'static str {
        match self {
            Init::Flotilla => "flotilla",
            Init::Systemd => "systemd",
        }
    }

    /// The path in `init=`, as the kernel's hand-over line names it.
    pub fn path(self) -> &'static str {
        match self {
            Init::Flotilla => "/sbin/flotilla",
            Init::Systemd => "/lib/systemd/systemd",
        }
    }
}

/// The files of one test machine: a copy of the image's disks, the ssh
/// key, the root password.
pub struct Machine {
    pub image: PathBuf,
    pub dir: PathBuf,
    pub disk: PathBuf,
    pub swap: PathBuf,
    pub key: PathBuf,
    pub password: String,
}

/// A booted VM: qemu with its console, killed by PID on drop.
pub struct Vm {
    child: Child,
    stdin: Option<ChildStdin>,
    pub console: Console,
    pub started: Instant,
    pub ssh_port: u16,
    pub monitor: PathBuf,
    pub init: Init,
}

pub use flotilla_tests::free_port;

/// `contrib/debian/run`'s arguments that end its command line with the
/// kernel's `norandmaps`: no address-space randomization in the guest.
/// Under software emulation qemu keeps the code it translated keyed by
/// the guest's virtual address, so a program and its libraries mapped at
/// new random addresses at every exec are translated again at every exec:
/// in the systemd-tests guest `/bin/true` took 58 ms with randomization
/// and 21 ms without, a `systemctl daemon-reload` 4.3 s and 2.7 s
/// (docs/debian.md, "Address-space randomization"). The harnesses whose
/// guests run thousands of programs (systemd's tests, the daemons'
/// corpus) boot both inits with it; their records under systemd are of
/// boots with it (their `HARNESS`).
pub const NO_ASLR: &[&str] = &["--", "norandmaps"];

impl Vm {
    /// Boots `m`'s disk with `init`.
    pub fn boot(m: &Machine, init: Init) -> Vm {
        Vm::boot_with(m, init, &[])
    }

    /// [`Vm::boot`] with more of `contrib/debian/run`'s arguments (e.g.
    /// `--memory 2048`).
    pub fn boot_with(m: &Machine, init: Init, run_args: &[&str]) -> Vm {
        let ssh_port = free_port();
        let monitor = m.dir.join(format!("monitor-{}.sock", ssh_port));
        let _ = std::fs::remove_file(&monitor);
        let mut child = Command::new(crate::pid1_support::workspace().join("contrib/debian/run"))
            .args(["--init", init.name(), "--image"])
            .arg(&m.image)
            .arg("--disk")
            .arg(&m.disk)
            .arg("--swap")
            .arg(&m.swap)
            .args(["--ssh-port", &ssh_port.to_string(), "--monitor"])
            .arg(&monitor)
            .args(run_args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("run contrib/debian/run");
        let started = Instant::now();
        let console = Console::follow(child.stdout.take().expect("stdout"), "  vm| ");
        Vm {
            stdin: child.stdin.take(),
            child,
            console,
            started,
            ssh_port,
            monitor,
            init,
        }
    }

    /// Types `text` on the serial console.
    pub fn type_in(&mut self, text: &str) {
        let s = self.stdin.as_mut().expect("stdin");
        s.write_all(text.as_bytes()).expect("type on the console");
        s.flush().expect("flush the console");
    }

    /// Sends a command to qemu's monitor (e.g. `system_powerdown`).
    pub fn monitor(&self, command: &str) {
        let mut s =
            crate::pid1_support::wait_for(Duration::from_secs(10), "qemu's monitor", || {
                UnixStream::connect(&self.monitor).ok()
            });
        s.write_all(format!("{command}\n").as_bytes())
            .expect("write to the monitor");
        // The monitor echoes the command once it has read it.
        let mut seen = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        s.set_read_timeout(Some(Duration::from_secs(1))).ok();
        let mut buf = [0u8; 1024];
        while Instant::now() < deadline && !String::from_utf8_lossy(&seen).contains(command) {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
                Err(_) => {}
            }
        }
    }

    /// Waits for qemu to exit (the machine powered off: -no-reboot).
    pub fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let child = &mut self.child;
        let st = crate::pid1_support::wait_for(limit, "qemu to exit", || {
            child.try_wait().expect("try_wait")
        });
        self.console.wait_eof(Duration::from_secs(10));
        st
    }

    /// Waits for the guest's sshd to answer through the forward: the
    /// moment its banner (`SSH-2.0-…`) arrives. No event announces that
    /// from outside, so this probes. qemu accepts every connection on the
    /// host's side at once and only then connects to the guest, so what
    /// becomes of a probe shows only when it is read: while nothing
    /// listens in the guest it is closed without a banner (a new probe
    /// follows a second later); while the guest's network is not up, its
    /// SYN is lost and qemu sends it again only seconds later; once sshd
    /// took it, the banner follows when sshd has forked and re-executed
    /// itself, seconds in a loaded emulated machine. A probe is therefore
    /// never cut short before 30 s (cutting an accepted one short would
    /// only start another sshd, and under load none would ever answer),
    /// and a new one starts every second while fewer than six are open, so
    /// that a probe made after the network came up is never more than a
    /// second away. Six stays below the ten unauthenticated connections at
    /// which sshd starts refusing (`MaxStartups`).
    pub fn wait_sshd(&self, limit: Duration) -> Instant {
        const EVERY: Duration = Duration::from_secs(1);
        const KEEP: Duration = Duration::from_secs(30);
        const MOST: usize = 6;
        let deadline = Instant::now() + limit;
        let mut probes: Vec<(Instant, TcpStream)> = Vec::new();
        let mut next = Instant::now();
        loop {
            let now = Instant::now();
            if now >= next && probes.len() < MOST {
                if let Ok(s) = TcpStream::connect(("127.0.0.1", self.ssh_port)) {
                    if s.set_nonblocking(true).is_ok() {
                        probes.push((now, s));
                    }
                }
                next = now + EVERY;
            }
            let mut buf = [0u8; 64];
            let mut answered = false;
            probes.retain_mut(|(since, s)| match s.read(&mut buf) {
                Ok(n) if n > 0 => {
                    answered |= buf.starts_with(b"SSH-");
                    false
                }
                Ok(_) => false,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => since.elapsed() < KEEP,
                Err(_) => false,
            });
            if answered {
                return Instant::now();
            }
            assert!(
                now < deadline,
                "sshd did not answer on port {} within {limit:?}",
                self.ssh_port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Runs `command` in the guest over ssh as root. A connection that
    /// sshd closes before the key exchange (it refuses some while many
    /// are starting, `MaxStartups`; the probes of [`Vm::wait_sshd`] may
    /// still be finishing) is tried again, up to five times. A guest that
    /// stops answering (one of systemd's tests that hangs or powers off the
    /// machine) ends the connection after five minutes of silence
    /// (`ServerAliveInterval`), where ssh would wait for ever.
    pub fn ssh(&self, m: &Machine, command: &str) -> Output {
        let mut out = self.ssh_once(m, command);
        for _ in 0..4 {
            let refused = out.status.code() == Some(255)
                && String::from_utf8_lossy(&out.stderr).contains("kex_exchange_identification");
            if !refused {
                break;
            }
            std::thread::sleep(Duration::from_secs(1));
            out = self.ssh_once(m, command);
        }
        out
    }

    fn ssh_once(&self, m: &Machine, command: &str) -> Output {
        self.to_guest(m, "ssh", "-p")
            .args(["-o", "ConnectTimeout=20", "-o", "ServerAliveInterval=30"])
            .args(["-o", "ServerAliveCountMax=10", "root@127.0.0.1", command])
            .output()
            .expect("run ssh")
    }

    /// `program` (ssh or scp, whose port flags differ) with the test's key
    /// and the guest's forwarded port, asking nothing.
    fn to_guest(&self, m: &Machine, program: &str, port_flag: &str) -> Command {
        let mut c = Command::new(program);
        c.arg("-i")
            .arg(&m.key)
            .args([port_flag, &self.ssh_port.to_string()])
            .args([
                "-o",
                "StrictHostKeyChecking=no",
                "-o",
                "UserKnownHostsFile=/dev/null",
                "-o",
                "BatchMode=yes",
                "-o",
                "LogLevel=ERROR",
            ])
            .stdin(Stdio::null());
        c
    }

    /// Copies `files` into the guest's directory `dir` (made if missing)
    /// over ssh, asserting success.
    pub fn copy_in(&self, m: &Machine, files: &[PathBuf], dir: &str) {
        self.ssh_ok(m, &format!("mkdir -p {dir}"));
        let out = self
            .to_guest(m, "scp", "-P")
            .args(files)
            .arg(format!("root@127.0.0.1:{dir}/"))
            .output()
            .expect("run scp");
        assert!(
            out.status.success(),
            "scp {files:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// [`Vm::ssh`], asserting success; its stdout.
    pub fn ssh_ok(&self, m: &Machine, command: &str) -> String {
        let out = self.ssh(m, command);
        assert!(
            out.status.success(),
            "ssh {command:?}: {}\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Vm {
    fn drop(&mut self) {
        // run execs qemu: the child's PID is qemu's.
        // SAFETY: kill(2) on our own child's PID.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// Runs a host command; its status and both outputs as text.
pub fn host(cmd: &mut Command) -> (bool, String) {
    let out = cmd.output().expect("run a host command");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The root file system of `disk` as e2fsprogs name it: partition 1 of
/// the disk's GPT, at its offset (`DISK?offset=BYTES`, an io option of
/// their file names), read from `sfdisk -d`.
pub fn root_fs(disk: &Path) -> PathBuf {
    let (ok, table) = host(Command::new("sfdisk").arg("-d").arg(disk));
    assert!(ok, "sfdisk -d {}: {table}", disk.display());
    let start: u64 = table
        .lines()
        .find(|l| l.contains(" : start="))
        .and_then(|l| l.split("start=").nth(1))
        .and_then(|r| r.split(',').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no partition 1 in {}: {table}", disk.display()));
    PathBuf::from(format!("{}?offset={}", disk.display(), start * 512))
}

/// The root file system of `disk` as the host sees it once qemu exited:
/// the superblock's state (`clean` after an unmount or a read-only
/// remount) and a forced read-only check (`e2fsck -fn`: exit 0 when there
/// is nothing to fix).
pub fn fs_state(disk: &Path) -> (String, bool, String) {
    let fs = root_fs(disk);
    let (_, header) = host(Command::new("dumpe2fs").arg("-h").arg(&fs));
    let state = header
        .lines()
        .find_map(|l| l.strip_prefix("Filesystem state:"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let (ok, check) = host(Command::new("e2fsck").arg("-fn").arg(&fs));
    (state, ok, check)
}

/// Bounds a broken boot; a working one takes a fraction of it.
pub const BOOT: Duration = Duration::from_secs(300);
/// Bounds a shutdown.
pub const SHUTDOWN: Duration = Duration::from_secs(120);
/// Builds (or finds cached) the image of `suite` (`bookworm`, `trixie`);
/// its directory.
pub fn build_image(suite: &str) -> PathBuf {
    build_image_with(suite, None)
}

/// [`build_image`], of the flavour `with` (`contrib/debian/build --with`,
/// e.g. `systemd-tests`) when given.
pub fn build_image_with(suite: &str, with: Option<&str>) -> PathBuf {
    let target = crate::pid1_support::bin_dir()
        .parent()
        .expect("target dir")
        .to_path_buf();
    let t = Instant::now();
    let out = Command::new(crate::pid1_support::workspace().join("contrib/debian/build"))
        .args(["--suite", suite, "--cache"])
        .arg(target.join("debian"))
        .args(with.map(|w| ["--with", w]).into_iter().flatten())
        // The musl build of contrib/image's test: the same binaries, and
        // not the lock of the build that runs this test.
        .env("CARGO_TARGET_DIR", target.join("image-build"))
        .stderr(std::process::Stdio::inherit())
        .output()
        .expect("run contrib/debian/build");
    let text = String::from_utf8_lossy(&out.stdout);
    eprint!("{text}");
    assert!(out.status.success(), "contrib/debian/build failed");
    let dir = PathBuf::from(text.lines().last().expect("the image's directory").trim());
    crate::pid1_support::report(&format!(
        "debian {suite}: image ready in {:.1} s: {}",
        t.elapsed().as_secs_f64(),
        dir.display()
    ));
    dir
}

/// A copy of the image's disks with the test's ssh key and a password.
pub fn machine(image: PathBuf, dir: &Path) -> Machine {
    let disk = dir.join("disk.raw");
    let swap = dir.join("swap.raw");
    for (from, to) in [("disk.raw", &disk), ("swap.raw", &swap)] {
        let (ok, text) = host(
            Command::new("cp")
                .arg("--sparse=always")
                .arg(image.join(from))
                .arg(to),
        );
        assert!(ok, "copy {from}: {text}");
    }
    let key = dir.join("id_ed25519");
    let (ok, text) = host(
        Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", "flotilla-test", "-f"])
            .arg(&key),
    );
    assert!(ok, "ssh-keygen: {text}");
    let mut rand = [0u8; 9];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut rand))
        .expect("read /dev/urandom");
    let password: String = rand.iter().map(|b| format!("{b:02x}")).collect();
    let (ok, text) = host(
        Command::new(crate::pid1_support::workspace().join("contrib/debian/personalize"))
            .arg(&disk)
            .arg("--ssh-key")
            .arg(key.with_extension("pub"))
            .args(["--root-password", &password]),
    );
    assert!(ok, "personalize: {text}");
    Machine {
        image,
        dir: dir.to_path_buf(),
        disk,
        swap,
        key,
        password,
    }
}

/// When the boot reached its milestones, from qemu's start.
pub struct Timing {
    pub init: Init,
    pub label: &'static str,
    pub handover: Duration,
    pub prompt: Duration,
    pub sshd: Duration,
}

impl Timing {
    pub fn line(&self) -> String {
        let s = |d: Duration| format!("{:>12}", format!("{:.2} s", d.as_secs_f64()));
        format!(
            "  {:<24}{}  {}  {}",
            format!("{} ({})", self.init.name(), self.label),
            s(self.handover),
            s(self.prompt - self.handover),
            s(self.sshd - self.handover),
        )
    }
}

/// systemd's boot settled: `systemctl is-system-running --wait` said
/// `running` (`running`: its output) and `systemctl --failed` listed no
/// unit (`failed`).
pub fn assert_systemd_settled(running: &str, failed: &str) {
    assert_eq!(running.trim(), "running", "systemd: {failed}");
    assert!(failed.trim().is_empty(), "systemd: failed units: {failed}");
}

/// agetty's prompt (`flotilla-debian login: `, no line end). The kernel's
/// own messages may land in the middle of it (`flotilla-debian[  20.7]
/// SCSI …` then ` login: `): its end is what is looked for.
pub const PROMPT: &str = " login: ";

/// Waits for the kernel's hand-over, the login prompt and sshd; the times.
pub fn boot_to_login(vm: &Vm, label: &'static str) -> Timing {
    let handover = vm
        .console
        .wait(&format!("Run {} as init process", vm.init.path()), BOOT);
    let prompt = vm.console.wait(PROMPT, BOOT);
    let sshd = vm.wait_sshd(BOOT);
    Timing {
        init: vm.init,
        label,
        handover: handover - vm.started,
        prompt: prompt - vm.started,
        sshd: sshd - vm.started,
    }
}

/// Marks where one command's output ends in a combined ssh call.
pub const SPLIT: &str = "\n==flotilla-test==\n";

/// Runs `commands` in one ssh session (each costs seconds in an emulated
/// machine); each one's stdout.
pub fn ssh_each(vm: &Vm, m: &Machine, commands: &[&str]) -> Vec<String> {
    let script = commands.join(&format!("; printf '{}'; ", SPLIT.replace('\n', "\\n")));
    let out = vm.ssh_ok(m, &script);
    let parts: Vec<String> = out.split(SPLIT).map(str::to_string).collect();
    assert_eq!(parts.len(), commands.len(), "{out}");
    parts
}

/// Bounds flotilla's shutdown, from the request to qemu's exit: a unit
/// that waits for its stop timeout (90 s by default) fails the test; a
/// shutdown takes seconds.
pub const FLOTILLA_SHUTDOWN: Duration = Duration::from_secs(60);

/// qemu exits on its own (the machine powered off); the console shows the
/// orderly end; the root file system is clean. Prints how long the
/// shutdown took (from the call, made once the request is sent, to qemu's
/// exit); under flotilla it must end within [`FLOTILLA_SHUTDOWN`].
pub fn assert_clean_poweroff(vm: &mut Vm, m: &Machine, how: &str) {
    assert_clean_end(vm, m, how, End::Poweroff);
}

/// How a machine ends: powered off, or rebooted. qemu runs with
/// `-no-reboot` (contrib/debian/run), so a reboot ends qemu too: the
/// guest went through its whole reboot (the kernel's `reboot: Restarting
/// system`), and the test boots the disk again with [`Vm::boot`], which
/// lets the host check the file system in between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Poweroff,
    Reboot,
}

/// [`assert_clean_poweroff`], for either end.
pub fn assert_clean_end(vm: &mut Vm, m: &Machine, how: &str, end: End) {
    let (kernel, kind, verb) = match end {
        End::Poweroff => ("reboot: Power down", "poweroff", "powering off"),
        End::Reboot => ("reboot: Restarting system", "reboot", "rebooting"),
    };
    let asked = Instant::now();
    let st = vm.wait_exit(SHUTDOWN);
    let took = asked.elapsed();
    assert!(st.success(), "qemu after {how}: {st:?}");
    let all = vm.console.all();
    for bad in ["Kernel panic", "EMERGENCY", "internal error"] {
        assert!(
            !all.iter().any(|l| l.contains(bad)),
            "{bad:?} on the console after {how}"
        );
    }
    assert!(
        all.iter().any(|l| l.contains(kernel)),
        "no {kernel:?} on the console after {how}"
    );
    if vm.init == Init::Flotilla {
        // The units debian_boot's pressure.rs makes fail on purpose
        // (OOM-killed) are the only failures allowed.
        assert!(
            !all.iter()
                .any(|l| l.contains("[FAILED]") && !l.contains("[FAILED] pressure-")),
            "a unit failed ([FAILED] on the console) by {how}"
        );
        for line in [
            &format!("init: requested: stopping every unit ({kind})"),
            "init: every unit stopped",
            "init: remounted / read-only",
            &format!("init: {verb}"),
        ] {
            assert!(
                all.iter().any(|l| l.contains(line)),
                "{line:?} missing on the console after {how}"
            );
        }
    }
    let (state, ok, check) = fs_state(&m.disk);
    assert_eq!(state, "clean", "root file system after {how}: {check}");
    assert!(ok, "e2fsck -fn after {how}: {check}");
    crate::pid1_support::report(&format!(
        "debian: {} ended by {how}, clean, shut down in {:.1} s, after {:.1} s of qemu",
        vm.init.name(),
        took.as_secs_f64(),
        vm.started.elapsed().as_secs_f64()
    ));
    if vm.init == Init::Flotilla {
        assert!(
            took < FLOTILLA_SHUTDOWN,
            "flotilla's shutdown by {how} took {took:?}: a unit waited for its stop timeout"
        );
    }
}

/// A time as `initctl analyze blame` prints it (`75ms`, `7.367s`, `1min
/// 2.345s`: its words), in milliseconds.
pub fn blame_ms(words: &[&str]) -> Option<f64> {
    let mut total = 0.0;
    for w in words {
        let (n, unit) = w
            .find(|c: char| c.is_ascii_alphabetic())
            .map(|i| w.split_at(i))?;
        let n: f64 = n.parse().ok()?;
        total += n * match unit {
            "ms" => 1.0,
            "s" => 1000.0,
            "min" => 60_000.0,
            "h" => 3_600_000.0,
            _ => return None,
        };
    }
    Some(total)
}

/// The time after `@` on the line of `unit` in a critical chain
/// (`multi-user.target @43.895s`, as `initctl analyze critical-chain` and
/// `systemd-analyze critical-chain` print it), in ms.
pub fn reached_ms(chain: &str, unit: &str) -> f64 {
    chain
        .lines()
        .map(|l| l.trim_start_matches(|c: char| !c.is_ascii_alphanumeric()))
        .find(|l| l.starts_with(&format!("{unit} @")))
        .and_then(|l| l.split_once('@'))
        .and_then(|(_, rest)| {
            let words: Vec<&str> = rest
                .split_whitespace()
                .take_while(|w| !w.starts_with('+') && !w.starts_with('('))
                .collect();
            blame_ms(&words)
        })
        .unwrap_or_else(|| panic!("no {unit} @TIME in:\n{chain}"))
}

/// PID 1's `VmRSS:` line of `/proc/1/status`, in KiB.
pub fn rss_kib(status: &str) -> u64 {
    status
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("VmRSS of PID 1: {status:?}"))
}

/// The median of `v` (the mean of the middle two for an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Asserts `initctl status --json`'s `degraded` (`json` its text): the
/// boot's target is the image's `default.target`, `graphical.target`,
/// which wants `display-manager.service` (ordered after it), a unit this
/// image has not. Under flotilla's contract (docs/contract.md §4) a
/// `waits-for` no unit provides makes the unit `degraded`; that is the
/// one degraded unit, and no unit provides the display manager. systemd
/// shows nothing of it (`is-system-running` counts failed units, as
/// flotilla-busd's `SystemState` does: both say `running`).
pub fn assert_degraded_by_display_manager_only(v: &serde_json::Value, json: &str) {
    let units = v["units"].as_array().expect("units");
    let degraded: Vec<&str> = units
        .iter()
        .filter(|u| u["degraded"] == true)
        .filter_map(|u| u["unit"].as_str())
        .collect();
    assert_eq!(degraded, ["graphical.target"], "degraded units: {json}");
    assert_eq!(v["degraded"], true, "{json}");
    let dm = units.iter().find(|u| {
        u["provides"]
            .as_array()
            .is_some_and(|p| p.iter().any(|n| n == "display-manager.service"))
    });
    assert!(
        dm.is_none(),
        "a unit provides display-manager.service: {dm:?}"
    );
}
