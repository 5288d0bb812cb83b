//! Nothing the fleet API acknowledged is lost when clusterd or etcd dies
//! right after the answer (`cluster/src/commit.rs`: a request is answered
//! only after etcd answered the transaction that carried it).
//!
//! Many clients create units (`201`) and change existing units' desired
//! states (`204`) through one clusterd, whose writes go to a real etcd in
//! groups; the thread that receives the 300th answer kills a process at
//! once (SIGKILL), while the other clients' requests are in flight:
//!
//! - clusterd: it is started again on the same etcd;
//! - etcd: it is started again on the same data dir.
//!
//! Then every acknowledged creation is there with its own file and desired
//! state, every acknowledged change has its new desired state, and each
//! unit whose request got no answer is all there or not at all.

use crate::support::etcd::Etcd;
use crate::support::http::Conn;
use crate::support::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

const CLIENTS: usize = 12;
/// Requests per client at most (each stops at its first failure).
const EACH: usize = 200;
/// The answer after which the process dies.
const KILL_AT: usize = 300;
/// Units that exist before, whose desired state the clients change.
const OLD: usize = 120;

/// A clusterd alone (no init: units stay unscheduled work for etcd only)
/// with its API on a unix socket, up.
fn clusterd(etcd: &Etcd, dir: &Path) -> (Clusterd, PathBuf) {
    let sock = dir.join("api.sock");
    let args = vec![
        "--etcd".to_string(),
        etcd.url(),
        "--machine-id".into(),
        "durable01".into(),
        "--control".into(),
        dir.join("no-init.sock").display().to_string(),
        "--api-listen".into(),
        format!("unix://{}", sock.display()),
    ];
    let cd = Clusterd::start_args(args, dir.join("cd.log"), "durable01", sock.clone());
    cd.wait_api();
    (cd, sock)
}

/// One request a client sent: the unit, what it asked, and the answer
/// (0 when none came).
struct Sent {
    name: String,
    /// The exec line of a creation, or `None` for a desired-state change
    /// (to `loaded`).
    exec: Option<String>,
    code: u16,
}

/// Creates the old units, then runs the clients; `kill` is called by the
/// thread that got answer number [`KILL_AT`], right after it.
fn run_clients(sock: &Path, kill: impl Fn() + Send + Sync + 'static) -> Vec<Sent> {
    let mut c = Conn::new(sock);
    for i in 0..OLD {
        let body = unit_body("inactive", &format!("/bin/sleep {i}"), &[]);
        let (code, b) = c.request(
            "PUT",
            &format!("/fleet/v1/units/old{i:03}.service"),
            Some(&body),
        );
        assert_eq!(code, 201, "{b}");
    }
    let answers = Arc::new(AtomicUsize::new(0));
    let kill = Arc::new(kill);
    let start = Arc::new(Barrier::new(CLIENTS));
    let threads: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (answers, kill, start) = (answers.clone(), kill.clone(), start.clone());
            let sock = sock.to_path_buf();
            std::thread::spawn(move || {
                let mut conn = Conn::new(&sock);
                let mut out = Vec::new();
                start.wait();
                for i in 0..EACH {
                    // One request in four changes an old unit's desired state.
                    let (name, exec, body) = if i % 4 == 3 {
                        let name = format!("old{:03}.service", (c * EACH + i) % OLD);
                        (name, None, r#"{"desiredState":"loaded"}"#.to_string())
                    } else {
                        let exec = format!("/bin/sleep {}", 1000 + c * EACH + i);
                        let body = unit_body("launched", &exec, &[]);
                        (format!("new-{c:02}-{i:03}.service"), Some(exec), body)
                    };
                    let (code, _) =
                        conn.request("PUT", &format!("/fleet/v1/units/{name}"), Some(&body));
                    let ok = code == 201 || code == 204;
                    out.push(Sent { name, exec, code });
                    if ok && answers.fetch_add(1, Ordering::SeqCst) + 1 == KILL_AT {
                        kill();
                    }
                    if !ok {
                        break;
                    }
                }
                out
            })
        })
        .collect();
    let sent: Vec<Sent> = threads
        .into_iter()
        .flat_map(|t| t.join().expect("client thread"))
        .collect();
    assert!(
        answers.load(Ordering::SeqCst) >= KILL_AT,
        "the clients stopped before the kill"
    );
    sent
}

/// Checks what is stored against what was acknowledged.
fn check(etcd: &Etcd, sock: &Path, sent: &[Sent]) {
    let mut c = Conn::new(sock);
    let (units, _) = http::all_units(&mut c);
    let stored: BTreeMap<&str, &flotilla_units::fleet_api::ApiUnit> =
        units.iter().map(|u| (u.name.as_str(), u)).collect();
    let mut acked = 0;
    for s in sent {
        match (&s.exec, s.code) {
            (Some(exec), 201) => {
                acked += 1;
                let u = stored
                    .get(s.name.as_str())
                    .unwrap_or_else(|| panic!("{} was acknowledged (201) and is gone", s.name));
                assert_eq!(&u.options[0].value, exec, "{}", s.name);
                assert_eq!(u.desired_state.as_deref(), Some("launched"), "{}", s.name);
            }
            (None, 204) => {
                acked += 1;
                let u = stored.get(s.name.as_str()).expect("old unit");
                assert_eq!(
                    u.desired_state.as_deref(),
                    Some("loaded"),
                    "{}: its change was acknowledged (204) and is lost",
                    s.name
                );
            }
            (_, code) => {
                // No answer, or etcd's 503: all there or not at all.
                assert!(code == 0 || code == 503, "{}: {code}", s.name);
                let file = etcd_get(etcd, &format!("/flotilla/units/{}", s.name));
                let desired = etcd_get(etcd, &format!("/flotilla/desired/{}", s.name));
                assert_eq!(
                    file.is_some(),
                    desired.is_some(),
                    "{}: half written (file {file:?}, desired {desired:?})",
                    s.name
                );
            }
        }
    }
    eprintln!(
        "{acked} acknowledged writes of {} requests, all there",
        sent.len()
    );
    assert!(acked >= KILL_AT);
}

#[test]
fn clusterd_killed_right_after_answers_loses_nothing_acknowledged() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let (mut cd, sock) = clusterd(&etcd, dir.path());
    let pid = cd.pid().expect("clusterd runs") as i32;
    let sent = run_clients(&sock, move || signal(pid, libc::SIGKILL));
    // Every client stopped: no answer once clusterd was gone.
    let unanswered = sent.iter().filter(|s| s.code == 0).count();
    assert_eq!(unanswered, CLIENTS, "one unanswered request per client");
    cd.restart();
    cd.wait_api();
    check(&etcd, &sock, &sent);
}

#[test]
fn etcd_killed_right_after_answers_loses_nothing_acknowledged() {
    let mut etcd = Etcd::start();
    let dir = tempdir();
    let (_cd, sock) = clusterd(&etcd, dir.path());
    let pid = etcd.pid().expect("etcd runs") as i32;
    let sent = run_clients(&sock, move || signal(pid, libc::SIGKILL));
    let refused = sent.iter().filter(|s| s.code == 503).count();
    assert_eq!(refused, CLIENTS, "one refusal per client");
    // etcd again on the same data dir.
    etcd.restart();
    wait_for(Duration::from_secs(30), "the API back", || {
        (http_unix(&sock, "GET", "/fleet/v1/units", None, None).0 == 200).then_some(())
    });
    check(&etcd, &sock, &sent);
}
