//! Harness of the PID-1 and VM tests: the real `init` as PID 1 of a fresh
//! PID namespace (`unshare --pid --fork --mount-proc --kill-child`), its
//! console read line by line with the time each line arrived, processes
//! of a namespace read from the host's `/proc`, and qemu booting the image.
//! Every process a test starts is killed by PID when its guard drops.
//! Waiting is for an event (a console line, an exit) with a deadline.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long a wait may take before the test fails: it bounds a broken
/// test, a passing one never comes near it.
pub const WAIT: Duration = Duration::from_secs(20);

/// The directory holding the built binaries (`<target>/<profile>`).
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent()
        .and_then(Path::parent)
        .expect("profile dir")
        .to_path_buf()
}

/// Prints a figure (a timing) so that it shows in the test run's output
/// even when the test passes: written to the real stdout, past libtest's
/// capture of `println!`.
pub fn report(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// The binary `name` of `package`, built when it is missing.
pub fn bin(name: &str, package: &str) -> PathBuf {
    static BUILD: Mutex<()> = Mutex::new(());
    let p = bin_dir().join(name);
    let _guard = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    if !p.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let target = bin_dir().parent().expect("target dir").to_path_buf();
        let st = Command::new(cargo)
            .args(["build", "-p", package, "--bin", name, "--target-dir"])
            .arg(&target)
            .status()
            .expect("cargo build");
        assert!(st.success(), "building {name} failed");
    }
    p
}

/// The lines with their arrival times, and whether the stream ended.
type Shared = Arc<(Mutex<(Vec<(Instant, String)>, bool)>, Condvar)>;

/// Lines read from a stream, each with the time it arrived.
#[derive(Clone, Default)]
pub struct Lines {
    inner: Shared,
}

/// `line` without ANSI escape sequences and carriage returns.
pub fn plain(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                // CSI: ESC [ params final-byte; other escapes: one char.
                if chars.peek() == Some(&'[') {
                    chars.next();
                    for d in chars.by_ref() {
                        if ('@'..='~').contains(&d) {
                            break;
                        }
                    }
                } else {
                    chars.next();
                }
            }
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

impl Lines {
    /// Starts a thread that reads `r` into the list until EOF.
    pub fn follow(r: impl std::io::Read + Send + 'static, echo: &'static str) -> Lines {
        let lines = Lines::default();
        let l = lines.clone();
        std::thread::spawn(move || {
            let mut r = BufReader::new(r);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match r.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = plain(String::from_utf8_lossy(&buf).trim_end_matches('\n'));
                        eprintln!("{echo}{line}");
                        let (m, cv) = &*l.inner;
                        m.lock().unwrap().0.push((Instant::now(), line));
                        cv.notify_all();
                    }
                }
            }
            let (m, cv) = &*l.inner;
            m.lock().unwrap().1 = true;
            cv.notify_all();
        });
        lines
    }

    /// Every line so far.
    pub fn all(&self) -> Vec<String> {
        self.inner
            .0
            .lock()
            .unwrap()
            .0
            .iter()
            .map(|(_, l)| l.clone())
            .collect()
    }

    /// Every line so far, with its arrival time.
    pub fn timed(&self) -> Vec<(Instant, String)> {
        self.inner.0.lock().unwrap().0.clone()
    }

    /// Waits for a line containing `needle`; returns its arrival time.
    pub fn wait(&self, needle: &str, limit: Duration) -> Instant {
        let deadline = Instant::now() + limit;
        let (m, cv) = &*self.inner;
        let mut g = m.lock().unwrap();
        loop {
            if let Some((t, _)) = g.0.iter().find(|(_, l)| l.contains(needle)) {
                return *t;
            }
            let now = Instant::now();
            if now >= deadline || g.1 {
                let all: Vec<&String> = g.0.iter().map(|(_, l)| l).collect();
                panic!(
                    "no line with {needle:?} within {limit:?} (eof: {}); got:\n{all:#?}",
                    g.1
                );
            }
            g = cv.wait_timeout(g, deadline - now).unwrap().0;
        }
    }

    /// Waits until the stream has ended (at most `limit`).
    pub fn wait_eof(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        let (m, cv) = &*self.inner;
        let mut g = m.lock().unwrap();
        while !g.1 {
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            g = cv.wait_timeout(g, deadline - now).unwrap().0;
        }
    }

    /// The arrival time of the first line containing `needle`.
    pub fn time_of(&self, needle: &str) -> Option<Instant> {
        self.inner
            .0
            .lock()
            .unwrap()
            .0
            .iter()
            .find(|(_, l)| l.contains(needle))
            .map(|(t, _)| *t)
    }

    /// Asserts that lines containing each of `needles` appear in this
    /// order (each after the previous one's line).
    pub fn assert_order(&self, needles: &[&str]) {
        let all = self.all();
        let mut from = 0;
        for n in needles {
            match all.iter().skip(from).position(|l| l.contains(n)) {
                Some(i) => from += i + 1,
                None => panic!(
                    "{n:?} is missing after line {from} (or out of order); console:\n{all:#?}"
                ),
            }
        }
    }
}

