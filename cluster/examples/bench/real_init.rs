//! A machine's init for the benchmark: either the stand-in (`standin.rs`:
//! the control protocol without processes) or, with `--real-inits`, the
//! real `init` from the same target dir, started as a plain process (not
//! PID 1) whose `default` target waits for `cluster`, so that every unit
//! clusterd hands it runs a real `sleep`.
//!
//! The real init's running units are followed over one `subscribe`
//! connection (its `changed` lines), not by polling it.

use crate::standin::StandIn;
use flotilla_units::protocol::{Envelope, Reply, Request};
use flotilla_units::state::UnitState;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// One machine's init.
pub enum Host {
    StandIn(StandIn),
    Real(RealInit),
}

/// A real init and what its subscription has told.
pub struct RealInit {
    child: Option<Child>,
    /// The fleet units' states (the transient set `cluster`, without the
    /// virtual `cluster` itself).
    states: Arc<Mutex<BTreeMap<String, UnitState>>>,
    count: Arc<AtomicUsize>,
    changed: Arc<(Mutex<u64>, Condvar)>,
}

impl Host {
    /// Machine `id`'s init, listening at `ctl`; with `init`, the real one
    /// (in `dir/id/`), else the stand-in.
    pub fn start(
        init: Option<&Path>,
        dir: &Path,
        id: &str,
        ctl: &Path,
        changed: Arc<(Mutex<u64>, Condvar)>,
    ) -> Host {
        match init {
            None => Host::StandIn(StandIn::start(ctl, changed)),
            Some(bin) => Host::Real(RealInit::start(bin, &dir.join(id), ctl, changed)),
        }
    }

    /// The init's PID, for a real one.
    pub fn pid(&self) -> Option<u32> {
        match self {
            Host::StandIn(_) => None,
            Host::Real(r) => r.child.as_ref().map(Child::id),
        }
    }

    /// The fleet units running here.
    pub fn running(&self) -> Vec<String> {
        match self {
            Host::StandIn(s) => s.running(),
            Host::Real(r) => r
                .states
                .lock()
                .unwrap()
                .iter()
                .filter(|(_, s)| **s == UnitState::Running)
                .map(|(n, _)| n.clone())
                .collect(),
        }
    }

    /// How many fleet units run here.
    pub fn running_count(&self) -> usize {
        match self {
            Host::StandIn(s) => s.running_count(),
            Host::Real(r) => r.count.load(Ordering::SeqCst),
        }
    }

    /// The machine dies at once (a real init and its processes get
    /// SIGKILL).
    pub fn kill(&mut self) {
        match self {
            Host::StandIn(s) => s.kill(),
            Host::Real(r) => r.crash(),
        }
    }

    /// Waits (at most `limit`) until `f` holds, re-checking on each change
    /// of any machine's units (and at least every 100 ms: the condition
    /// may also depend on the API).
    pub fn wait_until(all: &[Host], limit: Duration, mut f: impl FnMut() -> bool) -> bool {
        let changed = match &all[0] {
            Host::StandIn(s) => s.changed.clone(),
            Host::Real(r) => r.changed.clone(),
        };
        let deadline = Instant::now() + limit;
        loop {
            if f() {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            let (m, cv) = &*changed;
            let g = m.lock().unwrap();
            let _ = cv
                .wait_timeout(g, (deadline - now).min(Duration::from_millis(100)))
                .unwrap();
        }
    }
}

impl RealInit {
    fn start(bin: &Path, root: &Path, ctl: &Path, changed: Arc<(Mutex<u64>, Condvar)>) -> Self {
        let units = root.join("units");
        std::fs::create_dir_all(&units).expect("the init's units dir");
        std::fs::write(
            units.join("default.yaml"),
            "unit: default\ntype: virtual\nprovides: default\nwaits-for: cluster\n",
        )
        .expect("default unit");
        let out = std::fs::File::create(root.join("init.out")).expect("init.out");
        let child = Command::new(bin)
            .arg("--units")
            .arg(&units)
            .arg("--control")
            .arg(ctl)
            .args(["--target", "default"])
            .env_remove("INIT_CONTROL")
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("init.out"))
            .stderr(out)
            .spawn()
            .expect("start the init");
        crate::PIDS.lock().unwrap().push(child.id());
        let deadline = Instant::now() + Duration::from_secs(30);
        let sub = loop {
            match UnixStream::connect(ctl) {
                Ok(s) => break s,
                Err(e) if Instant::now() > deadline => panic!("the init's control socket: {e}"),
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        };
        let r = RealInit {
            child: Some(child),
            states: Arc::default(),
            count: Arc::default(),
            changed,
        };
        let (states, count, changed) = (r.states.clone(), r.count.clone(), r.changed.clone());
        std::thread::spawn(move || follow(sub, states, count, changed));
        r
    }

    /// The init is frozen (so it starts nothing more), then it and every
    /// process under it get SIGKILL.
    fn crash(&mut self) {
        let Some(mut c) = self.child.take() else {
            return;
        };
        let pid = c.id() as i32;
        // SAFETY: kill(2) on the init this benchmark started and on its
        // descendants, found while it is stopped.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        for p in crate::procs::descendants(pid) {
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
        let _ = c.kill();
        let _ = c.wait();
        self.states.lock().unwrap().clear();
        self.count.store(0, Ordering::SeqCst);
    }

    /// The init stops its units and exits (SIGTERM); SIGKILL for all after
    /// 30 s.
    fn stop(&mut self) {
        let Some(c) = self.child.as_mut() else {
            return;
        };
        // SAFETY: kill(2) on the init this benchmark started.
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = c.try_wait() {
                self.child = None;
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.crash();
    }
}

impl Drop for RealInit {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Reads the init's `changed` lines, keeping the fleet units' states.
fn follow(
    mut sub: UnixStream,
    states: Arc<Mutex<BTreeMap<String, UnitState>>>,
    count: Arc<AtomicUsize>,
    changed: Arc<(Mutex<u64>, Condvar)>,
) {
    let mut line = serde_json::to_string(&Envelope::new(Request::Subscribe)).unwrap();
    line.push('\n');
    if sub.write_all(line.as_bytes()).is_err() {
        return;
    }
    for l in BufReader::new(sub).lines() {
        let Ok(l) = l else { return };
        let Ok(Reply::Changed(u)) = serde_json::from_str::<Reply>(&l) else {
            continue;
        };
        if u.unit == "cluster" || u.source != "transient:cluster" {
            continue;
        }
        let mut st = states.lock().unwrap();
        st.insert(u.unit, u.state);
        count.store(
            st.values().filter(|s| **s == UnitState::Running).count(),
            Ordering::SeqCst,
        );
        drop(st);
        *changed.0.lock().unwrap() += 1;
        changed.1.notify_all();
    }
}
