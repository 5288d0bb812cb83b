//! Shared harness of the cluster system tests: a real etcd
//! (`flotilla_tests::etcd`, `tests/src/etcd.rs`), the binaries located and
//! kept fresh by `flotilla_tests::bins`, the real `init` in supervisor mode with `clusterd`
//! as one of its units (a [`Machine`], as in production), `clusterd` alone,
//! the real `initctl`, an HTTP client (curl, over the unix socket or TCP),
//! and deadline-based waiting. Every process a test starts is killed by PID
//! when its guard is dropped, even when the test fails.
//!
//! Submodules: [`fleet`] (many machines, bulk submissions, the exactly-once
//! check), [`http`] (a kept-connection client for bulk requests),
//! [`etcd3`] (a three-member etcd), [`browser`] (headless Chromium through
//! ChromeDriver), [`tls`] (a test CA and a network namespace).
#![allow(dead_code)]

pub use flotilla_tests::etcd;
pub use flotilla_tests::procs::descendants;

pub mod browser;
pub mod etcd3;
pub mod fleet;
pub mod http;
pub mod platform;
pub mod relay;
pub mod tls;

use flotilla_units::protocol::{Envelope, Reply, Request, UnitStatus};
use flotilla_units::state::UnitState;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A fresh temp dir, removed on drop.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("flotilla-cluster-")
        .tempdir()
        .expect("tempdir")
}

/// The directory holding the built binaries (`flotilla_tests::bins`:
/// `FLOTILLA_BIN_DIR`, else the profile directory of the test executable,
/// so `CARGO_TARGET_DIR` is honoured).
pub fn bin_dir() -> PathBuf {
    flotilla_tests::bins::bin_dir()
}

/// Path to a workspace binary, found and (when missing or older than its
/// sources) built by `flotilla_tests::bins`, as every system test does.
pub fn bin(name: &str, package: &str) -> PathBuf {
    let crate_dir = match package {
        "flotilla-cluster" => "cluster",
        "flotilla-ctl" => "ctl",
        "flotilla-init" => "init",
        other => panic!("unknown package {other}"),
    };
    flotilla_tests::bins::bin(name, package, crate_dir)
}

pub use flotilla_tests::wait_for;

/// One clusterd, killed by PID on drop.
pub struct Clusterd {
    child: Option<Child>,
    args: Vec<String>,
    pub log: PathBuf,
    pub machine: String,
    pub sock: PathBuf,
}

impl Clusterd {
    /// Starts clusterd for `machine`, its API on a unix socket in `dir`.
    pub fn start(
        etcd: &str,
        dir: &Path,
        machine: &str,
        metadata: &str,
        control: &Path,
        ttl: &str,
    ) -> Clusterd {
        let sock = dir.join(format!("{machine}.fleet.sock"));
        let args = vec![
            "--etcd".to_string(),
            etcd.to_string(),
            "--machine-id".into(),
            machine.into(),
            "--metadata".into(),
            metadata.into(),
            "--public-ip".into(),
            format!("127.0.0.{}", 1 + machine.len() % 200),
            "--control".into(),
            control.display().to_string(),
            "--api-listen".into(),
            format!("unix://{}", sock.display()),
            "--agent-ttl".into(),
            ttl.into(),
        ];
        Clusterd::start_args(args, dir.join(format!("{machine}.log")), machine, sock)
    }

    /// Starts clusterd with explicit arguments.
    pub fn start_args(args: Vec<String>, log: PathBuf, machine: &str, sock: PathBuf) -> Clusterd {
        let mut c = Clusterd {
            child: None,
            args,
            log,
            machine: machine.into(),
            sock,
        };
        c.spawn();
        c
    }

    fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("log");
        let child = Command::new(bin("clusterd", "flotilla-cluster"))
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("spawn clusterd");
        self.child = Some(child);
    }

    /// Waits until the API answers on the unix socket.
    pub fn wait_api(&self) {
        let sock = self.sock.clone();
        wait_for(Duration::from_secs(20), "clusterd API", || {
            let (code, _) = http_unix(&sock, "GET", "/fleet/v1/machines", None, None);
            (code == 200).then_some(())
        });
    }

    /// SIGKILL and wait.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts again with the same arguments.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// Its log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// PID, while running.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }
}

impl Drop for Clusterd {
    fn drop(&mut self) {
        self.kill();
    }
}

fn curl(
    args: &[&str],
    url: &str,
    method: &str,
    ctype: Option<&str>,
    body: Option<&str>,
) -> (u16, String) {
    let (code, _, body) = curl_typed(args, url, method, ctype, body);
    (code, body)
}

