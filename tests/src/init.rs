//! The real `init` in a temp dir, and `initctl` as a subprocess.
//!
//! [`TestDir`] is a fresh directory per test with `units/` and `logs/` in it
//! (unique, so tests run in parallel). [`TestDir::start`] runs
//! `init --units DIR --control SOCK --log-dir DIR --target T` in it, its
//! stdout and stderr in `init.out`, and returns an [`Init`] guard: dropping
//! it kills the init, its descendants and every process carrying the test's
//! marker, even when the test fails.
//!
//! [`Init::wait`] awaits a condition on the init's state without sleeping:
//! on one connection it subscribes, then asks for the status; each change the
//! init reports triggers a fresh status, until the condition holds or the
//! deadline ([`crate::WAIT`]) passes. Requests on one connection are answered
//! in order, so no change between the subscription and a status reply can
//! be missed.

use crate::control::{Client, RecvError};
use crate::procs;
use flotilla_units::protocol::{Reply, Request, SystemStatus, UnitStatus};
use flotilla_units::state::UnitState;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A temp dir for one test: `units/`, `logs/`, the control socket.
pub struct TestDir {
    tmp: Option<tempfile::TempDir>,
    root: PathBuf,
    /// The marker every process of this test carries ([`procs::MARK_VAR`]).
    pub mark: String,
}

impl Default for TestDir {
    fn default() -> Self {
        TestDir::new()
    }
}

impl TestDir {
    /// A fresh directory (mode 0755, so that units running as `nobody` can
    /// read their scripts), removed at the end unless `FLOTILLA_KEEP` is set.
    pub fn new() -> TestDir {
        TestDir::new_in(&std::env::temp_dir())
    }

    /// [`TestDir::new`] under `parent`: under `/run` for a unit with
    /// `PrivateTmp=`, whose private `/tmp` would hide the init's notify
    /// socket in a directory under `/tmp`.
    pub fn new_in(parent: &Path) -> TestDir {
        let tmp = tempfile::Builder::new()
            .prefix("flotilla-sys-")
            .tempdir_in(parent)
            .expect("tempdir");
        let root = tmp.path().to_path_buf();
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        std::fs::create_dir(root.join("units")).expect("units dir");
        let mark = root.to_string_lossy().into_owned();
        let tmp = if std::env::var_os("FLOTILLA_KEEP").is_some() {
            let _ = tmp.keep();
            None
        } else {
            Some(tmp)
        };
        TestDir { tmp, root, mark }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// A path inside the directory.
    pub fn join(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// The units directory.
    pub fn units(&self) -> PathBuf {
        self.root.join("units")
    }

    /// The log directory given to the init.
    pub fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }

    /// The control socket's path.
    pub fn control(&self) -> PathBuf {
        self.root.join("control.sock")
    }

    /// Writes `units/NAME.yaml`.
    pub fn unit(&self, name: &str, yaml: &str) -> PathBuf {
        let p = self.units().join(format!("{name}.yaml"));
        std::fs::write(&p, yaml).expect("write unit");
        p
    }

    /// Writes the log writer's unit, `flotilla-logd` (providing
    /// `log-writer`, restarted 100 ms after it exits) with `flags`
    /// (`--max-size 4K`); a target that wants the files waits for it.
    pub fn log_writer(&self, flags: &str) -> PathBuf {
        self.unit(
            "flotilla-logd",
            &format!(
                "unit: flotilla-logd\nprovides: log-writer\nexec-start: {} {flags}\n\
                 restart: always\nrestart-delay: 100ms\n",
                crate::bins::logd().display()
            ),
        )
    }

    /// The lines of a unit's log files (`logs/UNIT.log` and its rotated
    /// files, oldest first): `(number, text)`, headers as `(0, "-- log
    /// STREAM --")`.
    pub fn log_file_lines(&self, unit: &str) -> Vec<(u64, String)> {
        log_file_lines_in(&self.logs(), unit)
    }

    /// Removes `units/NAME.yaml`.
    pub fn remove_unit(&self, name: &str) {
        std::fs::remove_file(self.units().join(format!("{name}.yaml"))).expect("remove unit");
    }

    /// A copy of the built init in the directory (`init-copy`), for a
    /// test that re-executes the init or replaces its binary.
    pub fn init_copy(&self) -> PathBuf {
        let copy = self.join("init-copy");
        crate::bins::install(&crate::bins::init(), &copy, 0o755);
        copy
    }

    /// Writes a file (relative to the directory) and returns its path.
    pub fn file(&self, rel: &str, content: &str) -> PathBuf {
        let p = self.root.join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::write(&p, content).expect("write file");
        p
    }

    /// Writes an executable `/bin/sh` script and returns its path.
    pub fn script(&self, rel: &str, body: &str) -> PathBuf {
        let p = self.file(rel, &format!("#!/bin/sh\n{body}\n"));
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        p
    }

    /// A file's text, or "" when it does not exist.
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap_or_default()
    }

