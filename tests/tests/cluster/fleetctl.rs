//! fleet's behaviour where its own client depends on it, against a real
//! etcd and a machine (a real init running the real clusterd): fleetctl's
//! `restart` and `--replace` request sequences replayed as fleetctl's code
//! sends them (fleetctl cannot be installed here), a circular `Replaces=`,
//! and `PATCH /machines` with the body fleet's client and tests marshal,
//! answered with the headers fleet's server wrote. docs/fleet-compat.md
//! "What fleetctl depends on" lists the sequences.

use crate::support::etcd::Etcd;
use crate::support::*;
use std::time::{Duration, Instant};

const JSON: Option<&str> = Some("application/json");

/// How long a replayed wait may take before the test calls it a hang
/// (fleetctl itself waits for ever by default).
const HANG: Duration = Duration::from_secs(15);

/// One machine with its API.
fn machine(etcd: &Etcd, dir: &std::path::Path, id: &str) -> Machine {
    Machine::up(&etcd.url(), dir, id, "192.0.2.7")
}

/// A unit request as fleetctl sends it (`?alt=json`, a body ending in a
/// newline with `Content-Type: application/json`).
fn put(m: &Machine, unit: &str, body: &str) -> u16 {
    let path = format!("/fleet/v1/units/{unit}?alt=json");
    http_unix(&m.sock, "PUT", &path, JSON, Some(body)).0
}

fn get_unit(m: &Machine, unit: &str) -> serde_json::Value {
    let (code, b) = http_unix(
        &m.sock,
        "GET",
        &format!("/fleet/v1/units/{unit}?alt=json"),
        None,
        None,
    );
    assert_eq!(code, 200, "{b}");
    json(&b)
}

/// fleetctl's `checkUnitState`: `GET /units/<name>` every 250 ms, the
/// first after 250 ms, until `currentState` is `want`.
fn fleetctl_wait(m: &Machine, unit: &str, want: &str) {
    let end = Instant::now() + HANG;
    loop {
        std::thread::sleep(Duration::from_millis(250));
        let u = get_unit(m, unit);
        if u["currentState"] == want {
            return;
        }
        assert!(
            Instant::now() < end,
            "fleetctl would hang: {unit} never reported {want} (desiredState={}, currentState={})",
            u["desiredState"],
            u["currentState"]
        );
    }
}

/// The one PID the unit runs as on this machine, once it runs.
fn running_pid(m: &Machine, unit: &str) -> i32 {
    wait_for(Duration::from_secs(10), &format!("{unit} running"), || {
        m.init.running().get(unit).copied()
    })
}

/// fleetctl's `restart` (fleetctl/restart.go): for a launched unit, PUT
/// `loaded`, wait for `launched` (fleetctl waits for `launched` after
/// both of its steps), PUT `launched`, wait for `launched`. The unit
/// must run again, as a new process: restarted, not left stopped.
#[test]
fn fleetctl_restart_restarts_the_unit() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let m = machine(&etcd, dir.path(), "re5tart0000");
    let unit = "hello@2.service";
    assert_eq!(
        put(&m, unit, &unit_body("launched", "/bin/sleep 4242", &[])),
        201
    );
    fleetctl_wait(&m, unit, "launched");
    let old = running_pid(&m, unit);

    // findUnits: the unit list; the unit is launched, so stop and start.
    assert_eq!(
        http_unix(&m.sock, "GET", "/fleet/v1/units?alt=json", None, None).0,
        200
    );
    assert_eq!(put(&m, unit, "{\"desiredState\":\"loaded\"}\n"), 204);
    fleetctl_wait(&m, unit, "launched");
    assert_eq!(put(&m, unit, "{\"desiredState\":\"launched\"}\n"), 204);
    fleetctl_wait(&m, unit, "launched");

    let new = wait_for(Duration::from_secs(10), "the unit restarted", || {
        m.init.running().get(unit).copied().filter(|p| *p != old)
    });
    assert!(!pid_alive(old), "the old process is gone");
    let u = get_unit(&m, unit);
    assert_eq!(
        (u["desiredState"].as_str(), u["currentState"].as_str()),
        (Some("launched"), Some("launched"))
    );
    // It stays running, once.
    hold(
        Duration::from_millis(1500),
        "the restarted unit keeps running",
        || match m.init.running().get(unit) {
            Some(p) if *p == new => Ok(()),
            other => Err(format!("{unit} runs as {other:?}, not {new}")),
        },
    );

    // fleetctl's `stop` still stops it (PUT loaded, wait for loaded), a
    // moment later (the hold before a stop).
    assert_eq!(put(&m, unit, "{\"desiredState\":\"loaded\"}\n"), 204);
    fleetctl_wait(&m, unit, "loaded");
    wait_for(Duration::from_secs(5), "the unit stopped", || {
        (!m.init.running().contains_key(unit)).then_some(())
    });
    assert!(!pid_alive(new));
}

