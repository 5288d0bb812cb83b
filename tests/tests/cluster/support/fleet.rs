//! Many machines at once, for the tests at scale: [`Fleet`] starts N
//! machines (each a real init in supervisor mode running its own clusterd,
//! [`super::Machine`]) against one etcd, submits units in bulk through the
//! API from several clients (kept connections, [`super::http`]), and checks
//! that every launched unit runs exactly once: one init reports it
//! running, and exactly one process with its command line lives under the
//! machines' inits (and none for units that should not run).
//!
//! Every unit here runs `/bin/sleep N` with an N of its own, so a process
//! tells which unit (and which version of it) it is.

use super::http::Conn;
use super::{control_request, tempdir, Machine};
use flotilla_units::protocol::{Reply, Request};
use flotilla_units::state::UnitState;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a wait on 1,000 units may take before the test fails.
pub const LIMIT: Duration = Duration::from_secs(180);

/// The machines of a test.
pub struct Fleet {
    /// The machines, in ID order.
    pub machines: Vec<Machine>,
    /// Their IDs.
    pub ids: Vec<String>,
    /// Said first in a failure of [`Fleet::wait_exactly_once`] (the chaos
    /// soak's seed, which replays it); empty by default.
    pub context: String,
    _dir: tempfile::TempDir,
}

/// A unit's name.
pub fn name(i: usize) -> String {
    format!("u{i:04}.service")
}

/// The command a unit runs (its `version` tells a replaced file apart).
pub fn command(i: usize, version: usize) -> String {
    format!("/bin/sleep {}", 200_000 + version * 10_000 + i)
}

/// A PUT body launching unit `i` at `version`.
pub fn launch_body(i: usize, version: usize) -> String {
    super::unit_body("launched", &command(i, version), &[])
}

/// The PUTs that create units `range` (launched, version 0).
pub fn launch_requests(range: std::ops::Range<usize>) -> Vec<(String, String, Option<String>)> {
    range
        .map(|i| {
            (
                "PUT".to_string(),
                format!("/fleet/v1/units/{}", name(i)),
                Some(launch_body(i, 0)),
            )
        })
        .collect()
}

/// Waits until the API lists `n` units, all `launched`.
pub fn wait_all_launched(sock: &std::path::Path, n: usize, limit: Duration) {
    let mut c = Conn::new(sock);
    super::wait_for(limit, &format!("{n} units launched in the API"), || {
        let (units, _) = super::http::all_units(&mut c);
        (units.len() == n
            && units
                .iter()
                .all(|u| u.current_state.as_deref() == Some("launched")))
        .then_some(())
    });
}

/// A unit entity as the API returned it, without its options (the unit
/// file says nothing of where it got stuck).
fn without_options(body: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(body) {
        Ok(serde_json::Value::Object(mut o)) => {
            o.remove("options");
            serde_json::Value::Object(o).to_string()
        }
        _ => body.to_string(),
    }
}

/// The first 50 of `items`, and how many more there are.
fn listed<T: std::fmt::Debug>(items: &[T]) -> String {
    const SHOWN: usize = 50;
    match items.len().checked_sub(SHOWN) {
        Some(more) if more > 0 => format!("{:?} and {more} more", &items[..SHOWN]),
        _ => format!("{items:?}"),
    }
}

/// Live processes: (PID, parent, command line).
fn process_table() -> Vec<(i32, i32, String)> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let after = stat.rsplit_once(')')?.1;
            let mut f = after.split_whitespace();
            let state = f.next()?;
            if state == "Z" || state == "X" {
                return None;
            }
            let ppid = f.next()?.parse().ok()?;
            Some((pid, ppid, flotilla_tests::procs::cmdline(pid)))
        })
        .collect()
}

impl Fleet {
    /// Starts `n` machines against `etcd` (comma-separated URLs) with
    /// presence TTL `ttl`, and waits until the API lists them all.
    pub fn start(etcd: &str, n: usize, ttl: Duration) -> Fleet {
        Fleet::start_with(etcd, n, ttl, |_| Vec::new())
    }

