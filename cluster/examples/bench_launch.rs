//! Benchmark of the cluster at scale: N units submitted through the fleet
//! API and launched across M machines on one real etcd, then a listing of
//! everything, a global unit, an idle spell and a lost machine.
//!
//! Each machine is a real `clusterd` (from the same target dir) with a
//! stand-in of its init (`bench/standin.rs`: the control protocol without
//! processes), so the figures are clusterd's and etcd's, not process
//! start-up; with `--real-inits`, a real `init` from the same target dir
//! (`bench/real_init.rs`), which runs a `sleep` for every unit it is given.
//! Figures printed for each run:
//!
//! - submit: the PUTs (C client threads, kept connections), and first PUT
//!   to every unit `launched` in the API;
//! - etcd gRPC messages and bytes (both ways) per unit during the launch,
//!   and its transactions, reads, WAL syncs and events sent to watchers,
//!   from etcd's own metrics;
//! - CPU of the engine's leader, of the clusterd serving the API, and of
//!   the other agents (min/median/max), and their RSS;
//! - `GET /fleet/v1/units` and `/fleet/v1/state` over all pages;
//! - CPU of every clusterd over 10 s when nothing changes;
//! - a global unit: PUT to running on every machine;
//! - a machine killed (clusterd SIGKILL, its stand-in gone): time until
//!   each of its units runs on another machine, once, and is `launched`
//!   there in the API (the target: within 2x the agent TTL).
//!
//! ```text
//! cargo build --release -p flotilla-cluster --bins --examples
//! target/release/examples/bench_launch [--units N] [--machines M] [--clients C] [--ttl SECS] [--repeat R]
//!     [--spread] [--no-committer] [--tls | --tcp] [--new-connections] [--real-inits] [--reserve]
//! target/release/examples/bench_launch --matrix     # 1k and 10k units on 3, 30 and 100 machines
//! target/release/examples/bench_launch --units 10000 --machines 100 --repeat 3
//! target/release/examples/bench_launch --units 10000 --machines 100 --reserve
//! ```
//!
//! `--spread` puts each client on another machine's API (client t on
//! machine t), instead of all on the first machine's. Every clusterd
//! advertises its API (`--api-advertise`), so that the engine's leader
//! commits every API's unit writes (`docs/cluster.md`, "One committer");
//! `--no-committer` leaves that out: each API commits its own writes.
//!
//! `--tls` makes a CA and a certificate for 127.0.0.1 (with the `openssl`
//! command) and has every API listen on a loopback TCP port with TLS and
//! client certificates, advertised as `https://127.0.0.1:PORT`: the
//! clients and the forwarded writes then go over TLS (kept connections),
//! as between hosts.
//!
//! `--tcp` has every API listen on a loopback TCP port in plain HTTP,
//! advertised as `tcp://127.0.0.1:PORT`. `--new-connections` has each
//! client open a new connection for every request (as `curl` or
//! `fleetctl` run once per unit), instead of keeping one.
//!
//! `--real-inits` needs the init built beside clusterd (`cargo build
//! --release -p flotilla-init --bin init`). Issue 60's figure:
//! `--units 10000 --machines 100 --clients 10 --spread --tcp
//! --new-connections --real-inits`.
//!
//! `--reserve` gives every machine `--capacity memory=4096,cores=8` and
//! every unit `MemoryReservation=32` and `CoresReservation=5`: placement by
//! fit, with room for all (and for a lost machine's units elsewhere).

#[path = "../../tests/src/etcd.rs"]
#[allow(dead_code)]
mod etcd;
#[path = "../../tests/tests/cluster/support/http.rs"]
mod http;
#[path = "../../tests/src/procs.rs"]
#[allow(dead_code)]
mod procs;
#[path = "bench/real_init.rs"]
mod real_init;
#[path = "bench/standin.rs"]
mod standin;
#[path = "../../tests/tests/cluster/support/tls.rs"]
#[allow(dead_code)]
mod tls;