/// fleetctl's `submit --replace`, `load --replace` and `start --replace`
/// (fleetctl.go `lazyCreateUnits`; fleet's TestUnitSubmitReplace,
/// TestUnitLoadReplace, TestUnitStartReplace): the unit exists with other
/// contents, so fleetctl PUTs the new options without a desired state
/// (fleet's `CreateUnit` stores it `inactive`) and waits for
/// `currentState` `inactive`, then (load, start) sets `loaded` or
/// `launched` and waits for it. The new contents are stored, and run.
#[test]
fn fleetctl_replace_passes_through_inactive() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let m = machine(&etcd, dir.path(), "rep1ace0000");
    for (cmd, goal) in [
        ("submit", "inactive"),
        ("load", "loaded"),
        ("start", "launched"),
    ] {
        let unit = format!("hello-{cmd}.service");
        assert_eq!(
            put(&m, &unit, &unit_body(goal, "/bin/sleep 4343", &[])),
            201
        );
        fleetctl_wait(&m, &unit, goal);
        let old = (goal == "launched").then(|| running_pid(&m, &unit));

        // checkUnitCreation: the unit exists and differs; replace it.
        let body = serde_json::json!({
            "name": unit,
            "options": [{"section": "Service", "name": "ExecStart", "value": "/bin/sleep 4444"}],
        })
        .to_string()
            + "\n";
        assert_eq!(put(&m, &unit, &body), 201, "{cmd} --replace");
        fleetctl_wait(&m, &unit, "inactive");
        assert_eq!(get_unit(&m, &unit)["desiredState"], "inactive");
        // Then load or start as usual (submit is done).
        if goal != "inactive" {
            assert_eq!(
                put(&m, &unit, &format!("{{\"desiredState\":\"{goal}\"}}\n")),
                204
            );
            fleetctl_wait(&m, &unit, goal);
        }
        let u = get_unit(&m, &unit);
        assert_eq!(u["options"][0]["value"], "/bin/sleep 4444");
        if let Some(old) = old {
            let new = running_pid(&m, &unit);
            let cmdline =
                std::fs::read_to_string(format!("/proc/{new}/cmdline")).unwrap_or_default();
            assert_eq!(cmdline, "/bin/sleep\u{0}4444\u{0}", "the new contents run");
            assert!(!pid_alive(old), "the old contents stopped");
        } else if goal == "loaded" {
            assert!(!m.init.running().contains_key(&unit));
            assert!(m.init.fleet_units().contains_key(&unit), "loaded again");
        } else {
            assert!(!m.init.fleet_units().contains_key(&unit), "submitted only");
        }
    }
}

/// fleet's TestScheduleCircularReplace: two units that replace each other
/// are accepted (201, as fleet did) and, on one machine, one of them runs:
/// the first, which the second does not displace, without moving round.
/// Then `PATCH /machines` with the body fleet's client and tests marshal
/// (`"Value"`, capital V), answered `204` with `Content-Type:
/// application/json` as fleet's server wrote it; fleet's bad requests
/// (TestMachinesPatchBad) get `400` with the error entity.
#[test]
fn circular_replaces_and_fleets_machines_patch() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let m = machine(&etcd, dir.path(), "c1rcle000000");
    let exec = "/bin/sleep 4545";
    let first = unit_body("launched", exec, &[("Replaces", "replace-kick0.service")]);
    assert_eq!(put(&m, "replace.0.service", &first), 201);
    fleetctl_wait(&m, "replace.0.service", "launched");
    let pid = running_pid(&m, "replace.0.service");
    let second = unit_body("launched", exec, &[("Replaces", "replace.0.service")]);
    assert_eq!(put(&m, "replace-kick0.service", &second), 201);
    wait_for(Duration::from_secs(5), "the second unit tried", || {
        get_unit(&m, "replace-kick0.service")
            .get("unscheduledReason")
            .map(|_| ())
    });
    hold(
        Duration::from_millis(1500),
        "one of the two runs, the first",
        || {
            let running = m.init.running();
            let kick = get_unit(&m, "replace-kick0.service");
            if running.len() == 1
                && running.get("replace.0.service") == Some(&pid)
                && kick["currentState"] == "inactive"
            {
                Ok(())
            } else {
                Err(format!("running {running:?}, replace-kick0 {kick}"))
            }
        },
    );

    let patch =
        |body: &str| http_unix_typed(&m.sock, "PATCH", "/fleet/v1/machines", None, Some(body));
    let op = |op: &str, key: &str, value: &str| {
        format!(
            r#"{{"op":"{op}","path":"/c1rcle000000/metadata/{key}","Value":{{"value":"{value}"}}}}"#
        )
    };
    let (code, ctype, body) = patch(&format!(
        "[{},{}]",
        op("add", "foo", "bar"),
        op("add", "ping", "splat")
    ));
    assert_eq!(
        (code, ctype.as_str(), body.as_str()),
        (204, "application/json", "")
    );
    let metadata = || {
        let (_, b) = http_unix(&m.sock, "GET", "/fleet/v1/machines", None, None);
        json(&b)["machines"][0]["metadata"].clone()
    };
    let want = serde_json::json!({"foo": "bar", "ping": "splat"});
    wait_for(Duration::from_secs(5), "metadata added", || {
        (metadata() == want).then_some(())
    });
    let (code, ctype, _) = patch(&format!("[{}]", op("remove", "foo", "")));
    assert_eq!((code, ctype.as_str()), (204, "application/json"));
    let want = serde_json::json!({"ping": "splat"});
    wait_for(Duration::from_secs(5), "metadata removed", || {
        (metadata() == want).then_some(())
    });
    for bad in [
        op("noop", "foo", "bar"),
        op("add", "foo", ""),
        op("add", "foo", "bar").replace("/metadata/", "/"),
    ] {
        let (code, ctype, body) = patch(&format!("[{bad}]"));
        assert_eq!((code, ctype.as_str()), (400, "application/json"), "{bad}");
        assert_eq!(json(&body)["error"]["code"], 400);
    }
}
