//! Benchmark: N units (default 1000) submitted through the fleet API and
//! launched across 3 machines on one real etcd.
//!
//! Each machine is a real `clusterd` (from the same target dir) with a
//! stand-in of the local init's control socket that accepts the transient
//! set and marks launched units running without running processes, so the
//! figure is clusterd's and etcd's cost, not process start-up. Prints the
//! time from the first PUT to all units `launched`, etcd requests per unit
//! (from etcd's `grpc_server_handled_total`), and each clusterd's CPU time
//! and RSS.
//!
//! `cargo build --release -p flotilla-cluster --examples && target/release/examples/bench_launch [N]`

#[path = "../../tests/src/etcd.rs"]
#[allow(dead_code)]
mod etcd;

use flotilla_units::protocol::{Applied, Envelope, Reply, Request, UnitStatus};
use flotilla_units::state::UnitState;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Kill(Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

type Subs = Arc<Mutex<(BTreeMap<String, UnitStatus>, Vec<UnixStream>)>>;

fn stand_in(path: &Path) {
    let _ = std::fs::remove_file(path);
    let l = UnixListener::bind(path).expect("bind");
    let st: Subs = Arc::default();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            let st = st.clone();
            std::thread::spawn(move || {
                let Ok(mut w) = c.try_clone() else { return };
                for line in BufReader::new(c).lines() {
                    let Ok(line) = line else { return };
                    let Ok(env) = serde_json::from_str::<Envelope>(&line) else {
                        return;
                    };
                    let reply = match env.request {
                        Request::TransientApply { units, .. } => {
                            let launched: Vec<String> = units
                                .iter()
                                .find(|u| u.name == "cluster")
                                .map(|u| u.waits_for.clone())
                                .unwrap_or_default();
                            let mut g = st.lock().unwrap();
                            let mut changed = Vec::new();
                            let mut next = BTreeMap::new();
                            for u in &units {
                                let state = if u.name == "cluster" || launched.contains(&u.name) {
                                    UnitState::Running
                                } else {
                                    UnitState::Disabled
                                };
                                let s = UnitStatus {
                                    unit: u.name.clone(),
                                    kind: u.kind,
                                    state,
                                    degraded: false,
                                    pid: None,
                                    provides: u.provides.clone(),
                                    coincidental: vec![],
                                    restarts: 0,
                                    blocked_by: None,
                                    status: String::new(),
                                    since: String::new(),
                                    description: None,
                                    required: state == UnitState::Running,
                                    source: "transient:cluster".into(),
                                    restart_in_ms: None,
                                    masked: false,
                                    providers: None,
                                };
                                if g.0.get(&u.name).map(|o| o.state) != Some(state) {
                                    changed.push(s.clone());
                                }
                                next.insert(u.name.clone(), s);
                            }
                            g.0 = next;
                            let mut subs = std::mem::take(&mut g.1);
                            subs.retain_mut(|s| {
                                changed.iter().all(|c| {
                                    let mut l =
                                        serde_json::to_string(&Reply::Changed(c.clone())).unwrap();
                                    l.push('\n');
                                    s.write_all(l.as_bytes()).is_ok()
                                })
                            });
                            g.1 = subs;
                            Reply::Applied(Applied::default())
                        }
                        Request::List => Reply::List {
                            units: st.lock().unwrap().0.values().cloned().collect(),
                        },
                        Request::Subscribe => {
                            if let Ok(c) = w.try_clone() {
                                st.lock().unwrap().1.push(c);
                            }
                            continue;
                        }
                        _ => Reply::Accepted {
                            message: String::new(),
                        },
                    };
                    let mut l = serde_json::to_string(&reply).unwrap();
                    l.push('\n');
                    if w.write_all(l.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
}

fn http(sock: &Path, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
    let mut s = UnixStream::connect(sock).expect("connect API");
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: domain-sock\r\nConnection: close\r\n");
    match body {
        Some(b) => req.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{b}",
            b.len()
        )),
        None => req.push_str("\r\n"),
    }
    s.write_all(req.as_bytes()).expect("write");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let code = out
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = out
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (code, body)
}

fn grpc_handled(e: &etcd::Etcd) -> f64 {
    let Ok(mut s) = std::net::TcpStream::connect(e.url().trim_start_matches("http://")) else {
        return 0.0;
    };
    let _ = s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.lines()
        .filter(|l| l.starts_with("grpc_server_msg_received_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

fn proc_cpu_rss(pid: u32) -> (f64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    // Fields 14 and 15 (utime, stime) are at 11 and 12 after the command.
    let cpu = (ticks(11) + ticks(12)) / 100.0;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rss = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0);
    (cpu, rss)
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let exe = std::env::current_exe().expect("exe");
    let clusterd: PathBuf = exe
        .parent()
        .and_then(|p| p.parent())
        .expect("target dir")
        .join("clusterd");
    assert!(
        clusterd.exists(),
        "build clusterd first: {}",
        clusterd.display()
    );
    let etcd = etcd::Etcd::start();
    let dir = std::env::temp_dir().join(format!("flotilla-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let ids = ["aaaaaaaa0001", "bbbbbbbb0002", "cccccccc0003"];
    let mut procs = Vec::new();
    for id in ids {
        let ctl = dir.join(format!("{id}.init.sock"));
        stand_in(&ctl);
        let log = std::fs::File::create(dir.join(format!("{id}.log"))).expect("log");
        let child = Command::new(&clusterd)
            .args([
                "--etcd",
                &etcd.url(),
                "--machine-id",
                id,
                "--agent-ttl",
                "10s",
                "--control",
            ])
            .arg(&ctl)
            .arg("--api-listen")
            .arg(format!(
                "unix://{}",
                dir.join(format!("{id}.sock")).display()
            ))
            .stdin(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("clusterd");
        procs.push(Kill(child));
    }
    let sock = dir.join(format!("{}.sock", ids[0]));
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let ok = UnixStream::connect(&sock).is_ok() && {
            let (c, b) = http(&sock, "GET", "/fleet/v1/machines", None);
            c == 200 && b.matches("\"id\"").count() == 3
        };
        if ok {
            break;
        }
        assert!(Instant::now() < deadline, "cluster did not come up");
        std::thread::sleep(Duration::from_millis(50));
    }
    let cpu0: Vec<f64> = procs.iter().map(|p| proc_cpu_rss(p.0.id()).0).collect();
    let req0 = grpc_handled(&etcd);
    let t0 = Instant::now();
    // Four client threads, as a deploy script would.
    let per = n.div_ceil(4);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let sock = sock.clone();
            std::thread::spawn(move || {
                for i in (t * per)..((t + 1) * per).min(n) {
                    let body = format!(
                        "{{\"desiredState\":\"launched\",\"options\":[{{\"section\":\"Service\",\"name\":\"ExecStart\",\"value\":\"/bin/sleep {i}\"}}]}}\n"
                    );
                    let (c, b) = http(&sock, "PUT", &format!("/fleet/v1/units/bench-{i:05}.service"), Some(&body));
                    assert_eq!(c, 201, "{b}");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("client thread");
    }
    let submitted = t0.elapsed();
    let mut polls = 0;
    loop {
        polls += 1;
        let mut launched = 0;
        let mut path = "/fleet/v1/units".to_string();
        loop {
            let (_, b) = http(&sock, "GET", &path, None);
            let v: serde_json::Value = serde_json::from_str(&b).unwrap_or_default();
            launched += v["units"]
                .as_array()
                .map(|a| a.iter().filter(|u| u["currentState"] == "launched").count())
                .unwrap_or(0);
            match v["nextPageToken"].as_str() {
                Some(t) => path = format!("/fleet/v1/units?nextPageToken={t}"),
                None => break,
            }
        }
        if launched == n {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "only {launched}/{n} launched after 120 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let all = t0.elapsed();
    let req1 = grpc_handled(&etcd);
    println!("units: {n} on 3 machines, one etcd");
    println!("submitted (PUT, 4 client threads): {submitted:.2?}");
    println!("time to all launched: {all:.2?} ({polls} list polls)");
    println!(
        "etcd gRPC messages received: {:.0} total, {:.2} per unit (API reads of the polling client included)",
        req1 - req0,
        (req1 - req0) / n as f64
    );
    for (i, p) in procs.iter().enumerate() {
        let (cpu, rss) = proc_cpu_rss(p.0.id());
        println!(
            "clusterd {}: CPU {:.2} s during the run, RSS {} KiB",
            ids[i],
            cpu - cpu0[i],
            rss
        );
    }
    drop(procs);
    let _ = std::fs::remove_dir_all(&dir);
}