use http::Conn;
use real_init::Host;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Every process the benchmark started, killed even when it panics (the
/// release profile aborts on panic: no destructor runs, the hook does).
static PIDS: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn kill_all_started() {
    for p in PIDS.lock().unwrap_or_else(|e| e.into_inner()).drain(..) {
        // SAFETY: kill(2) on a PID this process started, and on the
        // processes under it (a real init's units).
        unsafe { libc::kill(p as i32, libc::SIGSTOP) };
        for d in procs::descendants(p as i32) {
            unsafe { libc::kill(d, libc::SIGKILL) };
        }
        unsafe { libc::kill(p as i32, libc::SIGKILL) };
    }
}

struct Proc(Child);
impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[derive(Clone, Copy)]
struct Config {
    units: usize,
    machines: usize,
    clients: usize,
    ttl: u64,
    reserve: bool,
    spread: bool,
    committer: bool,
    tls: bool,
    /// APIs on loopback TCP ports in plain HTTP (`--tcp`).
    tcp: bool,
    /// A new connection for every request (`--new-connections`).
    fresh: bool,
    /// Real inits instead of stand-ins (`--real-inits`).
    real: bool,
}

/// The APIs over TLS (`--tls`): the client's configuration and each
/// machine's port.
struct Tls {
    client: Arc<tokio_rustls::rustls::ClientConfig>,
    ports: Vec<u16>,
    cert: PathBuf,
    key: PathBuf,
    ca: PathBuf,
}

impl Tls {
    fn new(dir: &Path, machines: usize) -> Tls {
        let pki = tls::Pki::new(&dir.join("pki"), "bench-ca");
        let (cert, key) = pki.issue("api", &["IP:127.0.0.1"]);
        let files = flotilla_cluster::listen::ApiTls {
            cert: cert.clone(),
            key: key.clone(),
            client_ca: pki.ca.clone(),
        };
        Tls {
            client: flotilla_cluster::forward::tls_client_config(&files).expect("TLS client"),
            ports: (0..machines).map(|_| etcd::free_port()).collect(),
            cert,
            key,
            ca: pki.ca,
        }
    }

    /// A kept TLS connection to machine `i`'s API.
    fn conn(&self, i: usize) -> Conn {
        let (client, port) = (self.client.clone(), self.ports[i]);
        Conn::with(Box::new(move || {
            use tokio_rustls::rustls::{pki_types::ServerName, ClientConnection, StreamOwned};
            let s = std::net::TcpStream::connect(("127.0.0.1", port))?;
            s.set_nodelay(true)?;
            let name = ServerName::IpAddress(std::net::Ipv4Addr::LOCALHOST.into());
            let c = ClientConnection::new(client.clone(), name).map_err(std::io::Error::other)?;
            Ok(Box::new(StreamOwned::new(c, s)) as Box<dyn http::Stream>)
        }))
    }
}

/// `n` free loopback ports below the kernel's ephemeral range: a port
/// that the kernel picked (and that was free a moment ago) may be taken
/// by one of the many connections to etcd before its API binds it.
fn fixed_ports(n: usize) -> Vec<u16> {
    let start = 20_000 + (std::process::id() % 4_000) as u16;
    let ports: Vec<u16> = (start..32_000)
        .filter(|p| std::net::TcpListener::bind(("127.0.0.1", *p)).is_ok())
        .take(n)
        .collect();
    assert_eq!(ports.len(), n, "free loopback ports below 32000");
    ports
}

/// A unit's reservation with `--reserve`.
const RESERVATION: &str = ",{\"section\":\"X-Fleet\",\"name\":\"MemoryReservation\",\"value\":\"32\"},{\"section\":\"X-Fleet\",\"name\":\"CoresReservation\",\"value\":\"5\"}";

/// The figures of one run.
#[derive(Default, Clone)]
struct Figures {
    units: usize,
    machines: usize,
    submit: Duration,
    launched: Duration,
    msgs_per_unit: f64,
    bytes_per_unit: f64,
    /// etcd's counters over the launch, and over its two phases: while the
    /// PUTs go on, and from the last PUT's answer to all launched.
    etcd: Traffic,
    etcd_submit: Traffic,
    etcd_settle: Traffic,
    /// etcd's counters over the idle spell.
    etcd_idle: Traffic,
    /// The machine's load average (1 min) when the run started and ended.
    load: (f64, f64),
    leader_cpu: f64,
    api_cpu: f64,
    etcd_cpu: f64,
    etcd_idle_cpu: f64,
    bench_cpu: f64,
    /// The real inits' own CPU during the launch, all together.
    inits_cpu: f64,
    /// The share of the machine's CPU time that was busy during the launch.
    machine_busy: f64,
    /// The CPU of the units' processes (real inits only).
    units_cpu: f64,
    /// First PUT to every unit running on its machine.
    running: Duration,
    agent_cpu: (f64, f64, f64),
    agent_rss: (u64, u64, u64),
    list_units: Duration,
    list_states: Duration,
    idle_cpu_total: f64,
    idle_cpu_max: f64,
    global: Duration,
    moved: Duration,
    moved_units: usize,
}

fn proc_cpu(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15, 11 and 12 after the command.
    (ticks(11) + ticks(12)) / 100.0
}

fn proc_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// What etcd's own metrics count, at one moment.
#[derive(Default, Clone, Copy)]
struct Traffic {
    /// gRPC messages received (requests, watch and keep-alive messages).
    msgs: f64,
    /// Bytes received and sent.
    bytes: f64,
    /// Transactions, plain puts and range reads handled.
    txns: f64,
    puts: f64,
    ranges: f64,
    /// WAL syncs (each a disk flush; etcd groups the proposals that
    /// arrive together into one), and the seconds they took.
    fsyncs: f64,
    fsync_secs: f64,
    /// Events sent to watchers.
    watch_events: f64,
}

impl std::ops::Sub for Traffic {
    type Output = Traffic;
    fn sub(self, o: Traffic) -> Traffic {
        Traffic {
            msgs: self.msgs - o.msgs,
            bytes: self.bytes - o.bytes,
            txns: self.txns - o.txns,
            puts: self.puts - o.puts,
            ranges: self.ranges - o.ranges,
            fsyncs: self.fsyncs - o.fsyncs,
            fsync_secs: self.fsync_secs - o.fsync_secs,
            watch_events: self.watch_events - o.watch_events,
        }
    }
}

/// etcd's counters now, from its `/metrics`.
fn etcd_traffic(e: &etcd::Etcd) -> Traffic {
    let Ok(mut s) = std::net::TcpStream::connect(e.url().trim_start_matches("http://")) else {
        return Traffic::default();
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
    let handled = |method: &str| {
        sum(
            "grpc_server_handled_total{",
            &format!("grpc_method=\"{method}\""),
        )
    };
    Traffic {
        msgs: sum("grpc_server_msg_received_total{", ""),
        bytes: sum("etcd_network_client_grpc_received_bytes_total", "")
            + sum("etcd_network_client_grpc_sent_bytes_total", ""),
        txns: handled("Txn"),
        puts: handled("Put"),
        ranges: handled("Range"),
        fsyncs: sum("etcd_disk_wal_fsync_duration_seconds_count", ""),
        fsync_secs: sum("etcd_disk_wal_fsync_duration_seconds_sum", ""),
        watch_events: sum("etcd_debugging_mvcc_events_total", ""),
    }
}

/// The machine's CPU time so far, in seconds: busy (every state but idle
/// and iowait) and all, over all cores, from `/proc/stat`.
fn machine_cpu() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: Vec<f64> = stat
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .filter_map(|t| t.parse().ok())
        .collect();
    let all: f64 = ticks.iter().take(8).sum();
    let idle = ticks.get(3).unwrap_or(&0.0) + ticks.get(4).unwrap_or(&0.0);
    ((all - idle) / 100.0, all / 100.0)
}

/// The CPU of every process under the real inits (the units' `sleep`s,
/// from clone to now), in seconds.
fn units_cpu(inits: &[u32]) -> f64 {
    inits
        .iter()
        .flat_map(|p| procs::descendants(*p as i32))
        .map(|p| {
            // Nanoseconds on a CPU (`/proc/PID/schedstat`): a `sleep`'s
            // start takes less than the clock tick of `stat`.
            std::fs::read_to_string(format!("/proc/{p}/schedstat"))
                .ok()
                .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
                .unwrap_or(0.0)
                / 1e9
        })
        .sum()
}

/// The load average over the last minute.
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

fn spread<T: Copy + PartialOrd>(mut v: Vec<T>) -> (T, T, T) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    (v[0], v[v.len() / 2], v[v.len() - 1])
}

