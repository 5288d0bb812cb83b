//! fleet API v1 over HTTP (axum): `/fleet/v1/units`, `/units/<name>`,
//! `/state`, `/state/<name>`, `/machines` (GET, PATCH) and `/discovery`;
//! the application around it (the dashboard, the limits) is [`crate::app`].
//!
//! Status codes, JSON shapes, the order of PUT checks and pagination follow
//! docs/fleet-compat.md; the pure checks live in [`crate::validate`]. Unknown query
//! parameters (fleetctl's `?alt=json`) are ignored. Any etcd failure is a
//! 503. Handlers never panic on input: every body is decoded into typed
//! values and every failure becomes a JSON error entity. Listings are
//! served from the live view ([`crate::live`]), pages keyed by the last
//! item served; single units are read from etcd.

use crate::commit::{Commits, Outcome};
use crate::forward::{committed_by, Forwarded, Forwarder};
use crate::live::Views;
use crate::model::{ClusterState, MachinePage, StatePage, StoredUnit, UnitPage};
use crate::registry::Registry;
use crate::respond::{error_response, json_no_content, json_response, method_not_allowed};
use crate::stored::RegistryError;
use crate::validate::{
    decide_put, page_token, parse_page_token, parse_patch, parse_put, set_desired_only, ApiError,
    PutAction,
};
use crate::write::{Change, Guard, Write};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::collections::HashMap;
use std::ops::Bound;
use std::sync::Arc;

/// Items per page.
pub const PAGE_SIZE: usize = 100;

/// Shared state of the handlers.
pub struct Api {
    /// The registry.
    pub registry: Registry,
    /// The live view behind listings and the dashboard.
    pub views: Views,
    /// The units' writes, sent to etcd in groups.
    pub commits: Commits,
    /// The unit writes handed to the cluster's committer.
    pub forward: Forwarder,
    /// Refuse `Host` names other than IP addresses and `localhost` (a
    /// plain-HTTP TCP listen: [`crate::serve::guard`]).
    pub check_host: bool,
    /// Every request is answered `503` (the machine ID is in use by
    /// another clusterd: [`crate::claim`]), as fleetd's API answered until
    /// it could register.
    pub refused: std::sync::atomic::AtomicBool,
}