    /// [`Fleet::start`], machine `m` with the more clusterd flags
    /// `extra(m's API socket)`.
    pub fn start_with(
        etcd: &str,
        n: usize,
        ttl: Duration,
        extra: impl Fn(&std::path::Path) -> Vec<String>,
    ) -> Fleet {
        let dir = tempdir();
        let ids: Vec<String> = (0..n).map(|i| format!("m{i:02}machine")).collect();
        let machines: Vec<Machine> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                Machine::start(
                    etcd,
                    dir.path(),
                    id,
                    &format!("rack=r{}", i % 3),
                    &format!("192.0.2.{}", i + 1),
                    &format!("{}s", ttl.as_secs()),
                    &extra(&dir.path().join(id).join("fleet.sock")),
                )
            })
            .collect();
        let f = Fleet {
            machines,
            ids,
            context: String::new(),
            _dir: dir,
        };
        f.machines[0].wait_api();
        super::wait_for(Duration::from_secs(60), "every machine", || {
            let (c, b) = f.machines[0].api("GET", "/fleet/v1/machines", None);
            (c == 200 && b.matches("\"id\"").count() == n).then_some(())
        });
        f
    }

    /// Machine `i`'s API socket.
    pub fn sock(&self, i: usize) -> PathBuf {
        self.machines[i].sock.clone()
    }

    /// Sends `requests` (method, path, body) through the APIs of the
    /// machines in `via`, from `clients` threads at once; a request that
    /// gets no answer or a 503 (etcd changing leaders) is sent again.
    /// Panics on any other unexpected status.
    pub fn send_all(
        &self,
        via: &[usize],
        clients: usize,
        requests: Vec<(String, String, Option<String>)>,
        done: &AtomicUsize,
    ) {
        let requests = Arc::new(requests);
        let next = Arc::new(AtomicUsize::new(0));
        std::thread::scope(|s| {
            for c in 0..clients {
                let sock = self.sock(via[c % via.len()]);
                let (requests, next) = (requests.clone(), next.clone());
                s.spawn(move || {
                    let mut conn = Conn::new(&sock);
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some((method, path, body)) = requests.get(i) else {
                            return;
                        };
                        let deadline = Instant::now() + LIMIT;
                        loop {
                            let (code, b) = conn.request(method, path, body.as_deref());
                            if matches!(code, 200 | 201 | 204) {
                                break;
                            }
                            assert!(
                                matches!(code, 0 | 503) && Instant::now() < deadline,
                                "{method} {path}: {code} {b}"
                            );
                            std::thread::sleep(Duration::from_millis(50));
                        }
                        done.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
        });
    }

    /// Creates units `range` (launched, version 0) from 10 clients.
    pub fn launch(&self, range: std::ops::Range<usize>) {
        self.send_all(
            &self.all(),
            10,
            launch_requests(range),
            &AtomicUsize::new(0),
        );
    }

    /// What the inits of `among` run: unit -> [(machine, PID)].
    pub fn running(&self, among: &[usize]) -> BTreeMap<String, Vec<(usize, i32)>> {
        let mut out: BTreeMap<String, Vec<(usize, i32)>> = BTreeMap::new();
        for &m in among {
            let Ok(Reply::List { units }) =
                control_request(&self.machines[m].init.control, Request::List)
            else {
                continue;
            };
            for u in units {
                if u.source == "transient:cluster"
                    && u.unit != "cluster"
                    && u.state == UnitState::Running
                {
                    if let Some(pid) = u.pid {
                        out.entry(u.unit).or_default().push((m, pid));
                    }
                }
            }
        }
        out
    }

    /// Every machine's index.
    pub fn all(&self) -> Vec<usize> {
        (0..self.machines.len()).collect()
    }

    /// Waits until exactly the units of `want` (name -> command) run, each
    /// once, on the machines of `among` (their inits say so); returns
    /// where they run.
    pub fn wait_exactly_once(
        &self,
        want: &BTreeMap<String, String>,
        among: &[usize],
    ) -> BTreeMap<String, (usize, i32)> {
        let deadline = Instant::now() + LIMIT;
        loop {
            let r = self.running(among);
            let ok = r.len() == want.len()
                && want
                    .keys()
                    .all(|u| r.get(u).is_some_and(|on| on.len() == 1));
            if ok {
                return r.into_iter().map(|(u, on)| (u, on[0])).collect();
            }
            if Instant::now() > deadline {
                let missing: Vec<&String> = want.keys().filter(|u| !r.contains_key(*u)).collect();
                let twice: Vec<_> = r.iter().filter(|(_, on)| on.len() > 1).collect();
                let extra: Vec<_> = r.keys().filter(|u| !want.contains_key(*u)).collect();
                panic!(
                    "{}not exactly once after {LIMIT:?}: {} missing {}, twice: {}, not wanted: {}\n{}",
                    self.said(),
                    missing.len(),
                    listed(&missing),
                    listed(&twice),
                    listed(&extra),
                    self.explain(&missing, among)
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The context a failure starts with ("seed N: "), if any.
    fn said(&self) -> String {
        match self.context.as_str() {
            "" => String::new(),
            c => format!("{c}: "),
        }
    }

    /// What the cluster knows of `units` (the fleet API's unit and state
    /// through the first machine that answers, each init's own view of
    /// them), and the tail of each machine's clusterd log and init output,
    /// with every line of them that names one of the units: a failure of
    /// [`Fleet::wait_exactly_once`] says where each unit got stuck.
    fn explain(&self, units: &[&String], among: &[usize]) -> String {
        const TAIL: usize = 40;
        let mut out = String::new();
        let api = among
            .iter()
            .copied()
            .find(|&m| self.machines[m].api("GET", "/fleet/v1/machines", None).0 == 200);
        for u in units.iter().take(5) {
            out += &format!("--- {u}\n");
            if let Some(m) = api {
                let mm = &self.machines[m];
                let (c, b) = mm.api("GET", &format!("/fleet/v1/units/{u}"), None);
                out += &format!("  API (m{m}) unit: {c} {}\n", without_options(&b));
                let (c, b) = mm.api("GET", &format!("/fleet/v1/state?unitName={u}"), None);
                out += &format!("  API (m{m}) state: {c} {b}\n");
            }
            for &m in among {
                let st = self.machines[m].init.list().remove(u.as_str());
                out += &format!(
                    "  m{m}'s init: {}\n",
                    st.map_or("no such unit".into(), |s| format!(
                        "{:?} pid {:?} from {}",
                        s.state, s.pid, s.source
                    ))
                );
            }
        }
        for &m in among {
            let mm = &self.machines[m];
            let log = mm.log();
            let lines: Vec<&str> = log.lines().collect();
            let named: Vec<&str> = lines
                .iter()
                .copied()
                .filter(|l| units.iter().any(|u| l.contains(u.as_str())))
                .collect();
            out += &format!(
                "--- m{m} ({}) clusterd log, lines naming them:\n{}\n",
                mm.id,
                named.join("\n")
            );
            let tail = &lines[lines.len().saturating_sub(TAIL)..];
            out += &format!("--- its last {TAIL} lines:\n{}\n", tail.join("\n"));
            let init = std::fs::read_to_string(mm.init.root.join("init.out")).unwrap_or_default();
            let lines: Vec<&str> = init.lines().collect();
            let tail = &lines[lines.len().saturating_sub(TAIL)..];
            out += &format!(
                "--- m{m}'s init.out, last {TAIL} lines:\n{}\n",
                tail.join("\n")
            );
        }
        out
    }

    /// The processes of unit commands (`/bin/sleep 2…`) under the inits of
    /// `among`: command line -> PIDs.
    pub fn unit_processes(&self, among: &[usize]) -> BTreeMap<String, Vec<i32>> {
        let table = process_table();
        let mut under: Vec<i32> = among
            .iter()
            .filter_map(|m| self.machines[*m].init.pid())
            .collect();
        let mut i = 0;
        while i < under.len() {
            let p = under[i];
            under.extend(
                table
                    .iter()
                    .filter(|(_, pp, _)| *pp == p)
                    .map(|(c, _, _)| *c),
            );
            i += 1;
        }
        let mut by_cmd: BTreeMap<String, Vec<i32>> = BTreeMap::new();
        for (pid, _, cmd) in table {
            if under.contains(&pid) && cmd.starts_with("/bin/sleep 2") {
                by_cmd.entry(cmd).or_default().push(pid);
            }
        }
        by_cmd
    }

    /// The processes say so too: under the inits of `among`, exactly one
    /// process runs each wanted command (the PID its init reports), and no
    /// other unit command runs at all.
    pub fn assert_processes(
        &self,
        want: &BTreeMap<String, String>,
        placed: &BTreeMap<String, (usize, i32)>,
        among: &[usize],
    ) {
        let mut by_cmd = self.unit_processes(among);
        for (u, cmd) in want {
            let pids = by_cmd.remove(cmd.as_str()).unwrap_or_default();
            assert_eq!(
                pids,
                vec![placed[u].1],
                "{}{u} ({cmd}) must run once, as its init says",
                self.said()
            );
        }
        assert!(
            by_cmd.is_empty(),
            "{}processes of units that must not run: {by_cmd:?}",
            self.said()
        );
    }

    /// [`Fleet::wait_exactly_once`] and [`Fleet::assert_processes`] on
    /// every machine, and it stays so for a second.
    pub fn assert_exactly_once(
        &self,
        want: &BTreeMap<String, String>,
    ) -> BTreeMap<String, (usize, i32)> {
        let all = self.all();
        let placed = self.wait_exactly_once(want, &all);
        self.assert_processes(want, &placed, &all);
        std::thread::sleep(Duration::from_secs(1));
        assert_eq!(
            self.wait_exactly_once(want, &all),
            placed,
            "{}the placement changed once settled",
            self.said()
        );
        placed
    }

    /// The index of the machine whose clusterd leads the engine.
    pub fn engine_leader(&self, etcd: &super::etcd::Etcd) -> usize {
        super::wait_for(Duration::from_secs(30), "an engine leader", || {
            let id = super::etcd_get(etcd, "/flotilla/engine/leader")?;
            self.ids.iter().position(|m| *m == id)
        })
    }

    /// Freezes machine `m` (its init and everything under it) or resumes
    /// it, as a VM paused and resumed.
    pub fn freeze(&self, m: usize, stop: bool) {
        let Some(init) = self.machines[m].init.pid() else {
            return;
        };
        let sig = if stop { libc::SIGSTOP } else { libc::SIGCONT };
        super::signal(init, sig);
        for p in super::descendants(init) {
            super::signal(p, sig);
        }
    }
}