/// `--control CONTROL ARGS`.
fn with_control<'a>(control: &'a Path, args: &[&'a str]) -> Vec<&'a str> {
    let mut full = vec!["--control", control.to_str().expect("UTF-8 path")];
    full.extend_from_slice(args);
    full
}

/// The `init` running as PID 1 of a new PID namespace (and mount
/// namespace, for its own /proc). Killed by PID on drop: `--kill-child`
/// makes the kernel SIGKILL the init when `unshare` dies, which ends the
/// whole namespace.
pub struct Pid1 {
    child: Child,
    /// The console (stdout and stderr).
    pub out: Lines,
    /// The init's standard input: a pipe, or a terminal's master side.
    stdin: Option<Box<dyn Write + Send>>,
    /// The control socket.
    pub control: PathBuf,
    /// The moment the init was started.
    pub started: Instant,
}

impl Pid1 {
    /// Starts `init ARGS` as PID 1; stdin is a pipe ([`Pid1::type_in`]).
    pub fn start(control: &Path, args: &[&str]) -> Pid1 {
        Pid1::start_env(control, args, &[])
    }

    /// [`Pid1::start`] with more environment variables.
    pub fn start_env(control: &Path, args: &[&str], env: &[(&str, &str)]) -> Pid1 {
        Pid1::start_binary(&bin("init", "flotilla-init"), control, args, env)
    }

    /// [`Pid1::start_env`] running the binary `init` (a copy a test may
    /// replace).
    pub fn start_binary(init: &Path, control: &Path, args: &[&str], env: &[(&str, &str)]) -> Pid1 {
        let full = with_control(control, args);
        Pid1::start_wrapped(&[], init, control, &full, env)
    }

    /// [`Pid1::start`] run by `wrapper`, a command that prepares the
    /// init's mount namespace and executes its arguments (`sh -c 'mount
    /// …; exec "$@"' sh`).
    pub fn start_under(wrapper: &[&str], control: &Path, args: &[&str]) -> Pid1 {
        let full = with_control(control, args);
        Pid1::start_wrapped(wrapper, &bin("init", "flotilla-init"), control, &full, &[])
    }

    /// The init as user `uid` (no passwd entry needed), as `podman run
    /// --user UID` starts it: no `--control`, so that it finds its socket
    /// itself; `control` is where the test expects it.
    pub fn start_as_user(uid: u32, control: &Path, args: &[&str]) -> Pid1 {
        let id = uid.to_string();
        let wrapper = [
            "setpriv",
            "--reuid",
            &id,
            "--regid",
            &id,
            "--clear-groups",
            "--",
        ];
        let init = bin("init", "flotilla-init");
        Pid1::start_wrapped(&wrapper, &init, control, args, &[])
    }

    /// [`Pid1::start_env`] with a terminal as its standard streams, the
    /// controlling terminal of its session, as `podman run -it` (runc)
    /// starts a container's process; [`Pid1::type_in`] types on it.
    pub fn start_on_terminal(control: &Path, args: &[&str], env: &[(&str, &str)]) -> Pid1 {
        let full = with_control(control, args);
        let init = bin("init", "flotilla-init");
        let (mut cmd, started) = Pid1::command(&[], &init, &full, env);
        let (master, slave) = open_pty();
        cmd.stdin(slave.try_clone().expect("dup pty"))
            .stdout(slave.try_clone().expect("dup pty"));
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("spawn unshare");
        drop(slave);
        let out = Lines::follow(master.try_clone().expect("dup pty"), "  | ");
        Pid1 {
            stdin: Some(Box::new(master)),
            child,
            out,
            control: control.to_path_buf(),
            started,
        }
    }

    /// `init ARGS` as PID 1 run by `wrapper` (a command that executes its
    /// arguments), with `env` added.
    fn start_wrapped(
        wrapper: &[&str],
        init: &Path,
        control: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Pid1 {
        let (mut cmd, started) = Pid1::command(wrapper, init, args, env);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn unshare");
        let out = Lines::follow(child.stdout.take().expect("stdout"), "  | ");
        Pid1 {
            stdin: child
                .stdin
                .take()
                .map(|s| Box::new(s) as Box<dyn Write + Send>),
            child,
            out,
            control: control.to_path_buf(),
            started,
        }
    }

    /// The command that runs `init ARGS` as PID 1 under `wrapper`, its
    /// standard streams left to the caller.
    fn command(
        wrapper: &[&str],
        init: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> (Command, Instant) {
        let _ = bin("initctl", "flotilla-ctl");
        // Beside the init, so that PID 1 serves systemd's D-Bus interface.
        let _ = bin("flotilla-busd", "flotilla-bus");
        // `sh -c 'exec "$@" 2>&1'`: stderr joins stdout (one console), and
        // the PID stays unshare's.
        // A /run of its own: as PID 1 the init serves systemd's D-Bus
        // interface, binding /run/systemd/private and making
        // /run/systemd/system/, which must not reach the host's /run.
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "exec \"$@\" 2>&1", "sh", "unshare"])
            .args(["--pid", "--fork", "--mount-proc", "--kill-child"])
            .args([
                "sh",
                "-c",
                "mount -t tmpfs -o mode=0755 tmpfs /run && exec \"$0\" \"$@\"",
            ])
            .args(wrapper)
            .arg(init)
            .args(args)
            .env_remove("INIT_CONTROL")
            .env_remove("XDG_RUNTIME_DIR")
            .envs(env.iter().copied());
        (cmd, Instant::now())
    }

    /// The `unshare` process's PID.
    pub fn unshare_pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// The init's PID as the host sees it (the child of `unshare`).
    pub fn host_pid(&self) -> i32 {
        let parent = self.unshare_pid();
        wait_for(WAIT, "the init process", || {
            all_pids().into_iter().find(|&p| ppid(p) == Some(parent))
        })
    }

    /// The init's PID namespace (`pid:[N]`).
    pub fn ns(&self) -> String {
        std::fs::read_link(format!("/proc/{}/ns/pid", self.host_pid()))
            .expect("ns link")
            .display()
            .to_string()
    }

    /// Writes `text` to the init's stdin (the emergency shell reads it).
    pub fn type_in(&mut self, text: &str) {
        let s = self.stdin.as_mut().expect("stdin");
        s.write_all(text.as_bytes()).expect("write stdin");
        s.flush().expect("flush stdin");
    }

    /// `program ARGS` in the init's mount and PID namespaces (its /run, its
    /// processes), as root.
    pub fn in_mounts(&self, program: &str, args: &[&str]) -> std::process::Output {
        Command::new("nsenter")
            .arg("-t")
            .arg(self.host_pid().to_string())
            .args(["-m", "-p", "--", program])
            .args(args)
            .env("SYSTEMD_COLORS", "0")
            .env("LC_ALL", "C")
            .output()
            .expect("nsenter")
    }

    /// Runs `initctl ARGS` against this init.
    pub fn ctl(&self, args: &[&str]) -> std::process::Output {
        Command::new(bin("initctl", "flotilla-ctl"))
            .arg("--control")
            .arg(&self.control)
            .args(args)
            .env("NO_COLOR", "1")
            .output()
            .expect("run initctl")
    }

    /// Sends `signal` to the init.
    pub fn signal(&self, signal: i32) {
        // SAFETY: kill(2) with a PID we own.
        unsafe { libc::kill(self.host_pid(), signal) };
    }

    /// Waits for `unshare` (and so the init) to exit; its status is the
    /// init's.
    pub fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let child = &mut self.child;
        let status = wait_for(limit, "the init to exit", || {
            child.try_wait().expect("try_wait")
        });
        // Its last lines may still be in the pipe, the reader behind on a
        // loaded machine: the console is whole once it ends.
        self.out.wait_eof(limit);
        status
    }
}