impl Api {
    /// The API's state for a registry (starts its tasks: call it inside
    /// the runtime), on machine `me`, its unit writes sent to the
    /// committer `committer` names ([`crate::forward`]), over TLS with
    /// `forward_tls` when it is advertised as `https://`.
    pub fn new(
        registry: Registry,
        check_host: bool,
        me: String,
        committer: tokio::sync::watch::Receiver<Option<crate::forward::Committer>>,
        forward_tls: Option<Arc<tokio_rustls::rustls::ClientConfig>>,
    ) -> Api {
        Api {
            views: Views::new(registry.clone()),
            commits: Commits::start(registry.clone()),
            forward: Forwarder::new(me, committer, forward_tls),
            registry,
            check_host,
            refused: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Whether the API refuses every request ([`Api::refused`]).
    pub fn is_refused(&self) -> bool {
        self.refused.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Refuses every request, or serves again.
    pub fn refuse(&self, refused: bool) {
        self.refused
            .store(refused, std::sync::atomic::Ordering::Relaxed);
    }
}

impl From<RegistryError> for ApiError {
    fn from(e: RegistryError) -> Self {
        ApiError::new(503, format!("unable to reach etcd: {}", e.0))
    }
}

type Shared = State<Arc<Api>>;
type Q = Query<HashMap<String, String>>;

fn reply(r: Result<Response, ApiError>) -> Response {
    r.unwrap_or_else(|e| error_response(&e))
}

/// A request body, or why it could not be read (413 past the limit).
fn body_of(b: Result<Bytes, BytesRejection>) -> Result<Bytes, ApiError> {
    b.map_err(|e| ApiError::new(e.status().as_u16(), e.body_text()))
}

/// The fleet API's routes (the application is put together in [`crate::app`]).
pub fn routes() -> Router<Arc<Api>> {
    Router::new()
        .route(
            "/fleet/v1/discovery",
            get(discovery).fallback(method_not_allowed),
        )
        .route(
            "/fleet/v1/discovery.json",
            get(discovery).fallback(method_not_allowed),
        )
        .route(
            "/fleet/v1/units",
            get(list_units).fallback(method_not_allowed),
        )
        .route(
            "/fleet/v1/units/{name}",
            get(get_unit)
                .put(put_unit)
                .delete(delete_unit)
                .fallback(method_not_allowed),
        )
        .route(
            "/fleet/v1/state",
            get(list_states).fallback(method_not_allowed),
        )
        .route(
            "/fleet/v1/state/{name}",
            get(get_state).fallback(method_not_allowed),
        )
        .route(
            "/fleet/v1/machines",
            get(list_machines)
                .patch(patch_machines)
                .fallback(method_not_allowed),
        )
}

/// Where a page starts: after the key its token names.
fn page_start(kind: &str, q: &HashMap<String, String>) -> Result<Option<String>, ApiError> {
    q.get("nextPageToken")
        .map(|t| parse_page_token(kind, t))
        .transpose()
}

/// Up to [`PAGE_SIZE`] items from `items` and the token of the next page
/// (`key` gives the key an item is paged by).
fn page<T>(
    kind: &str,
    items: impl Iterator<Item = T>,
    key: impl Fn(&T) -> String,
) -> (Vec<T>, Option<String>) {
    let mut items = items.peekable();
    let out: Vec<T> = items.by_ref().take(PAGE_SIZE).collect();
    let next = match (items.peek(), out.last()) {
        (Some(_), Some(last)) => Some(page_token(kind, &key(last))),
        _ => None,
    };
    (out, next)
}

fn after<K: Ord>(start: Option<K>) -> (Bound<K>, Bound<K>) {
    match start {
        Some(k) => (Bound::Excluded(k), Bound::Unbounded),
        None => (Bound::Unbounded, Bound::Unbounded),
    }
}

async fn list_units(State(api): Shared, Query(q): Q) -> Response {
    reply(
        async {
            let start = page_start("units", &q)?;
            let fresh = api.views.fresh().await?;
            let v = fresh.view.read().unwrap_or_else(|e| e.into_inner());
            let names = v.units.range::<String, _>(after(start)).map(|(n, _)| n);
            let (names, next_page_token) = page("units", names, |n| n.to_string());
            let units = names.into_iter().filter_map(|n| v.api_unit(n)).collect();
            Ok(json_response(&UnitPage {
                units,
                next_page_token,
            }))
        }
        .await,
    )
}

async fn get_unit(State(api): Shared, Path(name): Path<String>) -> Response {
    reply(
        async {
            let rec = api.registry.unit(&name).await?;
            match rec.snapshot.api_unit(&name) {
                Some(u) => Ok(json_response(&u)),
                None => Err(ApiError::new(404, format!("unit {name} does not exist"))),
            }
        }
        .await,
    )
}

async fn put_unit(
    State(api): Shared,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    if let Ok(b) = &body {
        let to = api
            .forward
            .unit_write(Method::PUT, &name, &headers, b.clone());
        if let Forwarded::Answer(r) = to.await {
            return r;
        }
    }
    let resp = reply(
        async {
            let body = body_of(body)?;
            let ct = headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok());
            let body = parse_put(&name, ct, &body)?;
            // The common requests go to etcd without a read first: a body
            // that would create the unit is tried as a creation (one
            // request when the unit is new, the common case of a deploy),
            // a body with only a desired state as a change of an existing
            // unit's. When the unit is not as assumed, the refusal carries
            // its file, and the request is decided from that.
            let mut known = None;
            let first = match decide_put(&name, &body, None) {
                Ok(PutAction::Create { unit, desired }) => {
                    Some((create(unit, desired), StatusCode::CREATED))
                }
                _ => set_desired_only(&name, &body).map(|d| {
                    (
                        set_desired(&name, Guard::Present, d),
                        StatusCode::NO_CONTENT,
                    )
                }),
            };
            if let Some((write, code)) = first {
                match api.commits.write(write).await? {
                    Outcome::Written => return Ok(code.into_response()),
                    Outcome::Refused(rec) => known = Some(*rec),
                }
            }
            // Decided from the stored file, written if it is still the
            // same; decided again from the new one when it changed.
            for _ in 0..20 {
                let rec = match known.take() {
                    Some(r) => r,
                    None => api.registry.unit_file(&name).await?,
                };
                let action = decide_put(&name, &body, rec.unit.as_ref())?;
                let at = Guard::At(rec.mod_revision);
                let (write, code) = match action {
                    PutAction::Create { unit, desired } => {
                        (create(unit, desired), StatusCode::CREATED)
                    }
                    PutAction::Replace { unit, desired } => (
                        Write {
                            name: name.clone(),
                            guard: at,
                            change: Change::Put {
                                unit: Some(unit),
                                desired: Some(desired),
                            },
                        },
                        StatusCode::CREATED,
                    ),
                    PutAction::SetDesired(d) => (set_desired(&name, at, d), StatusCode::NO_CONTENT),
                };
                match api.commits.write(write).await? {
                    Outcome::Written => return Ok(code.into_response()),
                    Outcome::Refused(rec) => known = Some(*rec),
                }
            }
            Err(ApiError::new(
                503,
                "unit changed concurrently too many times; try again",
            ))
        }
        .await,
    );
    committed_by(resp, api.forward.me())
}

/// The write that creates a unit.
fn create(unit: StoredUnit, desired: ClusterState) -> Write {
    Write {
        name: unit.name.clone(),
        guard: Guard::Absent,
        change: Change::Put {
            unit: Some(unit),
            desired: Some(desired),
        },
    }
}

/// The write that sets a unit's desired state.
fn set_desired(name: &str, guard: Guard, desired: ClusterState) -> Write {
    Write {
        name: name.to_string(),
        guard,
        change: Change::Put {
            unit: None,
            desired: Some(desired),
        },
    }
}

async fn delete_unit(State(api): Shared, Path(name): Path<String>, headers: HeaderMap) -> Response {
    let to = api
        .forward
        .unit_write(Method::DELETE, &name, &headers, Bytes::new());
    if let Forwarded::Answer(r) = to.await {
        return r;
    }
    let resp = reply(
        async {
            let write = Write {
                name: name.clone(),
                guard: Guard::Present,
                change: Change::Delete,
            };
            if let Outcome::Written = api.commits.write(write).await? {
                Ok(StatusCode::NO_CONTENT.into_response())
            } else {
                Err(ApiError::new(404, format!("unit {name} does not exist")))
            }
        }
        .await,
    );
    committed_by(resp, api.forward.me())
}

async fn list_states(State(api): Shared, Query(q): Q) -> Response {
    reply(
        async {
            let start = page_start("states", &q)?
                .map(|t| match t.split_once('/') {
                    Some((u, m)) => Ok((u.to_string(), m.to_string())),
                    None => Err(ApiError::new(
                        400,
                        "invalid value of nextPageToken query parameter",
                    )),
                })
                .transpose()?;
            let machine = q.get("machineID").filter(|s| !s.is_empty());
            let unit = q.get("unitName").filter(|s| !s.is_empty());
            let fresh = api.views.fresh().await?;
            let v = fresh.view.read().unwrap_or_else(|e| e.into_inner());
            let all = v
                .states
                .range::<(String, String), _>(after(start))
                .filter(|((u, m), _)| {
                    machine.is_none_or(|want| m == want) && unit.is_none_or(|want| u == want)
                })
                .map(|((u, m), s)| (u, m, s.state.clone()));
            let (items, next_page_token) = page("states", all, |(u, m, _)| format!("{u}/{m}"));
            Ok(json_response(&StatePage {
                states: items.into_iter().map(|(_, _, s)| s).collect(),
                next_page_token,
            }))
        }
        .await,
    )
}

async fn get_state(State(api): Shared, Path(name): Path<String>) -> Response {
    reply(
        async {
            let rec = api.registry.unit(&name).await?;
            let snap = &rec.snapshot;
            // The state reported by the unit's machine; for global units, any.
            let placed = snap
                .placement
                .get(&name)
                .and_then(|m| snap.states.get(&(name.clone(), m.clone())))
                .map(|s| s.state.clone());
            let st = match placed {
                Some(s) => Some(s),
                None => {
                    let fresh = api.views.fresh().await?;
                    let v = fresh.view.read().unwrap_or_else(|e| e.into_inner());
                    let any = v.unit_states(&name).next().cloned();
                    any
                }
            };
            match st {
                Some(s) => Ok(json_response(&s)),
                None => Err(ApiError::new(404, format!("no state for unit {name}"))),
            }
        }
        .await,
    )
}

async fn list_machines(State(api): Shared, Query(q): Q) -> Response {
    reply(
        async {
            let start = page_start("machines", &q)?;
            let fresh = api.views.fresh().await?;
            let v = fresh.view.read().unwrap_or_else(|e| e.into_inner());
            let all = v
                .machines
                .range::<String, _>(after(start))
                .map(|(_, m)| m.clone());
            let (machines, next_page_token) = page("machines", all, |m| m.id.clone());
            Ok(json_response(&MachinePage {
                machines,
                next_page_token,
            }))
        }
        .await,
    )
}

async fn patch_machines(State(api): Shared, body: Result<Bytes, BytesRejection>) -> Response {
    reply(
        async {
            let changes = parse_patch(&body_of(body)?)?;
            api.registry.apply_metadata(&changes).await?;
            Ok(json_no_content())
        }
        .await,
    )
}

async fn discovery() -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        DISCOVERY,
    )
        .into_response()
}

