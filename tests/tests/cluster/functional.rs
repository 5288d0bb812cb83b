//! fleet's own functional tests (`functional/*_test.go` in fleet's
//! repository), ported: each test here follows the fleet test it names,
//! its requests and assertions as fleet wrote them, against real clusterds
//! with real inits and a real etcd. A fleet machine (an nspawn container
//! with fleetd, its own IP and machine ID, metadata `hostname=smoke<ID>`)
//! is a [`Machine`] here: its own init, IP and machine ID, the same
//! metadata. Where the platform differs, the test's doc says what the
//! nearest honest event is. docs/fleet-compat.md "fleet's functional
//! tests" lists every fleet test and where it is followed.
//!
//! This file: `machines_test.go`, and of `scheduling_test.go`
//! TestScheduleConditionMachineID. Other fleet tests are followed in
//! `fleetctl.rs` (restart, `--replace`, the circular `Replaces`, the PATCH
//! bodies), `membership.rs` (node shutdown, a duplicate machine ID,
//! connectivity loss), `unit_actions.rs`, `scheduling.rs` and
//! `dynamic.rs` (cluster membership changes, shutdown).

use crate::support::etcd::Etcd;
use crate::support::*;
use std::time::Duration;

/// fleet's `checkContentType`: a `Content-Type` containing
/// `application/json`.
fn json_type(ctype: &str) -> bool {
    ctype.contains("application/json")
}

/// fleet's platform: members with their own ID and IP, metadata
/// `hostname=smoke<ID>`; waits for `n` machines (`WaitForNMachines`).
pub(crate) fn smoke(etcd: &Etcd, dir: &std::path::Path, n: usize) -> Vec<Machine> {
    let ms: Vec<Machine> = (0..n).map(|i| smoke_member(etcd, dir, i, i)).collect();
    for m in &ms {
        m.wait_api();
    }
    wait_for(Duration::from_secs(10), "every machine listed", || {
        (machines(&ms[0]).len() == n).then_some(())
    });
    ms
}

/// fleet's `createMember`: machine number `i` (its ID), with the IP of
/// number `ip`, metadata `hostname=smoke<ID>`, a presence TTL of 2 s.
pub(crate) fn smoke_member(etcd: &Etcd, dir: &std::path::Path, i: usize, ip: usize) -> Machine {
    let id = format!("5m0ke{i:027x}");
    let md = format!("hostname=smoke{id}");
    let ip = format!("192.0.2.{}", 100 + ip);
    Machine::start(&etcd.url(), dir, &id, &md, &ip, "2s", &[])
}

/// `GET /fleet/v1/machines`, as fleet's fixture decodes it: `id`,
/// `metadata`, `primaryIP` of each machine (other fields ignored).
fn machines(m: &Machine) -> Vec<serde_json::Value> {
    let (_, b) = m.api("GET", "/fleet/v1/machines", None);
    let page: serde_json::Value = serde_json::from_str(&b).unwrap_or_default();
    page["machines"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|x| serde_json::json!({"id": x["id"], "metadata": x["metadata"], "primaryIP": x["primaryIP"]}))
        .collect()
}

/// The machine entity fleet's test expects for `m` with `metadata`.
fn expected(m: &Machine, ip: &str, metadata: serde_json::Value) -> serde_json::Value {
    let mut md = metadata;
    md["hostname"] = format!("smoke{}", m.id).into();
    serde_json::json!({"id": m.id, "metadata": md, "primaryIP": ip})
}

/// fleet's test marshals `machineMetadataOp` (its `Value` field has no
/// JSON tag: `"Value"`).
fn op(op: &str, m: &Machine, key: &str, value: &str) -> serde_json::Value {
    serde_json::json!({"op": op, "path": format!("/{}/metadata/{key}", m.id), "Value": {"value": value}})
}

/// fleet's `getHTTPResponse("PATCH", …)`: no `Content-Type` on the request.
fn patch(m: &Machine, ops: &[serde_json::Value]) -> (u16, String, String) {
    let body = serde_json::Value::from(ops.to_vec()).to_string();
    http_unix_typed(&m.sock, "PATCH", "/fleet/v1/machines", None, Some(&body))
}

/// TestMachinesList: the list is `200` (or `204`) with a JSON content type.
#[test]
fn machines_list() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let ms = smoke(&etcd, dir.path(), 1);
    let (code, ctype, _) = http_unix_typed(&ms[0].sock, "GET", "/fleet/v1/machines", None, None);
    assert!(code == 200 || code == 204, "{code}");
    assert!(json_type(&ctype), "{ctype}");
}

/// TestMachinesListBadNextPageToken: fleet's bad token `EwBMLg==` is a
/// `400` with a JSON content type.
#[test]
fn machines_list_bad_next_page_token() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let ms = smoke(&etcd, dir.path(), 1);
    let (code, ctype, _) = http_unix_typed(
        &ms[0].sock,
        "GET",
        "/fleet/v1/machines?nextPageToken=EwBMLg==",
        None,
        None,
    );
    assert_eq!(code, 400);
    assert!(json_type(&ctype), "{ctype}");
}

