//! Shared harness of the cluster system tests: a real etcd
//! (`tests/src/etcd.rs`), `clusterd` processes killed by PID on drop, an
//! HTTP client (curl, over the unix socket or TCP), a stand-in for the local
//! init's control socket (until the real init's transient interface is
//! wired, see docs/cluster.md), and deadline-based waiting.
#![allow(dead_code)]

#[path = "../../src/etcd.rs"]
pub mod etcd;

use flotilla_units::protocol::{Applied, Envelope, Reply, Request, UnitStatus};
use flotilla_units::spec::UnitSpec;
use flotilla_units::state::UnitState;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
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

/// The directory holding the built binaries (target/debug).
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("deps dir");
    deps.parent().expect("profile dir").to_path_buf()
}

/// Path to a workspace binary, building it when missing.
pub fn bin(name: &str, package: &str) -> PathBuf {
    let p = bin_dir().join(name);
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

/// Waits until `f` returns `Some`, polling every 20 ms; panics with `what`
/// after `limit`.
pub fn wait_for<T>(limit: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return v;
        }
        if Instant::now() > deadline {
            panic!("timed out after {limit:?} waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

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
    let mut cmd = Command::new("curl");
    cmd.args([
        "-s",
        "-S",
        "--max-time",
        "15",
        "-o",
        "-",
        "-w",
        "\n%{http_code}",
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
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    (code.trim().parse().unwrap_or(0), body.to_string())
}

/// An HTTP request over a unix socket (Host `domain-sock`, as fleetctl).
pub fn http_unix(
    sock: &Path,
    method: &str,
    path: &str,
    ctype: Option<&str>,
    body: Option<&str>,
) -> (u16, String) {
    let s = sock.display().to_string();
    curl(
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

/// A stand-in for the local init's control socket: it accepts the
/// transient set `cluster`, marks every unit that the virtual `cluster`
/// unit waits for as `running` and the others `disabled`, and serves
/// `list` and `subscribe`. It runs no processes.
pub struct InitStandIn {
    pub path: PathBuf,
    state: Arc<Mutex<StandInState>>,
}

#[derive(Default)]
struct StandInState {
    units: BTreeMap<String, UnitStatus>,
    subscribers: Vec<UnixStream>,
    applies: usize,
    closed: bool,
}

fn status(spec: &UnitSpec, state: UnitState) -> UnitStatus {
    UnitStatus {
        unit: spec.name.clone(),
        kind: spec.kind,
        state,
        degraded: false,
        pid: None,
        provides: spec.provides.clone(),
        coincidental: vec![],
        restarts: 0,
        blocked_by: None,
        status: String::new(),
        since: "2026-11-22T04:00:00.000Z".into(),
        description: spec.description.clone(),
        required: state != UnitState::Disabled,
        source: "transient:cluster".into(),
        restart_in_ms: None,
    }
}

impl InitStandIn {
    /// Listens on `path`.
    pub fn start(path: &Path) -> InitStandIn {
        let _ = std::fs::remove_file(path);
        let listener = UnixListener::bind(path).expect("bind stand-in init");
        let state = Arc::new(Mutex::new(StandInState::default()));
        let st = state.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                if st.lock().unwrap().closed {
                    return;
                }
                let st = st.clone();
                std::thread::spawn(move || serve(conn, st));
            }
        });
        InitStandIn {
            path: path.to_path_buf(),
            state,
        }
    }

    /// Units the stand-in runs now.
    pub fn running(&self) -> Vec<String> {
        let s = self.state.lock().unwrap();
        s.units
            .values()
            .filter(|u| u.state == UnitState::Running && u.unit != "cluster")
            .map(|u| u.unit.clone())
            .collect()
    }

    /// Units in the set (loaded or running), without `cluster`.
    pub fn loaded(&self) -> Vec<String> {
        let s = self.state.lock().unwrap();
        s.units
            .keys()
            .filter(|u| *u != "cluster")
            .cloned()
            .collect()
    }

    /// How many sets were applied.
    pub fn applies(&self) -> usize {
        self.state.lock().unwrap().applies
    }
}

impl Drop for InitStandIn {
    fn drop(&mut self) {
        self.state.lock().unwrap().closed = true;
        let _ = UnixStream::connect(&self.path);
        let _ = std::fs::remove_file(&self.path);
    }
}

fn send(w: &mut UnixStream, r: &Reply) -> bool {
    let mut line = serde_json::to_string(r).unwrap_or_default();
    line.push('\n');
    w.write_all(line.as_bytes()).is_ok()
}

fn serve(conn: UnixStream, st: Arc<Mutex<StandInState>>) {
    let Ok(mut w) = conn.try_clone() else { return };
    let reader = BufReader::new(conn);
    for line in reader.lines() {
        let Ok(line) = line else { return };
        let env: Envelope = match serde_json::from_str(&line) {
            Ok(e) => e,
            Err(e) => {
                send(
                    &mut w,
                    &Reply::error(
                        flotilla_units::protocol::ErrorCode::BadRequest,
                        e.to_string(),
                    ),
                );
                continue;
            }
        };
        let reply = match env.request {
            Request::TransientApply { units, .. } => {
                let mut s = st.lock().unwrap();
                s.applies += 1;
                let launched: Vec<String> = units
                    .iter()
                    .find(|u| u.name == "cluster")
                    .map(|u| u.waits_for.clone())
                    .unwrap_or_default();
                let mut next = BTreeMap::new();
                let mut applied = Applied::default();
                for u in &units {
                    let state = if u.name == "cluster" || launched.contains(&u.name) {
                        UnitState::Running
                    } else {
                        UnitState::Disabled
                    };
                    if !s.units.contains_key(&u.name) {
                        applied.added.push(u.name.clone());
                    }
                    next.insert(u.name.clone(), status(u, state));
                }
                let mut changed: Vec<UnitStatus> = Vec::new();
                for (n, v) in &next {
                    if s.units.get(n).map(|o| o.state) != Some(v.state) {
                        changed.push(v.clone());
                    }
                }
                for (n, old) in &s.units {
                    if !next.contains_key(n) {
                        applied.removed.push(n.clone());
                        let mut gone = old.clone();
                        gone.state = UnitState::Disabled;
                        changed.push(gone);
                    }
                }
                s.units = next;
                let mut subs = std::mem::take(&mut s.subscribers);
                subs.retain_mut(|sub| {
                    changed
                        .iter()
                        .all(|c| send(sub, &Reply::Changed(c.clone())))
                });
                s.subscribers = subs;
                Reply::Applied(applied)
            }
            Request::List => Reply::List {
                units: st.lock().unwrap().units.values().cloned().collect(),
            },
            Request::Subscribe => {
                if let Ok(c) = w.try_clone() {
                    st.lock().unwrap().subscribers.push(c);
                }
                continue;
            }
            _ => Reply::error(
                flotilla_units::protocol::ErrorCode::BadRequest,
                "not supported by the stand-in",
            ),
        };
        if !send(&mut w, &reply) {
            return;
        }
    }
}

fn b64_encode(data: &[u8]) -> String {
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

fn b64_decode(s: &str) -> Vec<u8> {
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