    /// A file's lines (none when it does not exist).
    pub fn lines(&self, rel: &str) -> Vec<String> {
        self.read(rel).lines().map(str::to_string).collect()
    }

    /// Starts the init for `target` with the usual flags.
    pub fn start(&self, target: &str) -> Init {
        self.init().target(target).start()
    }

    /// A builder for an init with other flags.
    pub fn init(&self) -> InitBuilder<'_> {
        InitBuilder {
            dir: self,
            target: Some("default".to_string()),
            config: None,
            log_dir: None,
            as_nobody: false,
            mount_setup: None,
            more_units: Vec::new(),
            binary: None,
            env: Vec::new(),
            may_end: false,
        }
    }

    /// Runs `init` with exactly `args` (for `--check` and bad flags) and
    /// waits for it to end.
    pub fn run_init(&self, args: &[&str]) -> Out {
        let mut cmd = Command::new(crate::bins::init());
        cmd.args(args)
            .current_dir(&self.root)
            .env(procs::MARK_VAR, &self.mark)
            .env_remove("NOTIFY_SOCKET")
            .env_remove("INIT_CONTROL");
        run(cmd, Duration::from_secs(10))
    }

    /// Runs `initctl --control SOCK ARGS...`.
    pub fn ctl(&self, args: &[&str]) -> Out {
        let mut cmd = Command::new(crate::bins::initctl());
        cmd.arg("--control").arg(self.control()).args(args);
        cmd.env("NO_COLOR", "1");
        run(cmd, Duration::from_secs(15))
    }

    /// Runs `initctl` as `systemctl` (a link named so in the test's
    /// `bin/`), talking to the test's init through `$INIT_CONTROL`.
    pub fn systemctl(&self, args: &[&str]) -> Out {
        let link = self.join("bin/systemctl");
        if !link.exists() {
            std::fs::create_dir_all(self.join("bin")).expect("bin");
            std::os::unix::fs::symlink(crate::bins::initctl(), &link).expect("link");
        }
        let mut cmd = Command::new(&link);
        cmd.args(args).env("INIT_CONTROL", self.control());
        cmd.env("NO_COLOR", "1");
        run(cmd, Duration::from_secs(30))
    }

    /// Runs `initctl --control SOCK ARGS...` as the user `nobody`.
    pub fn ctl_as_nobody(&self, args: &[&str]) -> Out {
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
            .arg(crate::bins::initctl())
            .arg("--control")
            .arg(self.control())
            .args(args);
        cmd.env("NO_COLOR", "1");
        run(cmd, Duration::from_secs(15))
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        procs::kill_marked(&self.mark);
        drop(self.tmp.take());
    }
}

/// What a subprocess did.
#[derive(Debug, Clone)]
pub struct Out {
    /// The exit status (128 + N when killed by signal N).
    pub code: i32,
    /// Its stdout.
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
}

/// Copies `from` to `to` as it is (`cp -a`: links stay links), e.g. this
/// machine's `/lib/systemd/system` into a test's directory.
pub fn copy_tree(from: &str, to: &Path) {
    let st = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .expect("cp");
    assert!(st.success(), "cp -a {from} {}", to.display());
}

