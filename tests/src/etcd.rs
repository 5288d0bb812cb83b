//! A real etcd for tests: Debian's `/usr/bin/etcd` on free loopback ports
//! with a temp data dir and fast elections (`--heartbeat-interval 10
//! --election-timeout 100`). [`Etcd::start`] waits until it answers;
//! dropping the guard kills it by PID, even when the test fails.
//! [`Etcd::start_tls`] serves clients over TLS only, with client
//! certificates required (`--client-cert-auth`).
//!
//! Only `std` is used so that any test crate can include this file.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running etcd, killed on drop.
pub struct Etcd {
    child: Option<Child>,
    dir: PathBuf,
    client_port: u16,
    peer_port: u16,
    owns_dir: bool,
    tls: Option<EtcdTls>,
}

/// TLS on etcd's client port (PEM files): the server's certificate and
/// key, the CA that client certificates must chain to (and that signed the
/// server's), and a client certificate and key for the harness's own
/// health checks (made with `curl`).
#[derive(Debug, Clone)]
pub struct EtcdTls {
    /// The CA (`--trusted-ca-file`).
    pub ca: PathBuf,
    /// etcd's certificate (`--cert-file`), valid for IP 127.0.0.1.
    pub cert: PathBuf,
    /// Its key (`--key-file`).
    pub key: PathBuf,
    /// A client certificate signed by `ca`.
    pub client_cert: PathBuf,
    /// Its key.
    pub client_key: PathBuf,
}

/// A loopback TCP port that is free now (bound and released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

fn temp_dir() -> PathBuf {
    let base = std::env::temp_dir();
    for i in 0..1000u32 {
        let d = base.join(format!(
            "flotilla-etcd-{}-{}-{}",
            std::process::id(),
            i,
            free_port()
        ));
        if std::fs::create_dir(&d).is_ok() {
            return d;
        }
    }
    panic!("cannot create a temp dir for etcd");
}

impl Etcd {
    /// Starts etcd and waits (up to 20 s) until it answers.
    pub fn start() -> Etcd {
        Etcd::start_with(None)
    }

    /// Starts etcd with TLS on its client port (`https://127.0.0.1:PORT`)
    /// and client certificates required, and waits until it answers.
    pub fn start_tls(tls: EtcdTls) -> Etcd {
        Etcd::start_with(Some(tls))
    }

    fn start_with(tls: Option<EtcdTls>) -> Etcd {
        let mut e = Etcd {
            child: None,
            dir: temp_dir(),
            client_port: free_port(),
            peer_port: free_port(),
            owns_dir: true,
            tls,
        };
        e.spawn();
        e
    }

    fn spawn(&mut self) {
        let bin = std::env::var("ETCD_BIN").unwrap_or_else(|_| "/usr/bin/etcd".into());
        let client = self.url();
        let peer = format!("http://127.0.0.1:{}", self.peer_port);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("etcd.log"))
            .expect("etcd log file");
        let mut cmd = Command::new(&bin);
        if let Some(t) = &self.tls {
            cmd.arg("--cert-file")
                .arg(&t.cert)
                .arg("--key-file")
                .arg(&t.key)
                .arg("--trusted-ca-file")
                .arg(&t.ca)
                .arg("--client-cert-auth");
        }
        let child = cmd
            .arg("--name")
            .arg("test")
            .arg("--data-dir")
            .arg(self.dir.join("data"))
            .arg("--listen-client-urls")
            .arg(&client)
            .arg("--advertise-client-urls")
            .arg(&client)
            .arg("--listen-peer-urls")
            .arg(&peer)
            .arg("--initial-advertise-peer-urls")
            .arg(&peer)
            .arg("--initial-cluster")
            .arg(format!("test={peer}"))
            .args(["--heartbeat-interval", "10", "--election-timeout", "100"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {bin}: {e} (install Debian's etcd-server)"));
        self.child = Some(child);
        self.wait_ready(Duration::from_secs(20));
    }

    fn wait_ready(&mut self, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(c) = self.child.as_mut() {
                if let Ok(Some(st)) = c.try_wait() {
                    panic!("etcd exited early ({st}); log: {}", self.log());
                }
            }
            if self.healthy() {
                return;
            }
            if Instant::now() > deadline {
                panic!("etcd did not answer within {limit:?}; log: {}", self.log());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether `/health` answers `"health":"true"`.
    pub fn healthy(&self) -> bool {
        if let Some(t) = &self.tls {
            let out = Command::new("curl")
                .args(["-s", "--max-time", "2", "--cacert"])
                .arg(&t.ca)
                .arg("--cert")
                .arg(&t.client_cert)
                .arg("--key")
                .arg(&t.client_key)
                .arg(format!("{}/health", self.url()))
                .stdin(Stdio::null())
                .output();
            return out
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("\"health\":\"true\""));
        }
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.client_port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
        let req = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
        if s.write_all(req.as_bytes()).is_err() {
            return false;
        }
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out.contains("\"health\":\"true\"")
    }

    /// The client URL, `http://127.0.0.1:PORT` (`https://` with TLS).
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}", self.client_port)
    }

    /// The data dir (etcd's log is `etcd.log` beside `data/`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// etcd's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("etcd.log")).unwrap_or_default()
    }

    /// PID of the running etcd, if it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// Kills etcd (SIGKILL) and waits for it; the data dir is kept.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts etcd again on the same ports and data.
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }

    /// Keeps the data dir after the test (for debugging).
    pub fn keep_dir(&mut self) {
        self.owns_dir = false;
    }

    /// A raw request to etcd's JSON gateway (`/v3/kv/range` and so on), for
    /// tests that look at keys directly (plain HTTP only). Returns the
    /// response body.
    pub fn gateway(&self, path: &str, body: &str) -> String {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.client_port)) else {
            return String::new();
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
        let req = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        if s.write_all(req.as_bytes()).is_err() {
            return String::new();
        }
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        match out.split_once("\r\n\r\n") {
            Some((_, b)) => b.to_string(),
            None => String::new(),
        }
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        self.stop();
        if self.owns_dir {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