impl Drop for Pid1 {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the PID of our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// A new terminal: its master side and its slave side (neither the
/// caller's controlling terminal).
fn open_pty() -> (std::fs::File, std::fs::File) {
    use std::os::fd::FromRawFd;
    // SAFETY: plain calls on descriptors this function owns.
    unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(m >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
        let master = std::fs::File::from_raw_fd(m);
        assert!(libc::grantpt(m) == 0 && libc::unlockpt(m) == 0, "grantpt");
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(m, name.as_mut_ptr(), name.len()), 0);
        let s = libc::open(
            name.as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        assert!(s >= 0, "open the pty's slave");
        (master, std::fs::File::from_raw_fd(s))
    }
}

/// Calls `f` until it returns `Some`, looking again every 10 ms, for facts
/// that no event announces (a process's exit seen from outside); panics
/// after `limit`.
pub fn wait_for<T>(limit: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Every PID in the host's /proc.
pub fn all_pids() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Fields of /proc/PID/stat after the command: state, ppid.
fn stat(pid: i32) -> Option<(char, i32)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 2..];
    let mut f = rest.split(' ');
    let state = f.next()?.chars().next()?;
    let ppid = f.next()?.parse().ok()?;
    Some((state, ppid))
}

/// A process's parent.
pub fn ppid(pid: i32) -> Option<i32> {
    stat(pid).map(|s| s.1)
}

/// A process's command line, spaces between the words.
pub fn cmdline(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            String::from_utf8_lossy(&b)
                .split('\0')
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// The processes of PID namespace `ns` (host PIDs) with their state
/// letter (`Z` for a zombie).
pub fn procs_in(ns: &str) -> Vec<(i32, char)> {
    all_pids()
        .into_iter()
        .filter(|p| {
            std::fs::read_link(format!("/proc/{p}/ns/pid"))
                .is_ok_and(|l| l.display().to_string() == ns)
        })
        .filter_map(|p| stat(p).map(|(s, _)| (p, s)))
        .collect()
}

/// A temp dir with a `units` directory.
pub fn units_dir(units: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("flotilla-pid1-")
        .tempdir()
        .expect("tempdir");
    std::fs::create_dir(dir.path().join("units")).expect("units dir");
    for (name, yaml) in units {
        std::fs::write(dir.path().join("units").join(format!("{name}.yaml")), yaml)
            .expect("write unit");
    }
    dir
}
