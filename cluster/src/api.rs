//! fleet API v1 over HTTP (axum): `/fleet/v1/units`, `/units/<name>`,
//! `/state`, `/state/<name>`, `/machines` (GET, PATCH) and `/discovery`.
//!
//! Status codes, JSON shapes, the order of PUT checks and pagination follow
//! FLEET-NOTES; the pure checks live in [`crate::validate`]. Unknown query
//! parameters (fleetctl's `?alt=json`) are ignored. Any etcd failure is a
//! 503. Handlers never panic on input: every body is decoded into typed
//! values and every failure becomes a JSON error entity.

use crate::model::{MachinePage, StatePage, UnitPage};
use crate::registry::{Registry, RegistryError};
use crate::requirements::Requirements;
use crate::validate::{
    check_replaces, decide_put, page_token, parse_page_token, parse_patch, parse_put, ApiError,
    PutAction,
};
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::collections::HashMap;
use std::sync::Arc;
use tokio_rustls::rustls::ServerConfig;

/// Items per page.
pub const PAGE_SIZE: usize = 100;

/// Shared state of the handlers.
pub struct Api {
    /// The registry.
    pub registry: Registry,
}

impl From<RegistryError> for ApiError {
    fn from(e: RegistryError) -> Self {
        ApiError::new(503, format!("unable to reach etcd: {}", e.0))
    }
}