impl Out {
    /// The units `init --check`'s output says `target` requires.
    #[track_caller]
    pub fn required(&self, target: &str) -> Vec<String> {
        let head = format!("target {target} requires ");
        let line = self
            .stdout
            .lines()
            .find(|l| l.starts_with(&head))
            .unwrap_or_else(|| panic!("no required set in {}", self.stdout));
        let (_, names) = line.split_once(": ").unwrap_or(("", ""));
        names.split_whitespace().map(str::to_string).collect()
    }

    /// Panics unless the exit status is `code`.
    #[track_caller]
    pub fn expect(&self, code: i32) -> &Out {
        assert_eq!(self.code, code, "unexpected exit status: {self:#?}");
        self
    }
}

/// Runs `cmd` to its end (killed after `limit`), capturing its output.
pub fn run(mut cmd: Command, limit: Duration) -> Out {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    run_child(child, limit)
}

/// Waits for a child started with piped output to end (killed after
/// `limit`), capturing what is left of its output.
pub fn run_child(child: Child, limit: Duration) -> Out {
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(limit) {
        Ok(r) => r.expect("wait for the subprocess"),
        Err(_) => {
            procs::signal(pid, libc::SIGKILL);
            panic!("process {pid} did not end within {limit:?}");
        }
    };
    Out {
        code: exit_code(out.status),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn exit_code(st: ExitStatus) -> i32 {
    st.code()
        .unwrap_or_else(|| 128 + st.signal().unwrap_or_default())
}

/// How an init is started.
pub struct InitBuilder<'a> {
    dir: &'a TestDir,
    target: Option<String>,
    config: Option<PathBuf>,
    /// `--log-dir`: by default only when the test wrote a log writer's
    /// unit (with a log directory alone the init runs a writer of its
    /// own, one more process in every test).
    log_dir: Option<bool>,
    as_nobody: bool,
    mount_setup: Option<String>,
    more_units: Vec<PathBuf>,
    binary: Option<PathBuf>,
    env: Vec<(String, String)>,
    /// The init may be done before its control socket is reached (a
    /// target that shuts the system down at once).
    may_end: bool,
}

impl InitBuilder<'_> {
    /// The init may have ended by the time it would answer: `start`
    /// returns it then, its exit status kept, rather than failing.
    pub fn may_end_at_once(mut self) -> Self {
        self.may_end = true;
        self
    }

    /// Sets `key=value` in the init's environment.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    /// Runs the init in a mount namespace of its own (`unshare --mount`),
    /// after the shell commands `setup` (e.g. a small tmpfs on the log
    /// directory): what it mounts is seen by the init and its units only.
    /// The init keeps the PID of the `unshare` started here.
    pub fn in_mount_namespace(mut self, setup: &str) -> Self {
        self.mount_setup = Some(setup.to_string());
        self
    }

    /// Another `--units DIR` after the test's units directory (the unit
    /// search path).
    pub fn more_units(mut self, dir: PathBuf) -> Self {
        self.more_units.push(dir);
        self
    }

    /// Runs `binary` (a copy of the init, which a test may replace)
    /// instead of the built `init`.
    pub fn binary(mut self, binary: PathBuf) -> Self {
        self.binary = Some(binary);
        self
    }

    /// `--target NAME`.
    pub fn target(mut self, t: &str) -> Self {
        self.target = Some(t.to_string());
        self
    }

    /// No `--target` (the config's `default-target`, else `default`).
    pub fn no_target(mut self) -> Self {
        self.target = None;
        self
    }

    /// `--config FILE`.
    pub fn config(mut self, path: PathBuf) -> Self {
        self.config = Some(path);
        self
    }

    /// No `--log-dir`.
    pub fn no_log_dir(mut self) -> Self {
        self.log_dir = Some(false);
        self
    }

    /// `--log-dir` (the test's `logs/`), with or without a writer's unit.
    pub fn log_dir(mut self) -> Self {
        self.log_dir = Some(true);
        self
    }

    /// Runs the init as `nobody`/`nogroup` (a supervisor for one user);
    /// the test dir is handed to `nobody` so that it can make its socket
    /// and logs there.
    pub fn as_nobody(mut self) -> Self {
        self.as_nobody = true;
        self
    }

    /// Starts the init and waits until its control socket answers.
    pub fn start(self) -> Init {
        let d = self.dir;
        let out_path = d.join("init.out");
        let out = std::fs::File::create(&out_path).expect("init.out");
        let init = self.binary.clone().unwrap_or_else(crate::bins::init);
        let mut cmd = if let Some(setup) = &self.mount_setup {
            let mut c = Command::new("unshare");
            c.args(["--mount", "--propagation", "private", "sh", "-c"])
                .arg(format!("set -e; {setup}; exec \"$0\" \"$@\""))
                .arg(&init);
            c
        } else if self.as_nobody {
            std::os::unix::fs::chown(d.path(), Some(65534), Some(65534)).expect("chown");
            let mut c = Command::new("setpriv");
            c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
                .arg(&init);
            c
        } else {
            Command::new(&init)
        };
        cmd.arg("--units")
            .arg(d.units())
            .arg("--control")
            .arg(d.control());
        for dir in &self.more_units {
            cmd.arg("--units").arg(dir);
        }
        let wrote_writer = d.units().join("flotilla-logd.yaml").exists();
        if self.log_dir.unwrap_or(wrote_writer) {
            cmd.arg("--log-dir").arg(d.logs());
        }
        if let Some(t) = &self.target {
            cmd.arg("--target").arg(t);
        }
        if let Some(c) = &self.config {
            cmd.arg("--config").arg(c);
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd.current_dir(d.path())
            .env(procs::MARK_VAR, &d.mark)
            .env_remove("NOTIFY_SOCKET")
            .env_remove("INIT_CONTROL")
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("dup"))
            .stderr(out)
            .process_group(0);
        let child = cmd.spawn().expect("start init");
        let mut init = Init {
            pid: child.id() as i32,
            child: Some(child),
            control: d.control(),
            out_path,
            mark: d.mark.clone(),
            status: None,
        };
        let deadline = Instant::now() + crate::WAIT;
        loop {
            if let Some(st) = init.try_exit() {
                if self.may_end {
                    return init;
                }
                panic!("init exited at start ({st:?}):\n{}", init.output());
            }
            if Client::connect(&init.control).is_ok() {
                return init;
            }
            if Instant::now() > deadline {
                panic!("init's control socket never answered:\n{}", init.output());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// The lines of a unit's log files in the log directory `logs` (see
/// [`TestDir::log_file_lines`]).
pub fn log_file_lines_in(logs: &Path, unit: &str) -> Vec<(u64, String)> {
    let mut files = Vec::new();
    for n in 1.. {
        let p = logs.join(format!("{unit}.log.{n}"));
        if !p.exists() {
            break;
        }
        files.push(p);
    }
    files.reverse();
    files.push(logs.join(format!("{unit}.log")));
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        for l in text.lines() {
            match flotilla_logd::format::parse(l) {
                flotilla_logd::format::FileLine::Entry(e) => {
                    out.push((e.seq.unwrap_or(0), e.text.to_string()))
                }
                flotilla_logd::format::FileLine::Header { stream, .. } => {
                    out.push((0, format!("-- log {stream} --")))
                }
                flotilla_logd::format::FileLine::Other(o) => out.push((0, o.to_string())),
            }
        }
    }
    out
}

/// A running init, killed (with everything it started) on drop.
pub struct Init {
    child: Option<Child>,
    /// Its PID.
    pub pid: i32,
    /// Its control socket.
    pub control: PathBuf,
    out_path: PathBuf,
    mark: String,
    status: Option<i32>,
}

impl Init {
    /// A new connection to the control socket.
    pub fn client(&self) -> Client {
        Client::connect(&self.control).unwrap_or_else(|e| {
            panic!(
                "cannot connect to {}: {e}\n{}",
                self.control.display(),
                self.output()
            )
        })
    }

    /// The whole system's status.
    pub fn status(&self) -> SystemStatus {
        self.client().status()
    }

    /// One unit's status; panics when it is unknown.
    #[track_caller]
    pub fn unit(&self, name: &str) -> UnitStatus {
        self.client()
            .unit(name)
            .unwrap_or_else(|| panic!("no unit {name}"))
    }

    /// A unit's main PID; panics when it has none.
    #[track_caller]
    pub fn pid_of(&self, name: &str) -> i32 {
        let u = self.unit(name);
        u.pid.unwrap_or_else(|| panic!("{name} has no PID: {u:?}"))
    }

    /// Waits until `cond` holds for the system status (see the module doc).
    #[track_caller]
    pub fn wait(&self, what: &str, mut cond: impl FnMut(&SystemStatus) -> bool) -> SystemStatus {
        let deadline = Instant::now() + crate::WAIT;
        let mut c = self.client();
        c.send(Request::Subscribe);
        loop {
            c.send(Request::Status { name: None });
            let st = loop {
                match c.recv(deadline + Duration::from_secs(5)) {
                    Ok(Reply::Status(s)) => break s,
                    Ok(Reply::Changed(_)) => continue,
                    Ok(other) => panic!("status: unexpected reply {other:?}"),
                    Err(e) => panic!("waiting for {what}: {e:?}\n{}", self.output()),
                }
            };
            if cond(&st) {
                return st;
            }
            if Instant::now() > deadline {
                panic!(
                    "timed out waiting for {what}; last status:\n{}\ninit output:\n{}",
                    describe(&st),
                    self.output()
                );
            }
            // Any change after that status (or a short fallback, for facts
            // that change without a state change, such as `degraded`).
            let until = (Instant::now() + Duration::from_millis(200)).min(deadline);
            match c.recv(until) {
                Ok(_) | Err(RecvError::Timeout) => {}
                Err(RecvError::Eof) => {
                    panic!("init closed the connection:\n{}", self.output())
                }
            }
        }
    }

    /// Waits until `cond` holds for unit `name`.
    #[track_caller]
    pub fn wait_unit(
        &self,
        name: &str,
        what: &str,
        mut cond: impl FnMut(&UnitStatus) -> bool,
    ) -> UnitStatus {
        let st = self.wait(&format!("{name}: {what}"), |s| {
            s.units.iter().any(|u| u.unit == name && cond(u))
        });
        st.units
            .into_iter()
            .find(|u| u.unit == name)
            .expect("unit present")
    }

    /// Waits until unit `name` is in `state`.
    #[track_caller]
    pub fn wait_state(&self, name: &str, state: UnitState) -> UnitStatus {
        self.wait_unit(name, &format!("state {state}"), |u| u.state == state)
    }

    /// Waits until every named unit is in `state`.
    #[track_caller]
    pub fn wait_all(&self, names: &[&str], state: UnitState) -> SystemStatus {
        self.wait(&format!("{names:?} all {state}"), |s| {
            names
                .iter()
                .all(|n| s.units.iter().any(|u| u.unit == *n && u.state == state))
        })
    }

    /// A subscription: every change from now on.
    pub fn subscribe(&self) -> Subscription {
        let mut c = self.client();
        c.send(Request::Subscribe);
        // A status reply proves the subscription is in place.
        c.send(Request::Status { name: None });
        let deadline = Instant::now() + crate::WAIT;
        let initial = loop {
            match c.recv(deadline) {
                Ok(Reply::Status(s)) => break s,
                Ok(Reply::Changed(_)) => {}
                other => panic!("subscribe: unexpected {other:?}"),
            }
        };
        Subscription { client: c, initial }
    }

    /// Runs `initctl` against this init.
    pub fn ctl(&self, args: &[&str]) -> Out {
        let mut cmd = Command::new(crate::bins::initctl());
        cmd.arg("--control").arg(&self.control).args(args);
        cmd.env("NO_COLOR", "1");
        run(cmd, Duration::from_secs(15))
    }

    /// `initctl ARGS` left running (`logs -f`): its stdout's lines as
    /// they come; killed when the [`Follower`] is dropped.
    pub fn follow(&self, args: &[&str]) -> Follower {
        let mut child = Command::new(crate::bins::initctl())
            .arg("--control")
            .arg(&self.control)
            .args(args)
            .env("NO_COLOR", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start initctl");
        let (tx, lines) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().expect("stdout");
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Follower { child, lines }
    }

    /// What the init printed so far (stdout and stderr).
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.out_path).unwrap_or_default()
    }

    /// Sends `sig` to the init.
    pub fn signal(&self, sig: i32) {
        if self.status.is_none() {
            procs::signal(self.pid, sig);
        }
    }

    /// The exit status if the init has ended.
    pub fn try_exit(&mut self) -> Option<i32> {
        if self.status.is_some() {
            return self.status;
        }
        let c = self.child.as_mut()?;
        if let Ok(Some(st)) = c.try_wait() {
            self.status = Some(exit_code(st));
            self.child = None;
        }
        self.status
    }

    /// Waits (up to [`crate::WAIT`]) for the init to end; its exit status.
    #[track_caller]
    pub fn wait_exit(&mut self) -> i32 {
        if let Some(s) = self.status {
            return s;
        }
        let Some(child) = self.child.take() else {
            panic!("no child");
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let handle = std::thread::spawn(move || {
            let mut child = child;
            let st = child.wait();
            let _ = tx.send(st.map(exit_code));
        });
        match rx.recv_timeout(crate::WAIT) {
            Ok(Ok(code)) => {
                let _ = handle.join();
                self.status = Some(code);
                code
            }
            _ => {
                // Left to the drop guard's marker sweep and kill.
                procs::kill_all(&procs::descendants(self.pid));
                procs::signal(self.pid, libc::SIGKILL);
                panic!("init did not exit in time:\n{}", self.output())
            }
        }
    }
}

impl Drop for Init {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let below = procs::descendants(self.pid);
            let _ = c.kill();
            procs::kill_all(&below);
            let _ = c.wait();
        }
        procs::kill_marked(&self.mark);
    }
}

/// An `initctl` left running ([`Init::follow`]), killed on drop.
pub struct Follower {
    child: Child,
    /// Its stdout, line by line.
    pub lines: std::sync::mpsc::Receiver<String>,
}

impl Follower {
    /// The next line, waiting up to [`crate::WAIT`] for it.
    #[track_caller]
    pub fn next(&self, what: &str) -> String {
        self.lines
            .recv_timeout(crate::WAIT)
            .unwrap_or_else(|e| panic!("{what}: {e}"))
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every change the init reports, from the moment of subscribing.
pub struct Subscription {
    client: Client,
    /// The status right after the subscription began.
    pub initial: SystemStatus,
}

impl Subscription {
    /// The next change, or `None` when `deadline` passed.
    pub fn next(&mut self, deadline: Instant) -> Option<UnitStatus> {
        loop {
            match self.client.recv(deadline) {
                Ok(Reply::Changed(u)) => return Some(u),
                Ok(_) => continue,
                Err(RecvError::Timeout) => return None,
                Err(RecvError::Eof) => panic!("the init closed the subscription"),
            }
        }
    }

    /// Collects changes until `done` says the last one ends it; panics
    /// after [`crate::WAIT`].
    #[track_caller]
    pub fn until(
        &mut self,
        what: &str,
        mut done: impl FnMut(&UnitStatus) -> bool,
    ) -> Vec<UnitStatus> {
        let deadline = Instant::now() + crate::WAIT;
        let mut seen = Vec::new();
        loop {
            match self.next(deadline) {
                Some(u) => {
                    let stop = done(&u);
                    seen.push(u);
                    if stop {
                        return seen;
                    }
                }
                None => panic!("timed out waiting for {what}; changes seen: {}", {
                    seen.iter()
                        .map(|u| format!("{}={}", u.unit, u.state))
                        .collect::<Vec<_>>()
                        .join(" ")
                }),
            }
        }
    }
}

/// A status as a few lines, for failure messages.
pub fn describe(s: &SystemStatus) -> String {
    let mut out = format!(
        "target {} {} degraded={}\n",
        s.target, s.target_state, s.degraded
    );
    for u in &s.units {
        out.push_str(&format!(
            "  {} {} pid={:?} degraded={} blocked_by={:?} restarts={} status={:?}\n",
            u.unit, u.state, u.pid, u.degraded, u.blocked_by, u.restarts, u.status
        ));
    }
    out
}
