//! One committer (`docs/cluster.md`, "One committer"): three machines that
//! advertise their APIs (`--api-advertise`, not given: by default each
//! advertises its API's unix socket), clients on each machine's API
//! at once. Every unit write is answered by the engine leader's clusterd
//! (its `X-Flotilla-Committed-By`), whichever API the client used, with the
//! status fleet's client expects (fleetctl's sequences through a machine
//! that is not the committer, a bad body's 400 and a missing unit's 404
//! relayed); every unit runs exactly once. With the leader's clusterd
//! killed, writes through the other APIs still succeed (committed there
//! while the committer cannot be reached; a write on the connection its
//! death broke may get a 503 and is sent again), and once it is back (the init
//! restarts it and it resumes leadership) they go to it again.

use crate::support::etcd::Etcd;
use crate::support::fleet::{command, launch_body, name, Fleet};
use crate::support::http::Conn;
use crate::support::*;
use std::collections::BTreeMap;
use std::time::Duration;

const MACHINES: usize = 3;
const PER_CLIENT: usize = 40;

/// The committer `engine/committer` names: (machine, URL).
fn committer(etcd: &Etcd) -> Option<(String, String)> {
    let v = json(&etcd_get(etcd, "/flotilla/engine/committer")?);
    Some((v["machine"].as_str()?.into(), v["url"].as_str()?.into()))
}

/// A PUT through `c` that must get `want`, committed by `by`.
fn put(c: &mut Conn, path: &str, body: &str, want: u16, by: &str) {
    let (code, b) = c.request("PUT", path, Some(body));
    assert_eq!(code, want, "PUT {path}: {b}");
    assert_eq!(c.committed_by.as_deref(), Some(by), "PUT {path}");
}

#[test]
fn every_api_writes_through_the_leader() {
    let etcd = Etcd::start();
    let fleet = Fleet::start(&etcd.url(), MACHINES, Duration::from_secs(3));
    let leader = fleet.engine_leader(&etcd);
    let lid = fleet.ids[leader].clone();
    let (m, url) = wait_for(Duration::from_secs(20), "the committer key", || {
        committer(&etcd).filter(|(m, _)| *m == lid)
    });
    assert_eq!(
        url,
        format!("unix://{}", fleet.sock(leader).display()),
        "{m}"
    );

    // A client on every API at once: every write committed by the leader.
    let mut want = BTreeMap::new();
    std::thread::scope(|s| {
        for t in 0..MACHINES {
            let (sock, lid) = (fleet.sock(t), lid.clone());
            s.spawn(move || {
                let mut c = Conn::new(&sock);
                for i in (t * PER_CLIENT)..((t + 1) * PER_CLIENT) {
                    let path = format!("/fleet/v1/units/{}", name(i));
                    put(&mut c, &path, &launch_body(i, 0), 201, &lid);
                }
            });
        }
    });
    for i in 0..MACHINES * PER_CLIENT {
        want.insert(name(i), command(i, 0));
    }

    // fleetctl's sequences through a machine that is not the committer.
    let other = (leader + 1) % MACHINES;
    let mut c = Conn::new(&fleet.sock(other));
    let p = "/fleet/v1/units/seq.service?alt=json";
    assert_eq!(c.request("GET", p, None).0, 404);
    let body = unit_body("inactive", &command(9000, 0), &[]);
    put(&mut c, p, &body, 201, &lid);
    // The same file again (fleetctl submit of an unchanged unit).
    put(&mut c, p, &body, 204, &lid);
    for d in ["loaded", "launched"] {
        let b = format!("{{\"desiredState\":\"{d}\"}}\n");
        put(&mut c, p, &b, 204, &lid);
    }
    want.insert("seq.service".into(), command(9000, 0));
    // Errors come back as the committer gave them.
    let (code, b) = c.request("PUT", "/fleet/v1/units/bad.service", Some("{\"x\":"));
    assert_eq!(code, 400, "{b}");
    assert!(json(&b)["error"]["message"].is_string(), "{b}");
    let (code, b) = c.request("PUT", p, Some("{\"desiredState\":\"bogus\"}"));
    assert_eq!(code, 400, "{b}");
    let (code, _) = c.request("DELETE", "/fleet/v1/units/none.service", None);
    assert_eq!(code, 404);
    assert_eq!(c.committed_by.as_deref(), Some(lid.as_str()));
    put(
        &mut c,
        "/fleet/v1/units/gone.service",
        &launch_body(9001, 0),
        201,
        &lid,
    );
    let (code, b) = c.request("DELETE", "/fleet/v1/units/gone.service", None);
    assert_eq!(
        (code, c.committed_by.as_deref()),
        (204, Some(lid.as_str())),
        "{b}"
    );
    fleet.assert_exactly_once(&want);

    // The committer's clusterd killed: the others commit their own writes
    // meanwhile; the restarted one resumes leading and committing.
    let pid = fleet.machines[leader]
        .clusterd_pid()
        .expect("clusterd runs");
    signal(pid, libc::SIGKILL);
    let mut local = 0;
    for i in 0..20 {
        let n = 9100 + i;
        // A write on a kept connection the committer's death broke gets a
        // 503 (it may have been sent): sent again, as a client does.
        let (code, b) = wait_for(Duration::from_secs(20), "a write answered", || {
            let (code, b) = c.request(
                "PUT",
                &format!("/fleet/v1/units/{}", name(n)),
                Some(&launch_body(n, 0)),
            );
            (code != 503).then_some((code, b))
        });
        assert!(matches!(code, 201 | 204), "{code} {b}");
        if c.committed_by.as_deref() == Some(fleet.ids[other].as_str()) {
            local += 1;
        }
        want.insert(name(n), command(n, 0));
    }
    wait_for(Duration::from_secs(20), "clusterd restarted", || {
        fleet.machines[leader].clusterd_pid().filter(|p| *p != pid)
    });
    let back = wait_for(
        Duration::from_secs(30),
        "writes through the committer again",
        || {
            let (code, b) = c.request(
                "PUT",
                "/fleet/v1/units/seq.service",
                Some("{\"desiredState\":\"launched\"}"),
            );
            assert_eq!(code, 204, "{b}");
            let by = c.committed_by.clone()?;
            committer(&etcd)
                .filter(|(m, _)| *m == by && by != fleet.ids[other])
                .map(|_| by)
        },
    );
    eprintln!(
        "committed by {other} while the committer was down: {local} of 20; committer now {back}"
    );
    fleet.assert_exactly_once(&want);
}
