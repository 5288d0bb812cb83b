//! The dashboard: a page at `/ui/` on the API's listener (so with its
//! security: the unix socket's permissions, or TLS with client
//! certificates), live through server-sent events.
//!
//! - `GET /` and `GET /ui` redirect to `/ui/`; `/ui/`, `/ui/app.js` and
//!   `/ui/app.css` are the page, embedded in the binary (hand-written, no
//!   build step, nothing fetched from elsewhere).
//! - `GET /ui/events` is an event stream: first a `snapshot` (every machine
//!   with its metadata and load, every unit with its desired and current
//!   state, machine and reported states; unit files are left out), then a
//!   `delta` whenever the live view ([`crate::live`]) changes: the rows of
//!   the units and machines that changed, and the names of those gone.
//!   Changes are gathered for [`COALESCE`] before a delta is sent, so a
//!   deploy of 10,000 units is a few dozen events, not 30,000. A stream
//!   that falls behind gets a new snapshot. Nothing polls: the events come
//!   from the view's watch.
//! - `GET /ui/logs/<unit>?machine=ID&lines=N` reads a unit's recent log
//!   lines from the machine that runs it: the request goes through etcd to
//!   that machine's agent, which reads them from its init
//!   ([`crate::agent`]'s `logs`); it waits at most [`LOG_WAIT`].
//!
//! The page asks the fleet API (`/fleet/v1/units/<name>`) for a unit's file.

use crate::api::Api;
use crate::keys::valid_machine_id;
use crate::model::{ClusterState, LogAnswer, LogRequest};
use crate::respond::{error_response, json_response, method_not_allowed};
use crate::stored::decode_value;
use crate::validate::ApiError;
use crate::view::{Delta, View};
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use etcd_client::{EventType, WatchOptions};
use flotilla_units::fleet_api::Resources;
use flotilla_units::protocol::LogLine;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

/// How long changes are gathered before a delta is sent.
pub const COALESCE: Duration = Duration::from_millis(200);

/// How long a log request waits for the machine's answer.
pub const LOG_WAIT: Duration = Duration::from_secs(5);

const INDEX: &str = include_str!("ui/index.html");
const APP_JS: &str = include_str!("ui/app.js");
const APP_CSS: &str = include_str!("ui/app.css");

/// The dashboard's routes.
pub fn routes() -> Router<Arc<Api>> {
    Router::new()
        .route(
            "/",
            get(|| async { Redirect::to("/ui/") }).fallback(method_not_allowed),
        )
        .route(
            "/ui",
            get(|| async { Redirect::to("/ui/") }).fallback(method_not_allowed),
        )
        .route(
            "/ui/",
            get(|| async { asset("text/html; charset=utf-8", INDEX) }).fallback(method_not_allowed),
        )
        .route(
            "/ui/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) })
                .fallback(method_not_allowed),
        )
        .route(
            "/ui/app.css",
            get(|| async { asset("text/css; charset=utf-8", APP_CSS) })
                .fallback(method_not_allowed),
        )
        .route("/ui/events", get(events).fallback(method_not_allowed))
        .route("/ui/logs/{unit}", get(logs).fallback(method_not_allowed))
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
            // The page loads nothing from anywhere else.
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'self'; connect-src 'self'; img-src 'self' data:",
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

/// A machine as the page shows it.
#[derive(Debug, Serialize)]
struct MachineRow<'a> {
    id: &'a str,
    ip: &'a str,
    metadata: &'a BTreeMap<String, String>,
    /// Units placed there (global ones included).
    units: usize,
    /// What units may reserve there, and what they reserve (as its agent
    /// publishes them).
    #[serde(skip_serializing_if = "Option::is_none")]
    total: Option<Resources>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reserved: Option<Resources>,
}

/// A state a machine reports for a unit.
#[derive(Debug, Serialize)]
struct StateRow<'a> {
    machine: &'a str,
    load: &'a str,
    active: &'a str,
    sub: &'a str,
}

/// A unit as the page shows it.
#[derive(Debug, Serialize)]
struct UnitRow<'a> {
    name: &'a str,
    desired: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    current: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    machine: Option<&'a str>,
    global: bool,
    hash: &'a str,
    states: Vec<StateRow<'a>>,
    /// Why it is not scheduled.
    #[serde(skip_serializing_if = "Option::is_none")]
    unscheduled: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct Snapshot<'a> {
    revision: i64,
    machines: Vec<MachineRow<'a>>,
    units: Vec<UnitRow<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct DeltaOut<'a> {
    revision: i64,
    machines: Vec<MachineRow<'a>>,
    machines_gone: Vec<&'a str>,
    units: Vec<UnitRow<'a>>,
    units_gone: Vec<&'a str>,
}