/// A request with curl: (status, the answer's `Content-Type`, body).
fn curl_typed(
    args: &[&str],
    url: &str,
    method: &str,
    ctype: Option<&str>,
    body: Option<&str>,
) -> (u16, String, String) {
    let mut cmd = Command::new("curl");
    cmd.args([
        "-s",
        "-S",
        "--max-time",
        "15",
        "-o",
        "-",
        "-w",
        "\n%{http_code}\n%{content_type}",
        "-X",
        method,
    ]);
    cmd.args(args);
    if let Some(ct) = ctype {
        cmd.args(["-H", &format!("Content-Type: {ct}")]);
    }
    if let Some(b) = body {
        cmd.args(["--data-binary", b]);
    }
    cmd.arg(url);
    let out = cmd.output().expect("curl");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (rest, answer_type) = text.rsplit_once('\n').unwrap_or(("", &text));
    let (body, code) = rest.rsplit_once('\n').unwrap_or(("", rest));
    (
        code.trim().parse().unwrap_or(0),
        answer_type.to_string(),
        body.to_string(),
    )
}

/// An HTTP request over a unix socket (Host `domain-sock`, as fleetctl).
pub fn http_unix(
    sock: &Path,
    method: &str,
    path: &str,
    ctype: Option<&str>,
    body: Option<&str>,
) -> (u16, String) {
    let (code, _, body) = http_unix_typed(sock, method, path, ctype, body);
    (code, body)
}

/// An HTTP request over a unix socket, as [`http_unix`], with the
/// answer's `Content-Type`: (status, content type, body).
pub fn http_unix_typed(
    sock: &Path,
    method: &str,
    path: &str,
    ctype: Option<&str>,
    body: Option<&str>,
) -> (u16, String, String) {
    let s = sock.display().to_string();
    curl_typed(
        &["--unix-socket", &s],
        &format!("http://domain-sock{path}"),
        method,
        ctype,
        body,
    )
}

/// An HTTP request over TCP.
pub fn http_tcp(
    base: &str,
    method: &str,
    path: &str,
    ctype: Option<&str>,
    body: Option<&str>,
) -> (u16, String) {
    curl(&[], &format!("{base}{path}"), method, ctype, body)
}

/// Parses JSON or panics with the text.
pub fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("bad JSON {s:?}: {e}"))
}

/// A unit body with one ExecStart and X-Fleet options.
pub fn unit_body(desired: &str, exec: &str, xfleet: &[(&str, &str)]) -> String {
    let mut opts =
        vec![serde_json::json!({"section": "Service", "name": "ExecStart", "value": exec})];
    for (k, v) in xfleet {
        opts.push(serde_json::json!({"section": "X-Fleet", "name": k, "value": v}));
    }
    serde_json::json!({"desiredState": desired, "options": opts}).to_string() + "\n"
}

// ---------------------------------------------------------------------------
// Processes.

/// Whether `pid` is a live process (not a zombie).
pub fn pid_alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().next())
                .unwrap_or("");
            state != "Z" && state != "X"
        }
        Err(_) => false,
    }
}

/// Sends `sig` to `pid` (a PID this test started or found under its own
/// init).
pub fn signal(pid: i32, sig: i32) {
    if pid > 0 {
        // SAFETY: kill(2) on a single, positive PID.
        unsafe { libc::kill(pid, sig) };
    }
}