/// TestMachinesPatchAddModify and TestMachinesPatchDelete on one
/// two-machine cluster (fleet starts one per test): `add` foo=bar on m0
/// and `replace` ping=splat on m1 through m0's API, `204` with a JSON
/// content type, then the list shows both; `remove` of both, and the list
/// shows the `hostname` alone, each read once right after the PATCH, as
/// fleet's test reads it.
#[test]
fn machines_patch_add_modify_and_delete() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let ms = smoke(&etcd, dir.path(), 2);
    let (m0, m1) = (&ms[0], &ms[1]);
    let (code, ctype, _) = patch(
        m0,
        &[
            op("add", m0, "foo", "bar"),
            op("replace", m1, "ping", "splat"),
        ],
    );
    assert_eq!(code, 204);
    assert!(json_type(&ctype), "{ctype}");
    let want = vec![
        expected(m0, "192.0.2.100", serde_json::json!({"foo": "bar"})),
        expected(m1, "192.0.2.101", serde_json::json!({"ping": "splat"})),
    ];
    assert_eq!(machines(m0), want);

    let (code, ctype, _) = patch(
        m0,
        &[op("remove", m0, "foo", ""), op("remove", m1, "ping", "")],
    );
    assert_eq!(code, 204);
    assert!(json_type(&ctype), "{ctype}");
    let want = vec![
        expected(m0, "192.0.2.100", serde_json::json!({})),
        expected(m1, "192.0.2.101", serde_json::json!({})),
    ];
    assert_eq!(machines(m0), want);
}

/// TestMachinesPatchBad: a bad op, a bad path and an empty value are each a
/// `400` with a JSON content type.
#[test]
fn machines_patch_bad() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let ms = smoke(&etcd, dir.path(), 1);
    let m0 = &ms[0];
    let mut bad_path = op("add", m0, "foo", "bar");
    bad_path["path"] = format!("/{}/foo", m0.id).into();
    for bad in [
        op("noop", m0, "foo", "bar"),
        bad_path,
        op("add", m0, "foo", ""),
    ] {
        let (code, ctype, _) = patch(m0, std::slice::from_ref(&bad));
        assert_eq!(code, 400, "{bad}");
        assert!(json_type(&ctype), "{bad}: {ctype}");
    }
}

/// fleetctl's `start` of a unit file with `--no-block` (fleetctl.go:
/// `lazyCreateUnits` PUTs its options without a desired state and waits
/// for `inactive`, then the desired state `launched` is set).
fn fleetctl_start(m: &Machine, unit: &str, options: serde_json::Value) {
    let path = format!("/fleet/v1/units/{unit}?alt=json");
    let body = serde_json::json!({"name": unit, "options": options}).to_string() + "\n";
    let json_body = Some("application/json");
    assert_eq!(
        http_unix(&m.sock, "PUT", &path, json_body, Some(&body)).0,
        201
    );
    wait_for(Duration::from_secs(10), "the unit inactive", || {
        let (_, b) = m.api("GET", &path, None);
        (json(&b)["currentState"] == "inactive").then_some(())
    });
    let launch = "{\"desiredState\":\"launched\"}\n";
    assert_eq!(
        http_unix(&m.sock, "PUT", &path, json_body, Some(launch)).0,
        204
    );
}

/// fleet's `WaitForNActiveUnits`: `list-units` (the states) until exactly
/// `n` show `active`; each active unit with the machines it is active on.
fn wait_active(m: &Machine, n: usize) -> std::collections::BTreeMap<String, Vec<String>> {
    wait_for(
        Duration::from_secs(15),
        &format!("{n} active units"),
        || {
            let (_, b) = m.api("GET", "/fleet/v1/state", None);
            let page: serde_json::Value = serde_json::from_str(&b).ok()?;
            let mut out: std::collections::BTreeMap<String, Vec<String>> = Default::default();
            for st in page["states"].as_array()? {
                if st["systemdActiveState"] == "active" {
                    let name = st["name"].as_str()?.to_string();
                    out.entry(name)
                        .or_default()
                        .push(st["machineID"].as_str()?.to_string());
                }
            }
            (out.values().map(Vec::len).sum::<usize>() == n).then_some(out)
        },
    )
}

/// TestScheduleConditionMachineID: on three machines, one unit per machine
/// with `MachineID=` that machine; each runs there (its only active state
/// is on that machine). fleet's units loop in bash printing a line a
/// second; these sleep.
#[test]
fn schedule_condition_machine_id() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let ms = smoke(&etcd, dir.path(), 3);
    let mut schedule = std::collections::BTreeMap::new();
    for (i, target) in ms.iter().enumerate() {
        let unit = format!("machine-id-{i}.service");
        let options = serde_json::json!([
            {"section": "Service", "name": "ExecStart", "value": format!("/bin/sleep 53{i:02}")},
            {"section": "X-Fleet", "name": "MachineID", "value": target.id},
        ]);
        fleetctl_start(&ms[0], &unit, options);
        schedule.insert(unit, vec![target.id.clone()]);
    }
    assert_eq!(wait_active(&ms[0], 3), schedule);
}