fn machine_row<'a>(v: &'a View, loads: &BTreeMap<&str, usize>, id: &str) -> Option<MachineRow<'a>> {
    let m = v.machines.get(id)?;
    Some(MachineRow {
        id: &m.id,
        ip: &m.primary_ip,
        metadata: &m.metadata,
        units: loads.get(id).copied().unwrap_or(0),
        total: m.total_resources,
        reserved: m.reserved_resources,
    })
}

fn unit_row<'a>(v: &'a View, name: &str) -> Option<UnitRow<'a>> {
    let (name, u) = v.units.get_key_value(name)?;
    let global = v.global.contains(name);
    let desired = v
        .desired
        .get(name)
        .copied()
        .unwrap_or(ClusterState::Inactive);
    let machine = (!global)
        .then(|| v.placement.get(name).map(String::as_str))
        .flatten();
    let current = (!global).then(|| {
        machine
            .and_then(|m| v.states.get(&(name.clone(), m.to_string())))
            .map_or(ClusterState::Inactive, |s| s.current)
            .as_str()
    });
    Some(UnitRow {
        name,
        desired: desired.as_str(),
        current,
        machine,
        global,
        hash: &u.hash,
        states: v
            .unit_states(name)
            .map(|s| StateRow {
                machine: &s.machine_id,
                load: &s.load_state,
                active: &s.active_state,
                sub: &s.sub_state,
            })
            .collect(),
        unscheduled: v
            .unscheduled
            .get(name)
            .filter(|_| desired != ClusterState::Inactive)
            .map(String::as_str),
    })
}

fn snapshot_event(v: &View) -> Event {
    let loads = v.loads();
    let snap = Snapshot {
        revision: v.revision,
        machines: v
            .machines
            .keys()
            .filter_map(|m| machine_row(v, &loads, m))
            .collect(),
        units: v.units.keys().filter_map(|n| unit_row(v, n)).collect(),
    };
    Event::default()
        .event("snapshot")
        .data(serde_json::to_string(&snap).unwrap_or_default())
}

fn delta_event(v: &View, units: &BTreeSet<String>, machines: &BTreeSet<String>) -> Event {
    let loads = v.loads();
    // A unit that moved changes the load of the machine it is on now.
    let mut ms: BTreeSet<&str> = machines.iter().map(String::as_str).collect();
    ms.extend(
        units
            .iter()
            .filter_map(|u| v.placement.get(u))
            .map(String::as_str),
    );
    let out = DeltaOut {
        revision: v.revision,
        machines: ms
            .iter()
            .filter_map(|m| machine_row(v, &loads, m))
            .collect(),
        machines_gone: ms
            .iter()
            .copied()
            .filter(|m| !v.machines.contains_key(*m))
            .collect(),
        units: units.iter().filter_map(|n| unit_row(v, n)).collect(),
        units_gone: units
            .iter()
            .map(String::as_str)
            .filter(|n| !v.units.contains_key(*n))
            .collect(),
    };
    Event::default()
        .event("delta")
        .data(serde_json::to_string(&out).unwrap_or_default())
}