/// Checks `ok` again and again for `d` (every 20 ms) and panics as soon as
/// it fails: for facts that must *stay* true for a while (nothing stops
/// while etcd is down), not a sleep: every moment of the window is checked.
pub fn hold(d: Duration, what: &str, mut ok: impl FnMut() -> Result<(), String>) {
    let end = Instant::now() + d;
    while Instant::now() < end {
        if let Err(e) = ok() {
            panic!("{what}: {e}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

// ---------------------------------------------------------------------------
// The real init.

/// One request on the init's control socket; its final reply.
pub fn control_request(path: &Path, req: Request) -> std::io::Result<Reply> {
    let mut s = UnixStream::connect(path)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut line = serde_json::to_string(&Envelope::new(req)).map_err(std::io::Error::other)?;
    line.push('\n');
    s.write_all(line.as_bytes())?;
    for l in BufReader::new(s).lines() {
        let reply: Reply = serde_json::from_str(&l?).map_err(std::io::Error::other)?;
        if reply.is_final() {
            return Ok(reply);
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::UnexpectedEof,
        "init closed the connection",
    ))
}

/// The real `init` in supervisor mode, in its own directory: `units/`
/// (with a virtual `default` that waits for `cluster`, plus what the caller
/// adds), `control.sock` and `init.out`; no `--log-dir` (the units' lines
/// stay in the init's memory; with one the init would run its own log
/// writer). Dropping it
/// kills the init and every process under it by PID, even when the test
/// fails.
pub struct RealInit {
    child: Option<Child>,
    /// Its directory.
    pub root: PathBuf,
    /// Its control socket.
    pub control: PathBuf,
}

impl RealInit {
    /// Starts an init in `dir/name/` with `default` waiting for `waits_for`
    /// and the extra unit files `units` (`(file name, YAML)`), and waits
    /// until its control socket answers.
    pub fn start(dir: &Path, name: &str, waits_for: &str, units: &[(&str, String)]) -> RealInit {
        let root = dir.join(name);
        let udir = root.join("units");
        std::fs::create_dir_all(&udir).expect("units dir");
        std::fs::write(
            udir.join("default.yaml"),
            format!("unit: default\ntype: virtual\nprovides: default\nwaits-for: {waits_for}\n"),
        )
        .expect("default unit");
        for (f, y) in units {
            std::fs::write(udir.join(f), y).expect("unit file");
        }
        let control = root.join("control.sock");
        let out = std::fs::File::create(root.join("init.out")).expect("init.out");
        let child = Command::new(bin("init", "flotilla-init"))
            .arg("--units")
            .arg(&udir)
            .arg("--control")
            .arg(&control)
            .arg("--target")
            .arg("default")
            .env_remove("INIT_CONTROL")
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("init.out"))
            .stderr(out)
            .spawn()
            .expect("start init");
        let init = RealInit {
            child: Some(child),
            root,
            control,
        };
        wait_for(Duration::from_secs(10), "the init's control socket", || {
            matches!(
                control_request(&init.control, Request::List),
                Ok(Reply::List { .. })
            )
            .then_some(())
        });
        init
    }

    /// The init's PID while it runs.
    pub fn pid(&self) -> Option<i32> {
        self.child.as_ref().map(|c| c.id() as i32)
    }

    /// Every unit, as `list` reports it (empty when the init does not answer).
    pub fn list(&self) -> BTreeMap<String, UnitStatus> {
        match control_request(&self.control, Request::List) {
            Ok(Reply::List { units }) => units.into_iter().map(|u| (u.unit.clone(), u)).collect(),
            _ => BTreeMap::new(),
        }
    }

    /// The fleet units clusterd handed over (the transient set `cluster`,
    /// without the virtual `cluster` itself), by name.
    pub fn fleet_units(&self) -> BTreeMap<String, UnitStatus> {
        let mut l = self.list();
        l.retain(|n, u| n != "cluster" && u.source == "transient:cluster");
        l
    }

    /// The fleet units running here, with their PIDs.
    pub fn running(&self) -> BTreeMap<String, i32> {
        self.fleet_units()
            .into_iter()
            .filter(|(_, u)| u.state == UnitState::Running)
            .filter_map(|(n, u)| Some((n, u.pid?)))
            .collect()
    }

    /// The PID of a running unit of this init (e.g. `clusterd`).
    pub fn pid_of(&self, unit: &str) -> Option<i32> {
        let u = self.list().remove(unit)?;
        (u.state == UnitState::Running).then_some(u.pid).flatten()
    }

    /// A unit's captured output (`initctl logs UNIT`: the init's memory,
    /// as no log writer runs here).
    pub fn unit_log(&self, unit: &str) -> String {
        Command::new(bin("initctl", "flotilla-ctl"))
            .arg("--control")
            .arg(&self.control)
            .args(["logs", unit])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }

    /// The machine dies at once: the init is frozen (so it starts nothing
    /// more), then it and every process under it get SIGKILL.
    pub fn crash(&mut self) {
        let Some(mut c) = self.child.take() else {
            return;
        };
        let pid = c.id() as i32;
        signal(pid, libc::SIGSTOP);
        let mut all = descendants(pid);
        for p in &all {
            signal(*p, libc::SIGSTOP);
        }
        // Anything forked between the two looks.
        for p in descendants(pid) {
            if !all.contains(&p) {
                all.push(p);
            }
        }
        for p in &all {
            signal(*p, libc::SIGKILL);
        }
        let _ = c.kill();
        let _ = c.wait();
        let _ = std::fs::remove_file(&self.control);
    }
}

impl Drop for RealInit {
    fn drop(&mut self) {
        self.crash();
    }
}

/// A cluster machine as in production (contrib/cluster): a real init whose
/// units are `clusterd` (restarted whenever it dies) and a `default` target
/// waiting for `clusterd` and `cluster`.
pub struct Machine {
    /// The machine's init (clusterd runs under it).
    pub init: RealInit,
    /// The machine ID.
    pub id: String,
    /// Its API socket.
    pub sock: PathBuf,
}

impl Machine {
    /// Starts a machine `id` in `dir/id/` against `etcd`, with `metadata`
    /// (`k=v,k=v`), primary IP `ip`, presence TTL `ttl` and more clusterd
    /// flags `extra`. Its API listens on `dir/id/fleet.sock` unless `extra`
    /// says otherwise.
    pub fn start(
        etcd: &str,
        dir: &Path,
        id: &str,
        metadata: &str,
        ip: &str,
        ttl: &str,
        extra: &[String],
    ) -> Machine {
        let root = dir.join(id);
        let sock = root.join("fleet.sock");
        let control = root.join("control.sock");
        let mut args: Vec<String> = vec![
            bin("clusterd", "flotilla-cluster").display().to_string(),
            "--etcd".into(),
            etcd.into(),
            "--machine-id".into(),
            id.into(),
            "--metadata".into(),
            metadata.into(),
            "--public-ip".into(),
            ip.into(),
            "--control".into(),
            control.display().to_string(),
            "--agent-ttl".into(),
            ttl.into(),
        ];
        if !extra.iter().any(|a| a.starts_with("--api-listen")) {
            args.push("--api-listen".into());
            args.push(format!("unix://{}", sock.display()));
        }
        args.extend(extra.iter().cloned());
        let exec = serde_json::to_string(&args).expect("args as a YAML flow list");
        let unit = format!(
            "unit: clusterd\ntype: foreground-supervised\nexec-start: {exec}\nrestart: always\nrestart-delay: 100ms\nrestart-max-delay: 200ms\n"
        );
        let init = RealInit::start(dir, id, "clusterd, cluster", &[("clusterd.yaml", unit)]);
        Machine {
            init,
            id: id.into(),
            sock,
        }
    }

    /// A machine with no metadata and a presence TTL of 2 s, its API up.
    pub fn up(etcd: &str, dir: &Path, id: &str, ip: &str) -> Machine {
        let m = Machine::start(etcd, dir, id, "", ip, "2s", &[]);
        m.wait_api();
        m
    }

    /// clusterd's PID (while the init runs it).
    pub fn clusterd_pid(&self) -> Option<i32> {
        self.init.pid_of("clusterd")
    }

    /// clusterd's log (what the init captured).
    pub fn log(&self) -> String {
        self.init.unit_log("clusterd")
    }

    /// A request to this machine's API over its unix socket.
    pub fn api(&self, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
        http_unix(
            &self.sock,
            method,
            path,
            body.map(|_| "application/json"),
            body,
        )
    }

    /// Waits until the API answers.
    pub fn wait_api(&self) {
        wait_for(Duration::from_secs(20), "clusterd API", || {
            (self.api("GET", "/fleet/v1/machines", None).0 == 200).then_some(())
        });
    }
}

// ---------------------------------------------------------------------------
// initctl.

/// What a command did.
#[derive(Debug)]
pub struct Out {
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs the real `initctl` with `args` and extra environment `env` (no
/// `FLEETCTL_ENDPOINT` unless given there); killed by PID after 60 s.
pub fn initctl(args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut cmd = Command::new(bin("initctl", "flotilla-ctl"));
    cmd.args(args)
        .env_remove("FLEETCTL_ENDPOINT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().expect("start initctl");
    let pid = child.id() as i32;
    let done = Arc::new(Mutex::new(false));
    let d2 = done.clone();
    let watchdog = std::thread::spawn(move || {
        let end = Instant::now() + Duration::from_secs(60);
        while Instant::now() < end {
            if *d2.lock().unwrap() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if !*d2.lock().unwrap() {
            signal(pid, libc::SIGKILL);
        }
    });
    let out = child.wait_with_output().expect("initctl output");
    *done.lock().unwrap() = true;
    let _ = watchdog.join();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `initctl cluster --endpoint EP ARGS...`, as fleetctl is run against
/// one machine's API.
pub fn initctl_cluster(ep: &str, args: &[&str]) -> Out {
    let mut a = vec!["cluster", "--endpoint", ep];
    a.extend_from_slice(args);
    initctl(&a, &[])
}

/// Encodes standard base64, padded (etcd's JSON gateway takes keys so).
pub fn b64_encode(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 (padding and unknown characters skipped).
pub fn b64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| -> Option<u32> {
        match c {
            b'A'..=b'Z' => Some(u32::from(c - b'A')),
            b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
            b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.bytes() {
        let Some(v) = val(c) else { continue };
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// Reads one key's value through etcd's JSON gateway.
pub fn etcd_get(e: &etcd::Etcd, key: &str) -> Option<String> {
    let body = format!("{{\"key\":\"{}\"}}", b64_encode(key.as_bytes()));
    let resp = e.gateway("/v3/kv/range", &body);
    let v: serde_json::Value = serde_json::from_str(&resp).ok()?;
    let val = v["kvs"][0]["value"].as_str()?;
    String::from_utf8(b64_decode(val)).ok()
}