/// The machine whose clusterd last said it leads.
fn leader(dir: &Path, ids: &[String]) -> Option<usize> {
    ids.iter().position(|id| {
        let log = std::fs::read_to_string(dir.join(format!("{id}.log"))).unwrap_or_default();
        let lead = log.rfind("engine: leading");
        let down = log.rfind("engine: stepping down");
        lead.is_some() && lead > down
    })
}

/// How many items of the listing at `path` (every page; their array is
/// `key`) satisfy `pred`; `None` when a page is not a 200.
fn listed(
    api: &mut Conn,
    path: &str,
    key: &str,
    pred: impl Fn(&serde_json::Value) -> bool,
) -> Option<usize> {
    let mut n = 0;
    let mut token = String::new();
    loop {
        let sep = if path.contains('?') { '&' } else { '?' };
        let url = if token.is_empty() {
            path.to_string()
        } else {
            format!("{path}{sep}nextPageToken={token}")
        };
        let (c, b) = api.request("GET", &url, None);
        if c != 200 {
            return None;
        }
        let v: serde_json::Value = serde_json::from_str(&b).ok()?;
        n += v[key]
            .as_array()
            .map(|a| a.iter().filter(|i| pred(i)).count())
            .unwrap_or(0);
        match v["nextPageToken"].as_str() {
            Some(t) if !t.is_empty() => token = t.to_string(),
            _ => return Some(n),
        }
    }
}