async fn events(State(api): State<Arc<Api>>) -> Response {
    let mut fresh = match api.views.fresh().await {
        Ok(f) => f,
        Err(e) => return error_response(&ApiError::from(e)),
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Event, std::convert::Infallible>>(4);
    tokio::spawn(async move {
        let first = {
            let v = fresh.view.read().unwrap_or_else(|e| e.into_inner());
            snapshot_event(&v)
        };
        if tx.send(Ok(first)).await.is_err() {
            return;
        }
        loop {
            let mut units = BTreeSet::new();
            let mut machines = BTreeSet::new();
            let mut lagged = false;
            let mut take = |d: Arc<Delta>| {
                units.extend(d.units.iter().cloned());
                machines.extend(d.machines.iter().cloned());
            };
            match fresh.deltas.recv().await {
                Ok(d) => take(d),
                Err(RecvError::Lagged(_)) => lagged = true,
                Err(RecvError::Closed) => return,
            }
            // Gather what else changes meanwhile.
            tokio::time::sleep(COALESCE).await;
            loop {
                match fresh.deltas.try_recv() {
                    Ok(d) => take(d),
                    Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) => lagged = true,
                    Err(_) => break,
                }
            }
            let ev = {
                let v = fresh.view.read().unwrap_or_else(|e| e.into_inner());
                if lagged {
                    snapshot_event(&v)
                } else {
                    delta_event(&v, &units, &machines)
                }
            };
            fresh.touch();
            if tx.send(Ok(ev)).await.is_err() {
                return;
            }
        }
    });
    Sse::new(tokio_stream::wrappers::ReceiverStream::new(rx))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

/// The answer of `GET /ui/logs/<unit>`.
#[derive(Debug, Serialize)]
struct Logs {
    unit: String,
    machine: String,
    lines: Vec<LogLine>,
}

async fn logs(
    State(api): State<Arc<Api>>,
    Path(unit): Path<String>,
    axum::extract::Query(q): Query<HashMap<String, String>>,
) -> Response {
    let r = async {
        flotilla_units::unit_name::validate_unit_name(&unit).map_err(|e| ApiError::new(400, e))?;
        let machine = q.get("machine").cloned().unwrap_or_default();
        if !valid_machine_id(&machine) {
            return Err(ApiError::new(400, "give the unit's machine: ?machine=ID"));
        }
        let lines = match q.get("lines") {
            None => 100,
            Some(n) => n
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=crate::agent::MAX_LOG_LINES).contains(n))
                .ok_or_else(|| {
                    ApiError::new(
                        400,
                        format!("lines must be 1 to {}", crate::agent::MAX_LOG_LINES),
                    )
                })?,
        };
        let answer = ask_logs(&api, &machine, &unit, lines).await?;
        match answer.error {
            Some(e) => Err(ApiError::new(404, e)),
            None => Ok(json_response(&Logs {
                unit,
                machine,
                lines: answer.lines,
            })),
        }
    }
    .await;
    r.unwrap_or_else(|e| error_response(&e))
}

/// Asks `machine` for the last `lines` lines of `unit` and waits for the
/// answer.
pub(crate) async fn ask_logs(
    api: &Api,
    machine: &str,
    unit: &str,
    lines: usize,
) -> Result<LogAnswer, ApiError> {
    let reg = &api.registry;
    let k = reg.keys();
    let mut c = reg.client();
    if c.get(k.machine(machine), None)
        .await
        .map_err(crate::stored::RegistryError::from)?
        .kvs()
        .is_empty()
    {
        return Err(ApiError::new(
            404,
            format!("machine {machine} is not in the cluster"),
        ));
    }
    let id = crate::model::log_request_id();
    let req = crate::registry::Registry::encode(&LogRequest {
        id: id.clone(),
        lines,
    });
    let answer_key = k.log_answer(machine, unit);
    let put = c
        .put(k.log_request(machine, unit), req, None)
        .await
        .map_err(crate::stored::RegistryError::from)?;
    let rev = put.header().map(|h| h.revision()).unwrap_or(0);
    let wait = async {
        let mut stream = reg
            .watch_client()
            .watch(
                answer_key.as_str(),
                Some(WatchOptions::new().with_start_revision(rev)),
            )
            .await?;
        while let Some(r) = stream.message().await? {
            for e in r.events() {
                let Some(kv) = e.kv() else { continue };
                if e.event_type() != EventType::Put {
                    continue;
                }
                if let Some(a) = decode_value::<LogAnswer>(kv.key(), kv.value()) {
                    if a.id == id {
                        return Ok(Some(a));
                    }
                }
            }
        }
        Ok::<_, etcd_client::Error>(None)
    };
    let got = tokio::time::timeout(LOG_WAIT, wait).await;
    match got {
        Ok(Ok(Some(a))) => {
            let _ = c.delete(answer_key, None).await;
            Ok(a)
        }
        Ok(Ok(None)) | Err(_) => {
            let _ = c.delete(k.log_request(machine, unit), None).await;
            Err(ApiError::new(
                504,
                format!("machine {machine} did not answer within {LOG_WAIT:?}"),
            ))
        }
        Ok(Err(e)) => Err(crate::stored::RegistryError::from(e).into()),
    }
}