/// The discovery document (Google API discovery format, as fleet served it;
/// `rootUrl` is deliberately unusable: clients set their endpoint).
pub const DISCOVERY: &str = r##"{
  "kind": "discovery#restDescription",
  "discoveryVersion": "v1",
  "id": "fleet:v1-alpha",
  "name": "schema",
  "version": "v1-alpha",
  "title": "fleet API",
  "description": "Declare and inspect the units of a fleet cluster (served by flotilla's clusterd).",
  "documentationLink": "docs/cluster.md",
  "protocol": "rest",
  "icons": {"x16": "", "x32": ""},
  "labels": [],
  "baseUrl": "$ENDPOINT/fleet/v1/",
  "basePath": "/fleet/v1/",
  "rootUrl": "$ENDPOINT/",
  "servicePath": "fleet/v1/",
  "batchPath": "batch",
  "parameters": {
    "alt": {"type": "string", "description": "Data format for the response.", "default": "json", "enum": ["json"], "location": "query"}
  },
  "auth": {},
  "schemas": {
    "Machine": {"id": "Machine", "type": "object", "properties": {
      "id": {"type": "string"}, "primaryIP": {"type": "string"},
      "metadata": {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}}}},
    "MachinePage": {"id": "MachinePage", "type": "object", "properties": {
      "machines": {"type": "array", "items": {"$ref": "Machine"}}, "nextPageToken": {"type": "string"}}},
    "UnitOption": {"id": "UnitOption", "type": "object", "properties": {
      "section": {"type": "string"}, "name": {"type": "string"}, "value": {"type": "string"}}},
    "Unit": {"id": "Unit", "type": "object", "properties": {
      "name": {"type": "string"},
      "options": {"type": "array", "items": {"$ref": "UnitOption"}},
      "desiredState": {"type": "string", "enum": ["inactive", "loaded", "launched"]},
      "currentState": {"type": "string", "enum": ["inactive", "loaded", "launched"]},
      "machineID": {"type": "string", "required": true}}},
    "UnitPage": {"id": "UnitPage", "type": "object", "properties": {
      "units": {"type": "array", "items": {"$ref": "Unit"}}, "nextPageToken": {"type": "string"}}},
    "UnitState": {"id": "UnitState", "type": "object", "properties": {
      "name": {"type": "string"}, "hash": {"type": "string"}, "machineID": {"type": "string"},
      "systemdLoadState": {"type": "string"}, "systemdActiveState": {"type": "string"},
      "systemdSubState": {"type": "string"}}},
    "UnitStatePage": {"id": "UnitStatePage", "type": "object", "properties": {
      "states": {"type": "array", "items": {"$ref": "UnitState"}}, "nextPageToken": {"type": "string"}}}
  },
  "resources": {
    "Machines": {"methods": {
      "List": {"id": "fleet.Machine.List", "description": "Retrieve a page of Machine objects.",
        "httpMethod": "GET", "path": "machines",
        "parameters": {"nextPageToken": {"type": "string", "location": "query"}},
        "response": {"$ref": "MachinePage"}},
      "Patch": {"id": "fleet.Machine.Patch", "description": "Add, replace or remove machine metadata.",
        "httpMethod": "PATCH", "path": "machines"}}},
    "Units": {"methods": {
      "List": {"id": "fleet.Unit.List", "description": "Retrieve a page of Unit objects.",
        "httpMethod": "GET", "path": "units",
        "parameters": {"nextPageToken": {"type": "string", "location": "query"}},
        "response": {"$ref": "UnitPage"}},
      "Get": {"id": "fleet.Unit.Get", "description": "Retrieve a single Unit object.",
        "httpMethod": "GET", "path": "units/{unitName}",
        "parameters": {"unitName": {"type": "string", "location": "path", "required": true}},
        "parameterOrder": ["unitName"], "response": {"$ref": "Unit"}},
      "Delete": {"id": "fleet.Unit.Delete", "description": "Delete the referenced Unit object.",
        "httpMethod": "DELETE", "path": "units/{unitName}",
        "parameters": {"unitName": {"type": "string", "location": "path", "required": true}},
        "parameterOrder": ["unitName"]},
      "Set": {"id": "fleet.Unit.Set", "description": "Create or update a Unit.",
        "httpMethod": "PUT", "path": "units/{unitName}",
        "parameters": {"unitName": {"type": "string", "location": "path", "required": true}},
        "parameterOrder": ["unitName"], "request": {"$ref": "Unit"}}}},
    "UnitState": {"methods": {
      "List": {"id": "fleet.UnitState.List", "description": "Retrieve a page of UnitState objects.",
        "httpMethod": "GET", "path": "state",
        "parameters": {
          "nextPageToken": {"type": "string", "location": "query"},
          "unitName": {"type": "string", "location": "query"},
          "machineID": {"type": "string", "location": "query"}},
        "response": {"$ref": "UnitStatePage"}}}}
  }
}
"##;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_is_json() {
        let v: serde_json::Value = serde_json::from_str(DISCOVERY).unwrap();
        assert_eq!(v["kind"], "discovery#restDescription");
    }

    #[test]
    fn pages_are_keyed_by_the_last_item() {
        let (p, next) = page("units", 0..250, |i| format!("{i:03}"));
        assert_eq!(p.len(), PAGE_SIZE);
        assert_eq!(parse_page_token("units", &next.unwrap()), Ok("099".into()));
        let (p, next) = page("units", 0..100, |i| i.to_string());
        assert_eq!((p.len(), next), (100, None));
    }
}
