//! A real three-member etcd cluster (Debian's `/usr/bin/etcd`) on free
//! loopback ports with temp data dirs and fast elections, for the test
//! that moves etcd's leader. Members are killed by PID on drop. The leader
//! is found and moved through etcd's JSON gateway
//! (`/v3/maintenance/status`, `/v3/maintenance/transfer-leadership`).

use super::etcd::free_port;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Member {
    name: String,
    client: u16,
    peer: u16,
    child: Option<Child>,
}

/// Three etcd members forming one cluster.
pub struct Etcd3 {
    dir: tempfile::TempDir,
    members: Vec<Member>,
}

fn post(port: u16, path: &str, body: &str) -> Option<serde_json::Value> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).ok()?;
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let (_, b) = out.split_once("\r\n\r\n")?;
    serde_json::from_str(b).ok()
}

impl Etcd3 {
    /// Starts the three members and waits until the cluster has a leader.
    pub fn start() -> Etcd3 {
        let dir = tempfile::Builder::new()
            .prefix("flotilla-etcd3-")
            .tempdir()
            .expect("tempdir");
        let members: Vec<Member> = ["e0", "e1", "e2"]
            .iter()
            .map(|n| Member {
                name: n.to_string(),
                client: free_port(),
                peer: free_port(),
                child: None,
            })
            .collect();
        let mut e = Etcd3 { dir, members };
        for i in 0..3 {
            e.spawn(i, "new");
        }
        e.wait_leader();
        e
    }

    /// Starts member `i`; `state` is etcd's `--initial-cluster-state`.
    fn spawn(&mut self, i: usize, state: &str) {
        let cluster = self
            .members
            .iter()
            .map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.peer))
            .collect::<Vec<_>>()
            .join(",");
        let m = &self.members[i];
        let data: PathBuf = self.dir.path().join(&m.name);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join(format!("{}.log", m.name)))
            .expect("etcd log");
        let client = format!("http://127.0.0.1:{}", m.client);
        let peer = format!("http://127.0.0.1:{}", m.peer);
        let child = Command::new("/usr/bin/etcd")
            .args(["--name", &m.name, "--data-dir"])
            .arg(&data)
            .args([
                "--listen-client-urls",
                &client,
                "--advertise-client-urls",
                &client,
            ])
            .args([
                "--listen-peer-urls",
                &peer,
                "--initial-advertise-peer-urls",
                &peer,
            ])
            .args([
                "--initial-cluster",
                &cluster,
                "--initial-cluster-state",
                state,
            ])
            .args(["--heartbeat-interval", "20", "--election-timeout", "200"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("start etcd (Debian's etcd-server)");
        self.members[i].child = Some(child);
    }

    /// The client URLs, comma-separated (for `clusterd --etcd`).
    pub fn urls(&self) -> String {
        self.members
            .iter()
            .map(|m| format!("http://127.0.0.1:{}", m.client))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// A member's status: (its raft ID, the leader's raft ID).
    fn status(&self, i: usize) -> Option<(String, String)> {
        let v = post(self.members[i].client, "/v3/maintenance/status", "{}")?;
        Some((
            v["header"]["member_id"].as_str()?.to_string(),
            v["leader"].as_str()?.to_string(),
        ))
    }

    /// The index of the leading member, as the running members agree.
    pub fn leader(&self) -> Option<usize> {
        let ids: Vec<Option<(String, String)>> = (0..3)
            .map(|i| self.members[i].child.as_ref().and(self.status(i)))
            .collect();
        let lead = ids.iter().flatten().map(|(_, l)| l.clone()).next()?;
        ids.iter()
            .position(|s| s.as_ref().is_some_and(|(id, _)| *id == lead))
    }

    /// Waits (at most 20 s) for a leader; returns its index.
    pub fn wait_leader(&self) -> usize {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(l) = self.leader() {
                return l;
            }
            assert!(Instant::now() < deadline, "the etcd cluster has no leader");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Moves leadership to member `to` (asked of the current leader) and
    /// waits until it leads.
    pub fn move_leader(&self, to: usize) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let from = self.wait_leader();
            if from == to {
                return;
            }
            if let Some((id, _)) = self.status(to) {
                let body = format!("{{\"targetID\":\"{id}\"}}");
                let _ = post(
                    self.members[from].client,
                    "/v3/maintenance/transfer-leadership",
                    &body,
                );
            }
            assert!(
                Instant::now() < deadline,
                "etcd's leader did not move to {to}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills member `i` (SIGKILL); its data stays.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut c) = self.members[i].child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts member `i` again on its data (it rejoins the cluster).
    pub fn restart(&mut self, i: usize) {
        self.kill(i);
        self.spawn(i, "existing");
    }
}

impl Drop for Etcd3 {
    fn drop(&mut self) {
        for i in 0..3 {
            self.kill(i);
        }
    }
}