fn unit_body(i: usize, extra: &str) -> String {
    format!(
        "{{\"desiredState\":\"launched\",\"options\":[{{\"section\":\"Service\",\"name\":\"ExecStart\",\"value\":\"/bin/sleep {}\"}}{extra}]}}\n",
        // Long enough to run through the benchmark under a real init.
        1_000_000 + i
    )
}

fn run(clusterd: &Path, init: Option<&Path>, cfg: Config) -> Figures {
    let etcd = etcd::Etcd::start();
    if let Some(p) = etcd.pid() {
        PIDS.lock().unwrap().push(p);
    }
    let dir = std::env::temp_dir().join(format!(
        "flotilla-bench-{}-{}",
        std::process::id(),
        cfg.units
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let ids: Vec<String> = (0..cfg.machines).map(|i| format!("bench{i:03}")).collect();
    let changed = Arc::new((Mutex::new(0u64), Condvar::new()));
    let mut hosts = Vec::new();
    let mut procs = Vec::new();
    let tls = cfg.tls.then(|| Tls::new(&dir, cfg.machines));
    let tcp_ports: Vec<u16> = if cfg.tcp {
        fixed_ports(cfg.machines)
    } else {
        vec![0; cfg.machines]
    };
    // Where machine i's API listens, and (with a committer) what it
    // advertises.
    let api_flags = |i: usize| -> Vec<String> {
        let sock = format!("unix://{}", dir.join(format!("{}.sock", ids[i])).display());
        let (listen, advertise) = match &tls {
            None if cfg.tcp => {
                let tcp = format!("tcp://127.0.0.1:{}", tcp_ports[i]);
                (tcp.clone(), tcp)
            }
            None => (sock.clone(), sock),
            Some(t) => (
                format!("tcp://127.0.0.1:{}", t.ports[i]),
                format!("https://127.0.0.1:{}", t.ports[i]),
            ),
        };
        let mut v = vec!["--api-listen".to_string(), listen];
        if let Some(t) = &tls {
            for (flag, file) in [
                ("--api-cert", &t.cert),
                ("--api-key", &t.key),
                ("--api-client-ca", &t.ca),
            ] {
                v.push(flag.to_string());
                v.push(file.display().to_string());
            }
        }
        // Advertised by default: without the committer, `none`.
        v.push("--api-advertise".to_string());
        v.push(if cfg.committer {
            advertise
        } else {
            "none".into()
        });
        v
    };
    // A kept connection to machine i's API.
    let conn = |i: usize| match &tls {
        None if cfg.tcp => {
            let port = tcp_ports[i];
            Conn::with(Box::new(move || {
                let s = std::net::TcpStream::connect(("127.0.0.1", port))?;
                s.set_nodelay(true)?;
                Ok(Box::new(s) as Box<dyn http::Stream>)
            }))
            .with_host(&format!("127.0.0.1:{port}"))
        }
        None => Conn::new(&dir.join(format!("{}.sock", ids[i]))),
        Some(t) => t.conn(i),
    };
    for (i, id) in ids.iter().enumerate() {
        let ctl = dir.join(format!("{id}.init.sock"));
        hosts.push(Host::start(init, &dir, id, &ctl, changed.clone()));
        let log = std::fs::File::create(dir.join(format!("{id}.log"))).expect("log");
        let child = Command::new(clusterd)
            .args(["--etcd", &etcd.url(), "--machine-id", id])
            .args(if cfg.reserve {
                &["--capacity", "memory=4096,cores=8"][..]
            } else {
                &[]
            })
            .args(["--agent-ttl", &format!("{}s", cfg.ttl), "--control"])
            .arg(&ctl)
            .args(api_flags(i))
            .stdin(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("clusterd");
        PIDS.lock().unwrap().push(child.id());
        procs.push(Proc(child));
    }
    let pids: Vec<u32> = procs.iter().map(|p| p.0.id()).collect();
    let mut api = conn(0);
    let up = Instant::now();
    // A minute, and longer for a large cluster starting on a small machine.
    let up_limit = Duration::from_secs(60) + Duration::from_millis(200) * cfg.machines as u32;
    loop {
        let n = listed(&mut api, "/fleet/v1/machines", "machines", |_| true);
        if n == Some(cfg.machines) {
            break;
        }
        assert!(
            up.elapsed() < up_limit,
            "the cluster did not come up: {n:?} machines"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut f = Figures {
        units: cfg.units,
        machines: cfg.machines,
        ..Figures::default()
    };
    let load0 = load_average();

    // 1. Submit and launch.
    let cpu0: Vec<f64> = pids.iter().map(|p| proc_cpu(*p)).collect();
    let init_pids: Vec<u32> = hosts.iter().filter_map(Host::pid).collect();
    let inits0: f64 = init_pids.iter().map(|p| proc_cpu(*p)).sum();
    let machine0 = machine_cpu();
    let etcd_pid = etcd.pid().unwrap_or(0);
    let etcd0 = proc_cpu(etcd_pid);
    let me = std::process::id();
    let bench0 = proc_cpu(me);
    let traffic0 = etcd_traffic(&etcd);
    let t0 = Instant::now();
    let per = cfg.units.div_ceil(cfg.clients);
    let threads: Vec<_> = (0..cfg.clients)
        .map(|t| {
            // --spread: client t on machine t's API (of the first ones).
            let mut c = conn(if cfg.spread { t % ids.len() } else { 0 });
            let n = cfg.units;
            std::thread::spawn(move || {
                for i in (t * per)..((t + 1) * per).min(n) {
                    let path = format!("/fleet/v1/units/bench-{i:05}.service");
                    let extra = if cfg.reserve { RESERVATION } else { "" };
                    let (code, b) = c.request("PUT", &path, Some(&unit_body(i, extra)));
                    assert_eq!(code, 201, "PUT {path}: {b}");
                    if cfg.fresh {
                        c.close();
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("client thread");
    }
    f.submit = t0.elapsed();
    let traffic_submitted = etcd_traffic(&etcd);
    let total = || hosts.iter().map(Host::running_count).sum::<usize>();
    assert!(
        Host::wait_until(&hosts, Duration::from_secs(600), || total() >= cfg.units),
        "only {}/{} units running after 600 s",
        total(),
        cfg.units
    );
    f.running = t0.elapsed();
    loop {
        let (units, _) = http::all_units(&mut api);
        let launched = units
            .iter()
            .filter(|u| u.current_state.as_deref() == Some("launched"))
            .count();
        if launched == cfg.units {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(600),
            "{launched}/{} launched",
            cfg.units
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    f.launched = t0.elapsed();
    let traffic1 = etcd_traffic(&etcd);
    f.etcd_cpu = proc_cpu(etcd_pid) - etcd0;
    f.bench_cpu = proc_cpu(me) - bench0;
    f.inits_cpu = init_pids.iter().map(|p| proc_cpu(*p)).sum::<f64>() - inits0;
    let machine1 = machine_cpu();
    f.machine_busy = (machine1.0 - machine0.0) / (machine1.1 - machine0.1).max(0.01);
    f.units_cpu = units_cpu(&init_pids);
    f.etcd = traffic1 - traffic0;
    f.etcd_submit = traffic_submitted - traffic0;
    f.etcd_settle = traffic1 - traffic_submitted;
    f.msgs_per_unit = f.etcd.msgs / cfg.units as f64;
    f.bytes_per_unit = f.etcd.bytes / cfg.units as f64;
    let lead = leader(&dir, &ids).unwrap_or(0);
    let cpu: Vec<f64> = pids
        .iter()
        .zip(&cpu0)
        .map(|(p, c0)| proc_cpu(*p) - c0)
        .collect();
    f.leader_cpu = cpu[lead];
    f.api_cpu = cpu[0];
    let others: Vec<usize> = (0..cfg.machines)
        .filter(|i| *i != lead && *i != 0)
        .collect();
    let pick = |v: &[usize]| if v.is_empty() { vec![0] } else { v.to_vec() };
    let others = pick(&others);
    f.agent_cpu = spread(others.iter().map(|i| cpu[*i]).collect());
    f.agent_rss = spread(pids.iter().map(|p| proc_rss_kib(*p)).collect());

    // 2. Listing everything, page by page.
    let t = Instant::now();
    let (units, pages) = http::all_units(&mut api);
    f.list_units = t.elapsed();
    assert_eq!((units.len(), pages), (cfg.units, cfg.units.div_ceil(100)));
    if cfg.reserve {
        // Nothing overcommitted: 32 MiB and 0.05 cores a unit, in 4096 MiB
        // and 8 cores a machine.
        let mut per: BTreeMap<String, u64> = BTreeMap::new();
        for u in &units {
            *per.entry(u.machine_id.clone().unwrap_or_default())
                .or_default() += 1;
        }
        for (m, n) in &per {
            assert!(
                !m.is_empty() && n * 32 <= 4096 && n * 5 <= 800,
                "{n} units of 32 MiB on {m:?}"
            );
        }
    }
    let t = Instant::now();
    let (states, _) = http::all_states(&mut api);
    f.list_states = t.elapsed();
    assert_eq!(states.len(), cfg.units);

    // 3. Nothing changes for 10 s.
    std::thread::sleep(Duration::from_secs(2));
    let idle0: Vec<f64> = pids.iter().map(|p| proc_cpu(*p)).collect();
    let etcd_idle0 = proc_cpu(etcd_pid);
    let idle_traffic0 = etcd_traffic(&etcd);
    std::thread::sleep(Duration::from_secs(10));
    f.etcd_idle_cpu = proc_cpu(etcd_pid) - etcd_idle0;
    f.etcd_idle = etcd_traffic(&etcd) - idle_traffic0;
    let idle: Vec<f64> = pids
        .iter()
        .zip(&idle0)
        .map(|(p, c0)| proc_cpu(*p) - c0)
        .collect();
    f.idle_cpu_total = idle.iter().sum();
    f.idle_cpu_max = idle.iter().cloned().fold(0.0, f64::max);

    // 4. A global unit on every machine.
    let t = Instant::now();
    let g = ",{\"section\":\"X-Fleet\",\"name\":\"Global\",\"value\":\"true\"}";
    let (code, b) = api.request(
        "PUT",
        "/fleet/v1/units/global.service",
        Some(&unit_body(0, g)),
    );
    assert_eq!(code, 201, "{b}");
    let everywhere = || {
        hosts
            .iter()
            .all(|s| s.running().iter().any(|u| u == "global.service"))
    };
    assert!(
        Host::wait_until(&hosts, Duration::from_secs(120), everywhere),
        "global unit"
    );
    loop {
        let active = listed(
            &mut api,
            "/fleet/v1/state?unitName=global.service",
            "states",
            |s| s["systemdActiveState"] == "active",
        );
        if active == Some(cfg.machines) {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(120),
            "global states: {active:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    f.global = t.elapsed();

    // 5. A machine dies (neither the leader nor the one serving the API).
    let victim = (0..cfg.machines)
        .rev()
        .find(|i| *i != lead && *i != 0)
        .unwrap_or(cfg.machines - 1);
    let lost: BTreeSet<String> = hosts[victim]
        .running()
        .into_iter()
        .filter(|u| u != "global.service")
        .collect();
    f.moved_units = lost.len();
    let t = Instant::now();
    drop(procs.remove(victim));
    hosts[victim].kill();
    let once_elsewhere = || {
        let mut count: BTreeMap<String, usize> = BTreeMap::new();
        for (i, s) in hosts.iter().enumerate() {
            if i == victim {
                continue;
            }
            for u in s.running() {
                if lost.contains(&u) {
                    *count.entry(u).or_default() += 1;
                }
            }
        }
        count.len() == lost.len() && count.values().all(|c| *c == 1)
    };
    assert!(
        Host::wait_until(&hosts, Duration::from_secs(10 * cfg.ttl), once_elsewhere),
        "the lost machine's units did not run elsewhere"
    );
    loop {
        let (units, _) = http::all_units(&mut api);
        let moved = units.iter().filter(|u| lost.contains(&u.name)).all(|u| {
            u.current_state.as_deref() == Some("launched")
                && u.machine_id.as_deref() != Some(&ids[victim])
        });
        if moved {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10 * cfg.ttl),
            "moved in the API"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    f.moved = t.elapsed();
    f.load = (load0, load_average());

    drop(procs);
    drop(etcd);
    PIDS.lock().unwrap().clear();
    for h in &mut hosts {
        h.kill();
    }
    let _ = std::fs::remove_dir_all(&dir);
    f
}

fn print(f: &Figures, ttl: u64) {
    println!(
        "== {} units on {} machines, one etcd (load average {:.1} at the start, {:.1} at the end)",
        f.units, f.machines, f.load.0, f.load.1
    );
    println!("submitted (PUT): {:.2?}", f.submit);
    println!(
        "first PUT to all running on their machines: {:.2?}; to all launched in the API: {:.2?}",
        f.running, f.launched
    );
    println!(
        "etcd per unit: {:.2} gRPC messages, {:.0} bytes",
        f.msgs_per_unit, f.bytes_per_unit
    );
    for (phase, t) in [
        ("during the launch", &f.etcd),
        ("  while the PUTs went on", &f.etcd_submit),
        ("  after the last PUT", &f.etcd_settle),
        ("idle 10 s", &f.etcd_idle),
    ] {
        println!(
            "etcd {phase}: {:.0} gRPC messages, {:.0} KiB, {:.0} transactions, {:.0} puts, {:.0} reads, {:.0} WAL syncs ({:.2} s), {:.0} events sent to watchers",
            t.msgs, t.bytes / 1024.0, t.txns, t.puts, t.ranges, t.fsyncs, t.fsync_secs, t.watch_events
        );
    }
    println!(
        "CPU during the launch: leader {:.2} s, API {:.2} s, other agents {:.2}/{:.2}/{:.2} s (min/median/max), etcd {:.2} s; the benchmark's clients and stand-ins {:.2} s",
        f.leader_cpu, f.api_cpu, f.agent_cpu.0, f.agent_cpu.1, f.agent_cpu.2, f.etcd_cpu, f.bench_cpu
    );
    if f.inits_cpu > 0.0 {
        println!(
            "CPU of the real inits during the launch: {:.2} s in all; of their units' processes: {:.2} s",
            f.inits_cpu, f.units_cpu
        );
    }
    println!(
        "the machine's CPU during the launch: {:.0}% busy",
        100.0 * f.machine_busy
    );
    println!(
        "RSS of the clusterds: {}/{}/{} KiB (min/median/max)",
        f.agent_rss.0, f.agent_rss.1, f.agent_rss.2
    );
    println!(
        "GET /fleet/v1/units, all {} pages: {:.2?}; /fleet/v1/state: {:.2?}",
        f.units.div_ceil(100),
        f.list_units,
        f.list_states
    );
    println!(
        "idle 10 s: CPU of all {} clusterds {:.2} s in all, {:.2} s at most for one; etcd {:.2} s",
        f.machines, f.idle_cpu_total, f.idle_cpu_max, f.etcd_idle_cpu
    );
    println!(
        "global unit running on all {} machines after {:.2?}",
        f.machines, f.global
    );
    println!(
        "machine killed: its {} units launched elsewhere after {:.2?} (TTL {ttl} s, target {} s)",
        f.moved_units,
        f.moved,
        2 * ttl
    );
}

fn main() {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("bench_launch: {info}");
        kill_all_started();
    }));
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut cfg = Config {
        units: 1000,
        machines: 3,
        clients: 16,
        ttl: 10,
        reserve: false,
        spread: false,
        committer: true,
        tls: false,
        tcp: false,
        fresh: false,
        real: false,
    };
    let mut matrix = false;
    let mut repeat = 1;
    let mut i = 0;
    while i < args.len() {
        let v = || {
            args.get(i + 1)
                .and_then(|v| v.parse().ok())
                .expect("a number after the flag")
        };
        match args[i].as_str() {
            "--units" => cfg.units = v(),
            "--machines" => cfg.machines = v(),
            "--clients" => cfg.clients = v(),
            "--ttl" => cfg.ttl = v() as u64,
            "--repeat" => repeat = v(),
            // A switch: takes no value.
            flag => {
                let (on, to) = match flag {
                    "--matrix" => (&mut matrix, true),
                    "--reserve" => (&mut cfg.reserve, true),
                    "--spread" => (&mut cfg.spread, true),
                    "--tls" => (&mut cfg.tls, true),
                    "--no-committer" => (&mut cfg.committer, false),
                    "--tcp" => (&mut cfg.tcp, true),
                    "--new-connections" => (&mut cfg.fresh, true),
                    "--real-inits" => (&mut cfg.real, true),
                    other => panic!("unknown argument {other}"),
                };
                *on = to;
                i += 1;
                continue;
            }
        }
        i += 2;
    }
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
    let init = clusterd.with_file_name("init");
    assert!(
        !cfg.real || init.exists(),
        "build the init first: {}",
        init.display()
    );
    // A real init's units outlive it when it is killed: they come to the
    // benchmark, which kills them by PID.
    // SAFETY: prctl(2) on this process.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
    let runs: Vec<Config> = if matrix {
        [1000, 10_000]
            .into_iter()
            .flat_map(|units| {
                [3, 30, 100].into_iter().map(move |machines| Config {
                    units,
                    machines,
                    ..cfg
                })
            })
            .collect()
    } else {
        vec![cfg]
    };
    let runs: Vec<Config> = runs
        .into_iter()
        .flat_map(|c| std::iter::repeat_n(c, repeat))
        .collect();
    let mut all = Vec::new();
    for c in runs {
        let f = run(&clusterd, c.real.then_some(init.as_path()), c);
        println!(
            "clients: {} on {}{}{}; unit writes committed by {}; {}",
            c.clients,
            if c.spread { "one API each" } else { "one API" },
            if c.tls {
                " over TLS"
            } else if c.tcp {
                " over loopback TCP"
            } else {
                ""
            },
            if c.fresh {
                ", a new connection per request"
            } else {
                ", kept connections"
            },
            if c.committer {
                "the engine's leader"
            } else {
                "each API"
            },
            if c.real {
                "real inits running sleep"
            } else {
                "stand-in inits"
            }
        );
        print(&f, c.ttl);
        all.push(f);
    }
    if all.len() > 1 {
        println!("\n| units | machines | load | PUTs | to all launched | etcd msgs/unit | bytes/unit | etcd txns | CPU: leader / median agent / etcd | list units / states | idle CPU (all) | global | lost machine |");
        println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        for f in &all {
            println!(
                "| {} | {} | {:.1}–{:.1} | {:.2?} | {:.2?} | {:.2} | {:.0} | {:.0} | {:.2} / {:.2} / {:.2} s | {:.0?} / {:.0?} | {:.2} s | {:.2?} | {:.2?} ({} units) |",
                f.units, f.machines, f.load.0, f.load.1, f.submit, f.launched, f.msgs_per_unit,
                f.bytes_per_unit, f.etcd.txns, f.leader_cpu, f.agent_cpu.1, f.etcd_cpu,
                f.list_units, f.list_states, f.idle_cpu_total, f.global, f.moved, f.moved_units
            );
        }
    }
}
