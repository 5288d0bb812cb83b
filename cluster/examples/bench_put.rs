//! Where a fleet API request's time goes: one clusterd alone (no init, so
//! no agent or engine writes: only the API's) on one real etcd, C clients
//! on kept connections, each phase N requests in all:
//!
//! - `create`: new units (`201`);
//! - `desired`: `{"desiredState":"loaded"}` on existing units (`204`, what
//!   fleetctl's `stop`/`load` send);
//! - `same-options`: the same options again with `launched` (`204`);
//! - `replace`: new options (`201`);
//! - `delete`: `DELETE` (`204`).
//!
//! Per phase: requests per second, each request's latency (median and
//! 90th percentile), and per request etcd's transactions, range reads and
//! WAL syncs (from its own metrics), and the WAL syncs' mean time.
//!
//! ```text
//! cargo build --release -p flotilla-cluster --bins --examples
//! target/release/examples/bench_put [--units N] [--clients C]
//! ```

#[path = "../../tests/src/etcd.rs"]
#[allow(dead_code)]
mod etcd;
#[path = "../../tests/tests/cluster/support/http.rs"]
mod http;

use http::Conn;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Proc(Child);
impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// etcd's counters now: transactions, range reads, WAL syncs and their
/// seconds.
fn counters(e: &etcd::Etcd) -> [f64; 4] {
    let Ok(mut s) = std::net::TcpStream::connect(e.url().trim_start_matches("http://")) else {
        return [0.0; 4];
    };
    let _ = s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let sum = |prefix: &str, having: &str| -> f64 {
        out.lines()
            .filter(|l| l.starts_with(prefix) && l.contains(having))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    };
    [
        sum("grpc_server_handled_total{", "grpc_method=\"Txn\""),
        sum("grpc_server_handled_total{", "grpc_method=\"Range\""),
        sum("etcd_disk_wal_fsync_duration_seconds_count", ""),
        sum("etcd_disk_wal_fsync_duration_seconds_sum", ""),
    ]
}

fn body(desired: &str, exec: &str) -> String {
    format!(
        "{{\"desiredState\":\"{desired}\",\"options\":[{{\"section\":\"Service\",\"name\":\"ExecStart\",\"value\":\"{exec}\"}}]}}\n"
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut units = 2000;
    let mut clients = 8;
    let mut i = 0;
    while i < args.len() {
        let v = || {
            args.get(i + 1)
                .and_then(|v| v.parse::<usize>().ok())
                .expect("a number after the flag")
        };
        match args[i].as_str() {
            "--units" => units = v(),
            "--clients" => clients = v().max(1),
            other => panic!("unknown argument {other}"),
        }
        i += 2;
    }
    let exe = std::env::current_exe().expect("exe");
    let clusterd: PathBuf = exe
        .parent()
        .and_then(|p| p.parent())
        .expect("target dir")
        .join("clusterd");
    let etcd = etcd::Etcd::start();
    let dir = std::env::temp_dir().join(format!("flotilla-bench-put-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let sock = dir.join("api.sock");
    let log = std::fs::File::create(dir.join("clusterd.log")).expect("log");
    let _cd = Proc(
        Command::new(&clusterd)
            .args(["--etcd", &etcd.url(), "--machine-id", "benchput"])
            .arg("--control")
            .arg(dir.join("no-init.sock"))
            .arg("--api-listen")
            .arg(format!("unix://{}", sock.display()))
            .stdin(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("clusterd"),
    );
    let up = Instant::now();
    while Conn::new(&sock).request("GET", "/fleet/v1/units", None).0 != 200 {
        assert!(up.elapsed() < Duration::from_secs(30), "clusterd API");
        std::thread::sleep(Duration::from_millis(20));
    }
    println!(
        "{units} requests per phase from {clients} clients, one clusterd alone, one etcd (load average {})",
        std::fs::read_to_string("/proc/loadavg").unwrap_or_default().split_whitespace().next().unwrap_or("?")
    );
    println!("| phase | answer | requests/s | latency median / p90 | etcd txns / reads / WAL syncs per request | WAL sync mean |");
    println!("|---|---|---|---|---|---|");
    type Req = fn(usize) -> (&'static str, Option<String>);
    let phases: [(&str, u16, Req); 5] = [
        ("create", 201, |i| {
            ("PUT", Some(body("inactive", &format!("/bin/sleep {i}"))))
        }),
        ("desired", 204, |_| {
            ("PUT", Some("{\"desiredState\":\"loaded\"}\n".into()))
        }),
        ("same-options", 204, |i| {
            ("PUT", Some(body("launched", &format!("/bin/sleep {i}"))))
        }),
        ("replace", 201, |i| {
            (
                "PUT",
                Some(body("launched", &format!("/bin/sleep {}", i + 1))),
            )
        }),
        ("delete", 204, |_| ("DELETE", None)),
    ];
    for (phase, want, req) in phases {
        let c0 = counters(&etcd);
        let t0 = Instant::now();
        let per = units.div_ceil(clients);
        let threads: Vec<_> = (0..clients)
            .map(|c| {
                let sock = sock.clone();
                std::thread::spawn(move || {
                    let mut conn = Conn::new(&sock);
                    let mut lat = Vec::new();
                    for i in (c * per)..((c + 1) * per).min(units) {
                        let (method, b) = req(i);
                        let path = format!("/fleet/v1/units/put-{i:05}.service");
                        let t = Instant::now();
                        let (code, text) = conn.request(method, &path, b.as_deref());
                        lat.push(t.elapsed());
                        assert_eq!(code, want, "{phase} {path}: {text}");
                    }
                    lat
                })
            })
            .collect();
        let mut lat: Vec<Duration> = threads
            .into_iter()
            .flat_map(|t| t.join().expect("client"))
            .collect();
        let el = t0.elapsed();
        let c1 = counters(&etcd);
        lat.sort();
        let n = units as f64;
        let syncs = c1[2] - c0[2];
        println!(
            "| {phase} | {want} | {:.0} | {:.2} / {:.2} ms | {:.2} / {:.2} / {:.2} | {:.2} ms |",
            n / el.as_secs_f64(),
            lat[lat.len() / 2].as_secs_f64() * 1000.0,
            lat[lat.len() * 9 / 10].as_secs_f64() * 1000.0,
            (c1[0] - c0[0]) / n,
            (c1[1] - c0[1]) / n,
            syncs / n,
            if syncs > 0.0 {
                (c1[3] - c0[3]) / syncs * 1000.0
            } else {
                0.0
            },
        );
    }
    drop(etcd);
    let _ = std::fs::remove_dir_all(&dir);
}