/// An error entity response.
pub fn error_response(e: &ApiError) -> Response {
    let code = StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = serde_json::json!({"error": {"code": e.code, "message": e.message}});
    (
        code,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn json_response<T: serde::Serialize>(v: &T) -> Response {
    match serde_json::to_string(v) {
        Ok(s) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            s,
        )
            .into_response(),
        Err(e) => error_response(&ApiError::new(500, format!("encoding: {e}"))),
    }
}

type Shared = State<Arc<Api>>;
type Q = Query<HashMap<String, String>>;

fn reply(r: Result<Response, ApiError>) -> Response {
    r.unwrap_or_else(|e| error_response(&e))
}

/// The router for `/fleet/v1/...`.
pub fn router(api: Arc<Api>) -> Router {
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
        .fallback(not_found)
        .with_state(api)
}

async fn not_found() -> Response {
    error_response(&ApiError::new(404, "not found"))
}

async fn method_not_allowed() -> Response {
    error_response(&ApiError::new(405, "method not allowed"))
}

fn page_of<T: Clone>(
    kind: &str,
    items: &[T],
    q: &HashMap<String, String>,
) -> Result<(Vec<T>, Option<String>), ApiError> {
    let start = match q.get("nextPageToken") {
        Some(t) => parse_page_token(kind, t)?,
        None => 0,
    };
    if start > items.len() {
        return Err(ApiError::new(
            400,
            "invalid value of nextPageToken query parameter",
        ));
    }
    let end = (start + PAGE_SIZE).min(items.len());
    let next = (end < items.len()).then(|| page_token(kind, end));
    Ok((items[start..end].to_vec(), next))
}

async fn list_units(State(api): Shared, Query(q): Q) -> Response {
    reply(
        async {
            let snap = api.registry.snapshot().await?;
            let all: Vec<_> = snap.units.keys().filter_map(|n| snap.api_unit(n)).collect();
            let (units, next_page_token) = page_of("units", &all, &q)?;
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
    body: Bytes,
) -> Response {
    reply(
        async {
            let ct = headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok());
            let body = parse_put(&name, ct, &body)?;
            // Compare-and-swap on the unit's revision; retry when someone else won.
            for _ in 0..20 {
                let rec = api.registry.unit(&name).await?;
                let action = decide_put(&name, &body, rec.unit.as_ref())?;
                if let PutAction::Create { unit, .. } | PutAction::Replace { unit, .. } = &action {
                    if !Requirements::from_options(&name, &unit.options)
                        .replaces
                        .is_empty()
                    {
                        check_replaces(unit, &api.registry.units().await?)?;
                    }
                }
                let done = match action {
                    PutAction::Create { unit, desired } => api
                        .registry
                        .create_unit(&unit, desired)
                        .await?
                        .then_some(StatusCode::CREATED),
                    PutAction::Replace { unit, desired } => api
                        .registry
                        .replace_unit(&unit, desired, rec.mod_revision)
                        .await?
                        .then_some(StatusCode::CREATED),
                    PutAction::SetDesired(d) => api
                        .registry
                        .set_desired(&name, d, rec.mod_revision)
                        .await?
                        .then_some(StatusCode::NO_CONTENT),
                };
                if let Some(code) = done {
                    return Ok(code.into_response());
                }
            }
            Err(ApiError::new(
                503,
                "unit changed concurrently too many times; try again",
            ))
        }
        .await,
    )
}

async fn delete_unit(State(api): Shared, Path(name): Path<String>) -> Response {
    reply(
        async {
            if api.registry.destroy_unit(&name).await? {
                Ok(StatusCode::NO_CONTENT.into_response())
            } else {
                Err(ApiError::new(404, format!("unit {name} does not exist")))
            }
        }
        .await,
    )
}

async fn list_states(State(api): Shared, Query(q): Q) -> Response {
    reply(
        async {
            let snap = api.registry.snapshot().await?;
            let machine = q.get("machineID").filter(|s| !s.is_empty());
            let unit = q.get("unitName").filter(|s| !s.is_empty());
            let all: Vec<_> = snap
                .api_states()
                .filter(|s| {
                    machine.is_none_or(|m| &s.machine_id == m) && unit.is_none_or(|u| &s.name == u)
                })
                .cloned()
                .collect();
            let (states, next_page_token) = page_of("states", &all, &q)?;
            Ok(json_response(&StatePage {
                states,
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
                .and_then(|m| snap.states.get(&(name.clone(), m.clone())));
            let any = || {
                snap.states
                    .iter()
                    .find(|((n, _), _)| n == &name)
                    .map(|(_, s)| s)
            };
            let st = match placed.or_else(any) {
                Some(s) => Some(s.state.clone()),
                None => api
                    .registry
                    .snapshot()
                    .await?
                    .states
                    .into_iter()
                    .find(|((n, _), _)| n == &name)
                    .map(|(_, s)| s.state),
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
            let snap = api.registry.snapshot().await?;
            let all: Vec<_> = snap.machines.values().cloned().collect();
            let (machines, next_page_token) = page_of("machines", &all, &q)?;
            Ok(json_response(&MachinePage {
                machines,
                next_page_token,
            }))
        }
        .await,
    )
}

async fn patch_machines(State(api): Shared, body: Bytes) -> Response {
    reply(
        async {
            let changes = parse_patch(&body)?;
            api.registry.apply_metadata(&changes).await?;
            Ok(StatusCode::NO_CONTENT.into_response())
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

/// Where the API listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// A unix socket path.
    Unix(std::path::PathBuf),
    /// A TCP address: plain HTTP on loopback, or TLS with client
    /// certificates ([`ApiTls`]) on any address.
    Tcp(std::net::SocketAddr),
}

/// The API's TLS settings (PEM files): its certificate chain and key, and
/// the CA that client certificates must chain to. Every client must present
/// one (there is no anonymous access over TLS).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiTls {
    /// The server's certificate chain (`--api-cert`).
    pub cert: std::path::PathBuf,
    /// Its private key (`--api-key`).
    pub key: std::path::PathBuf,
    /// The CA client certificates are checked against (`--api-client-ca`).
    pub client_ca: std::path::PathBuf,
}

/// Parses `unix:///path` or `tcp://HOST:PORT`. Plain HTTP (`tls` false)
/// is refused off loopback; TLS applies to TCP only.
pub fn parse_listen(s: &str, tls: bool) -> Result<Listen, String> {
    if let Some(p) = s.strip_prefix("unix://") {
        if !p.starts_with('/') {
            return Err(format!(
                "--api-listen {s}: a unix socket needs an absolute path (unix:///run/x.sock)"
            ));
        }
        if tls {
            return Err(format!(
                "--api-listen {s}: --api-cert, --api-key and --api-client-ca apply to a tcp:// listen only"
            ));
        }
        return Ok(Listen::Unix(p.into()));
    }
    if let Some(a) = s.strip_prefix("tcp://") {
        let addr: std::net::SocketAddr = match a.parse() {
            Ok(x) => x,
            Err(_) => {
                let (host, port) = a
                    .rsplit_once(':')
                    .ok_or_else(|| format!("--api-listen {s}: expected tcp://HOST:PORT"))?;
                let port: u16 = port
                    .parse()
                    .map_err(|_| format!("--api-listen {s}: bad port"))?;
                if host == "localhost" {
                    std::net::SocketAddr::from(([127, 0, 0, 1], port))
                } else {
                    return Err(format!(
                        "--api-listen {s}: HOST must be an IP address or localhost"
                    ));
                }
            }
        };
        if !addr.ip().is_loopback() && !tls {
            return Err(format!(
                "--api-listen {s}: refusing plain HTTP on a non-loopback address; listen on loopback \
                 or the unix socket, or give --api-cert, --api-key and --api-client-ca (TLS with \
                 client certificates)"
            ));
        }
        return Ok(Listen::Tcp(addr));
    }
    Err(format!(
        "--api-listen {s}: expected unix:///PATH or tcp://HOST:PORT"
    ))
}

/// Builds the API's TLS configuration: TLS 1.2 and 1.3 (rustls with
/// *ring*), HTTP/1.1, and a client certificate that chains to the client CA
/// required of every connection.
pub fn tls_server_config(t: &ApiTls) -> anyhow::Result<std::sync::Arc<ServerConfig>> {
    use anyhow::Context;
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use tokio_rustls::rustls::server::WebPkiClientVerifier;
    use tokio_rustls::rustls::RootCertStore;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&t.cert)
        .and_then(|it| it.collect::<Result<_, _>>())
        .with_context(|| format!("--api-cert {}", t.cert.display()))?;
    anyhow::ensure!(
        !certs.is_empty(),
        "--api-cert {}: no certificate in it",
        t.cert.display()
    );
    let key = PrivateKeyDer::from_pem_file(&t.key)
        .with_context(|| format!("--api-key {}", t.key.display()))?;
    let mut roots = RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(&t.client_ca)
        .with_context(|| format!("--api-client-ca {}", t.client_ca.display()))?
    {
        let c = c.with_context(|| format!("--api-client-ca {}", t.client_ca.display()))?;
        roots
            .add(c)
            .with_context(|| format!("--api-client-ca {}", t.client_ca.display()))?;
    }
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .with_context(|| format!("--api-client-ca {}", t.client_ca.display()))?;
    let mut cfg = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS versions")?
        .with_client_cert_verifier(verifier)
        .with_single_cert(certs, key)
        .context("--api-cert and --api-key do not go together")?;
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(cfg))
}

/// Connections that completed their TLS handshake, for `axum::serve`.
/// Handshakes run in their own tasks (at most 10 s each), so a slow or
/// hostile client never holds up the others.
struct TlsListener {
    rx: tokio::sync::mpsc::Receiver<(
        tokio_rustls::server::TlsStream<tokio::net::TcpStream>,
        std::net::SocketAddr,
    )>,
    local: std::net::SocketAddr,
}

impl TlsListener {
    fn new(tcp: tokio::net::TcpListener, cfg: Arc<ServerConfig>) -> std::io::Result<TlsListener> {
        let local = tcp.local_addr()?;
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        let acceptor = tokio_rustls::TlsAcceptor::from(cfg);
        tokio::spawn(async move {
            loop {
                let (sock, peer) = match tcp.accept().await {
                    Ok(x) => x,
                    Err(e) => {
                        eprintln!("clusterd: API: accept: {e}");
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                        continue;
                    }
                };
                if tx.is_closed() {
                    return;
                }
                let acceptor = acceptor.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    let hs = tokio::time::timeout(
                        std::time::Duration::from_secs(10),
                        acceptor.accept(sock),
                    )
                    .await;
                    match hs {
                        Ok(Ok(tls)) => {
                            let _ = tx.send((tls, peer)).await;
                        }
                        Ok(Err(e)) => eprintln!("clusterd: API: TLS handshake with {peer}: {e}"),
                        Err(_) => eprintln!("clusterd: API: TLS handshake with {peer} timed out"),
                    }
                });
            }
        });
        Ok(TlsListener { rx, local })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.rx.recv().await {
            Some(x) => x,
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}

/// Serves the API until the task is dropped: on a unix socket, on TCP in
/// plain HTTP, or on TCP with TLS when `tls` is given.
pub async fn serve(listen: &Listen, tls: Option<&ApiTls>, api: Arc<Api>) -> anyhow::Result<()> {
    use anyhow::Context;
    let app = router(api);
    match listen {
        Listen::Unix(path) => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
            }
            let _ = std::fs::remove_file(path);
            let l = tokio::net::UnixListener::bind(path)
                .with_context(|| format!("binding {}", path.display()))?;
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o660));
            axum::serve(l, app).await.context("serving the API")?;
        }
        Listen::Tcp(addr) => {
            let l = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("binding {addr}"))?;
            match tls {
                None => axum::serve(l, app).await.context("serving the API")?,
                Some(t) => {
                    let l = TlsListener::new(l, tls_server_config(t)?)?;
                    axum::serve(l, app).await.context("serving the API")?
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses() {
        assert_eq!(
            parse_listen("unix:///run/x.sock", false),
            Ok(Listen::Unix("/run/x.sock".into()))
        );
        assert!(matches!(
            parse_listen("tcp://127.0.0.1:8080", false),
            Ok(Listen::Tcp(_))
        ));
        assert!(matches!(
            parse_listen("tcp://localhost:8080", false),
            Ok(Listen::Tcp(_))
        ));
        assert!(matches!(
            parse_listen("tcp://[::1]:8080", false),
            Ok(Listen::Tcp(_))
        ));
        assert!(parse_listen("tcp://0.0.0.0:8080", false).is_err());
        assert!(parse_listen("tcp://10.0.0.1:8080", false).is_err());
        assert!(parse_listen("http://127.0.0.1:1", false).is_err());
        assert!(parse_listen("unix://rel.sock", false).is_err());
        // With TLS: any TCP address, never a unix socket.
        assert!(matches!(
            parse_listen("tcp://10.0.0.1:8080", true),
            Ok(Listen::Tcp(_))
        ));
        assert!(matches!(
            parse_listen("tcp://127.0.0.1:8080", true),
            Ok(Listen::Tcp(_))
        ));
        assert!(parse_listen("unix:///run/x.sock", true).is_err());
        let v: serde_json::Value = serde_json::from_str(DISCOVERY).unwrap();
        assert_eq!(v["kind"], "discovery#restDescription");
    }
}
