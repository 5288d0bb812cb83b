//! One committer for the cluster's unit writes: every API hands its unit
//! `PUT`s and `DELETE`s to the API of the engine's leader, whose group
//! commit ([`crate::commit`]) then carries the writes of every API's
//! clients in one etcd transaction.
//!
//! Why: a group commit merges only the requests of one API. Clients spread
//! over many machines' APIs (a load balancer in front of them) leave each
//! API one request at a time, and each becomes a transaction and a WAL
//! sync of its own: 10 clients on 10 APIs made ten times the transactions
//! and four times the syncs of 10 clients on one API, and took three times
//! as long (`docs/cluster.md`, "One committer").
//!
//! The leader publishes where its API is reached (`--api-advertise`) in
//! `engine/committer`, bound to its leader lease, so that the key goes when
//! the leader does. Every API follows the key. A unit write that arrives
//! while another machine is the committer is sent to it whole (the same
//! request, marked [`FORWARDED`]), and its answer is relayed: the committer
//! decides and validates as for its own clients, and answers only once
//! etcd has the write, so the answer means what it meant before. A
//! committer that cannot be reached (no connection) makes the API commit
//! the write itself, as when there is none; one that fails after the
//! request went out gets a 503, as an etcd failure does (the write may or
//! may not have been applied; the client may send it again). A forwarded
//! request is never forwarded again.
//!
//! The committer is reached as it advertised itself: a unix socket or a
//! loopback address in plain HTTP (machines on one host), or
//! `https://IP:PORT` (machines on different hosts). Over TLS the
//! forwarding API shows the committer its own certificate (`--api-cert`,
//! `--api-key`: the committer's TLS listener accepts no connection without
//! a client certificate of its `--api-client-ca`, as for any other client)
//! and checks the committer's certificate against its `--api-client-ca`,
//! the cluster's CA, for the advertised IP address. The forwarding client
//! speaks TLS 1.2 only: there the client's handshake completes only after
//! the server has accepted the client's certificate (TLS 1.3 lets the
//! client send its request before the server has judged it), so a refused
//! certificate is a write not sent, committed here, never a 503.

use crate::listen::{pem_identity, pem_roots, ApiTls, Listen, MAX_BODY};
use crate::respond::error_response;
use crate::validate::ApiError;
use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, HeaderValue, Method, Request};
use axum::response::Response;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_rustls::rustls::ClientConfig;

/// The header that marks a request one API forwarded to the committer.
pub const FORWARDED: &str = "x-flotilla-forwarded";

/// The header naming the machine whose API committed a unit write.
pub const COMMITTED_BY: &str = "x-flotilla-committed-by";

/// How long an idle connection to the committer is kept for the next
/// write: well under the API's 10 s header timeout, after which the
/// committer closes it.
const IDLE: Duration = Duration::from_secs(4);

/// How long connecting to the committer (TCP and TLS handshake) may take
/// before the write is committed here instead: nothing was sent yet.
const CONNECT: Duration = Duration::from_secs(3);

/// Where a committer is reached (`--api-advertise`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `unix:///PATH`: plain HTTP on this host.
    Unix(PathBuf),
    /// `tcp://HOST:PORT` on loopback: plain HTTP on this host.
    Tcp(SocketAddr),
    /// `https://IP:PORT`: TLS with client certificates, on any address.
    Tls(SocketAddr),
}

/// Parses an advertised API: `unix:///PATH`, a loopback `tcp://HOST:PORT`
/// or `https://IP:PORT`.
pub fn parse_target(s: &str) -> Result<Target, String> {
    if let Some(a) = s.strip_prefix("https://") {
        let a = a.strip_suffix('/').unwrap_or(a);
        return a.parse::<SocketAddr>().map(Target::Tls).map_err(|_| {
            format!(
                "--api-advertise {s}: expected https://IP:PORT (an IP address that the API's \
                 certificate names)"
            )
        });
    }
    match crate::listen::parse_listen(s, false) {
        Ok(Listen::Unix(p)) => Ok(Target::Unix(p)),
        Ok(Listen::Tcp(a)) => Ok(Target::Tcp(a)),
        Err(e) if s.starts_with("tcp://") && e.contains("refusing plain HTTP") => Err(format!(
            "--api-advertise {s}: forwarded writes would travel in plain HTTP off loopback; \
             advertise https://HOST:PORT (with --api-cert, --api-key and --api-client-ca)"
        )),
        Err(e) => Err(format!(
            "{}; --api-advertise names unix:///PATH, a loopback tcp://HOST:PORT or https://IP:PORT",
            e.replace("--api-listen", "--api-advertise")
        )),
    }
}

/// Checks `--api-advertise` against the API's own TLS: an API that serves
/// TLS is advertised as `https://`, and only such an API can be (the
/// others connect to it with TLS and their own certificates).
pub fn check_advertise(s: &str, tls: bool) -> Result<Target, String> {
    let t = parse_target(s)?;
    match (&t, tls) {
        (Target::Tls(_), false) => Err(format!(
            "--api-advertise {s}: an https:// API needs --api-cert, --api-key and \
             --api-client-ca (the API's TLS listen)"
        )),
        (Target::Unix(_) | Target::Tcp(_), true) => Err(format!(
            "--api-advertise {s}: the API listens with TLS (--api-cert, --api-key, \
             --api-client-ca); advertise it as https://IP:PORT"
        )),
        _ => Ok(t),
    }
}

/// The TLS client of the forwarded writes: this API's certificate and key
/// as its client identity, the committer's certificate checked against
/// `--api-client-ca`; TLS 1.2 only (see the module's comment).
pub fn tls_client_config(t: &ApiTls) -> anyhow::Result<Arc<ClientConfig>> {
    use anyhow::Context;
    use tokio_rustls::rustls::version::TLS12;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let (certs, key) = pem_identity(t)?;
    let roots = pem_roots("--api-client-ca", &t.client_ca)?;
    let mut cfg = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&TLS12])
        .context("TLS versions")?
        .with_root_certificates(roots)
        .with_client_auth_cert(certs, key)
        .context("--api-cert and --api-key do not go together")?;
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(cfg))
}

/// What `--api-advertise` is when not given: the API's own listen when it
/// names one place that others can reach — its unix socket, a loopback
/// address (both only from the same host: see [`Committer::host`]), or a
/// TLS address that is not the unspecified one (`0.0.0.0`, `::`: no one
/// address to hand out).
pub fn default_advertise(listen: &Listen, tls: bool) -> Option<String> {
    match listen {
        Listen::Unix(p) => Some(format!("unix://{}", p.display())),
        Listen::Tcp(a) if tls && !a.ip().is_unspecified() => Some(format!("https://{a}")),
        Listen::Tcp(a) if !tls => Some(format!("tcp://{a}")),
        Listen::Tcp(_) => None,
    }
}

/// The value of `engine/committer`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Committer {
    /// The leader's machine ID.
    pub machine: String,
    /// Its API as `--api-advertise` gave it.
    pub url: String,
    /// For a URL that only reaches the committer from its own host (a unix
    /// socket, a loopback address): that host's boot ID. An API on another
    /// host would reach its own socket or port by that URL, so it commits
    /// its writes itself instead. Absent for `https://`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl Committer {
    /// The committer record for machine `machine` advertising `url`, on the
    /// host whose boot ID is `boot_id`.
    pub fn new(machine: &str, url: &str, boot_id: Option<&str>) -> Committer {
        let host_local = !url.starts_with("https://");
        Committer {
            machine: machine.to_string(),
            url: url.to_string(),
            host: boot_id.filter(|_| host_local).map(str::to_string),
        }
    }
}

/// Where an API sends a unit write: `None` to commit it itself. `host` is
/// this machine's boot ID.
pub fn route<'a>(
    committer: Option<&'a Committer>,
    me: &str,
    host: Option<&str>,
    forwarded: bool,
) -> Option<&'a Committer> {
    committer.filter(|c| {
        !forwarded && c.machine != me && (c.host.is_none() || c.host.as_deref() == host)
    })
}

/// The request path of a unit, its name percent-encoded (a unit name may
/// hold `\`, which a URI may not).
pub fn unit_path(name: &str) -> String {
    let mut p = String::from("/fleet/v1/units/");
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~:@".contains(&b) {
            p.push(b as char);
        } else {
            p.push_str(&format!("%{b:02X}"));
        }
    }
    p
}

/// An idle connection to a committer.
struct Idle {
    url: String,
    send: SendRequest<Body>,
    since: Instant,
}

/// Sends the API's unit writes to the committer.
pub struct Forwarder {
    me: String,
    /// This host's boot ID ([`Committer::host`]).
    host: Option<String>,
    committer: watch::Receiver<Option<Committer>>,
    tls: Option<Arc<ClientConfig>>,
    idle: Mutex<Vec<Idle>>,
    /// Why the last write was not forwarded (logged once, not per write).
    failing: Mutex<Option<String>>,
}

/// How forwarding a write ended.
pub enum Forwarded {
    /// The committer's answer (or a 503 when it failed mid-request).
    Answer(Response),
    /// Nothing was sent: commit the write here.
    Local,
}

impl Forwarder {
    /// A forwarder for machine `me` following `committer`, with the TLS
    /// client `tls` for committers advertised as `https://`.
    pub fn new(
        me: String,
        committer: watch::Receiver<Option<Committer>>,
        tls: Option<Arc<ClientConfig>>,
    ) -> Forwarder {
        Forwarder {
            me,
            host: crate::host::boot_id(),
            committer,
            tls,
            idle: Mutex::new(Vec::new()),
            failing: Mutex::new(None),
        }
    }

    /// Logs why writes are committed here instead of by `c`, when the
    /// reason is new.
    fn not_forwarded(&self, c: &Committer, why: String) -> Forwarded {
        let msg = format!(
            "clusterd: cannot forward unit writes to the committer (machine {} at {}): {why}; \
             committing them here",
            c.machine, c.url
        );
        let mut last = self.failing.lock().unwrap_or_else(|e| e.into_inner());
        if last.as_deref() != Some(msg.as_str()) {
            eprintln!("{msg}");
            *last = Some(msg);
        }
        Forwarded::Local
    }

    /// A write reached the committer: a later failure is logged again.
    fn forwarded(&self) {
        let mut last = self.failing.lock().unwrap_or_else(|e| e.into_inner());
        if last.take().is_some() {
            eprintln!("clusterd: forwarding unit writes to the committer again");
        }
    }

    /// This machine's ID.
    pub fn me(&self) -> &str {
        &self.me
    }

    /// Sends the unit write `method name` to the committer, unless this
    /// API is to commit it itself.
    pub async fn unit_write(
        &self,
        method: Method,
        name: &str,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Forwarded {
        let target = {
            let c = self.committer.borrow();
            let fwd = headers.contains_key(FORWARDED);
            match route(c.as_ref(), &self.me, self.host.as_deref(), fwd) {
                Some(c) => c.clone(),
                None => return Forwarded::Local,
            }
        };
        let dest = match parse_target(&target.url) {
            Ok(d) => d,
            Err(e) => return self.not_forwarded(&target, e),
        };
        let failed = |e: String| {
            Forwarded::Answer(error_response(&ApiError::new(
                503,
                format!(
                    "the committer (machine {}) did not answer: {e}; the write may or may not be applied",
                    target.machine
                ),
            )))
        };
        // A kept connection the committer closed (its clusterd restarted)
        // gives the request back unsent: then once more on a new one.
        let mut sent = None;
        for pooled in [true, false] {
            let mut send = match self.connection(&target.url, &dest, pooled).await {
                Ok(s) => s,
                Err(e) => return self.not_forwarded(&target, e),
            };
            let mut req = Request::builder()
                .method(method.clone())
                .uri(unit_path(name))
                .header(header::HOST, "localhost")
                .header(FORWARDED, self.me.as_str());
            if let Some(ct) = headers.get(header::CONTENT_TYPE) {
                req = req.header(header::CONTENT_TYPE, ct);
            }
            let Ok(req) = req.body(Body::from(body.clone())) else {
                return Forwarded::Local;
            };
            match send.try_send_request(req).await {
                Ok(r) => {
                    sent = Some((r, send));
                    break;
                }
                Err(mut e) => {
                    if e.take_message().is_none() {
                        return failed(e.into_error().to_string());
                    }
                }
            }
        }
        // Never sent: nothing reached the committer.
        let Some((resp, send)) = sent else {
            return Forwarded::Local;
        };
        self.forwarded();
        let (parts, body) = resp.into_parts();
        // The answers are small (an empty body or an error entity): read
        // whole, so that the connection is free for the next write.
        let body = match axum::body::to_bytes(Body::new(body), MAX_BODY).await {
            Ok(b) => b,
            Err(e) => return failed(e.to_string()),
        };
        self.put_back(Idle {
            url: target.url,
            send,
            since: Instant::now(),
        });
        let mut resp = Response::from_parts(parts, Body::from(body));
        resp.headers_mut().remove(header::CONNECTION);
        Forwarded::Answer(resp)
    }

    /// An idle connection to `url` (when `pooled`), or a new one; why not
    /// when it cannot be reached (nothing was sent).
    async fn connection(
        &self,
        url: &str,
        dest: &Target,
        pooled: bool,
    ) -> Result<SendRequest<Body>, String> {
        loop {
            let idle = pooled.then(|| {
                let mut v = self.idle.lock().unwrap_or_else(|e| e.into_inner());
                v.retain(|i| i.url == url && i.since.elapsed() < IDLE && !i.send.is_closed());
                v.pop()
            });
            let Some(mut i) = idle.flatten() else {
                break;
            };
            if i.send.ready().await.is_ok() {
                return Ok(i.send);
            }
        }
        match tokio::time::timeout(CONNECT, self.connect(dest)).await {
            Ok(r) => r,
            Err(_) => Err(format!("no connection within {CONNECT:?}")),
        }
    }

    /// A new connection to `dest`, its HTTP/1.1 driver spawned.
    async fn connect(&self, dest: &Target) -> Result<SendRequest<Body>, String> {
        match dest {
            Target::Unix(p) => {
                let s = tokio::net::UnixStream::connect(p)
                    .await
                    .map_err(|e| format!("connecting: {e}"))?;
                http1(s).await
            }
            Target::Tcp(a) => {
                let s = tokio::net::TcpStream::connect(a)
                    .await
                    .map_err(|e| format!("connecting: {e}"))?;
                let _ = s.set_nodelay(true);
                http1(s).await
            }
            Target::Tls(a) => {
                let tls = self.tls.clone().ok_or(
                    "it is advertised as https:// and this API has no TLS client certificate \
                     (--api-cert, --api-key, --api-client-ca)",
                )?;
                let s = tokio::net::TcpStream::connect(a)
                    .await
                    .map_err(|e| format!("connecting: {e}"))?;
                let _ = s.set_nodelay(true);
                let name = tokio_rustls::rustls::pki_types::ServerName::IpAddress(a.ip().into());
                let s = tokio_rustls::TlsConnector::from(tls)
                    .connect(name, s)
                    .await
                    .map_err(|e| format!("TLS handshake: {e}"))?;
                http1(s).await
            }
        }
    }

    fn put_back(&self, i: Idle) {
        let mut v = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        v.push(i);
    }
}

/// Starts HTTP/1.1 on a connected stream.
async fn http1<S>(s: S) -> Result<SendRequest<Body>, String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(s))
        .await
        .map_err(|e| format!("HTTP: {e}"))?;
    tokio::spawn(conn);
    Ok(send)
}

/// Marks a unit write this API committed with its machine.
pub fn committed_by(mut resp: Response, me: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(me) {
        resp.headers_mut().insert(COMMITTED_BY, v);
    }
    resp
}

/// Follows `engine/committer` into `tx`, for as long as clusterd runs.
pub async fn follow(reg: crate::registry::Registry, tx: watch::Sender<Option<Committer>>) {
    use etcd_client::{EventType, WatchOptions};
    let key = reg.keys().committer();
    let decode = |v: &[u8]| serde_json::from_slice::<Committer>(v).ok();
    loop {
        let r: Result<(), etcd_client::Error> = async {
            let mut c = reg.client();
            let resp = c.get(key.as_str(), None).await?;
            let rev = resp.header().map(|h| h.revision()).unwrap_or(0);
            tx.send_replace(resp.kvs().first().and_then(|kv| decode(kv.value())));
            let mut stream = c
                .watch(
                    key.as_str(),
                    Some(WatchOptions::new().with_start_revision(rev + 1)),
                )
                .await?;
            while let Some(r) = stream.message().await? {
                if r.canceled() {
                    break;
                }
                for e in r.events() {
                    let v = match (e.event_type(), e.kv()) {
                        (EventType::Put, Some(kv)) => decode(kv.value()),
                        _ => None,
                    };
                    tx.send_replace(v);
                }
            }
            Ok(())
        }
        .await;
        // Until the watch is back, each API commits its own writes.
        tx.send_replace(None);
        if let Err(e) = r {
            eprintln!("clusterd: committer watch: {e}; retrying");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(m: &str) -> Committer {
        Committer::new(m, "unix:///run/a.sock", Some("boot1"))
    }

    #[test]
    fn writes_go_to_the_committer_once() {
        let leader = c("m1");
        let here = Some("boot1");
        // Another machine's API forwards to the leader's.
        assert_eq!(route(Some(&leader), "m2", here, false), Some(&leader));
        // The leader commits its own; a forwarded request is never
        // forwarded again (whoever the receiver thinks leads).
        assert_eq!(route(Some(&leader), "m1", here, false), None);
        assert_eq!(route(Some(&leader), "m2", here, true), None);
        // No committer published: every API commits its own writes.
        assert_eq!(route(None, "m2", here, false), None);
    }

    #[test]
    fn a_host_local_committer_is_reached_from_its_host_only() {
        // Its unix socket, from another host, would be that host's own.
        let leader = c("m1");
        assert_eq!(route(Some(&leader), "m2", Some("boot2"), false), None);
        assert_eq!(route(Some(&leader), "m2", None, false), None);
        // A loopback address: the same.
        let tcp = Committer::new("m1", "tcp://127.0.0.1:4001", Some("boot1"));
        assert_eq!(tcp.host.as_deref(), Some("boot1"));
        assert_eq!(route(Some(&tcp), "m2", Some("boot2"), false), None);
        assert_eq!(route(Some(&tcp), "m2", Some("boot1"), false), Some(&tcp));
        // https:// reaches it from anywhere: no host is recorded.
        let tls = Committer::new("m1", "https://10.0.0.1:4001", Some("boot1"));
        assert_eq!(tls.host, None);
        assert_eq!(route(Some(&tls), "m2", Some("boot2"), false), Some(&tls));
        // A record without a host (an older clusterd's): as advertised.
        let old: Committer =
            serde_json::from_str(r#"{"machine":"m1","url":"unix:///a.sock"}"#).unwrap();
        assert_eq!(route(Some(&old), "m2", Some("boot2"), false), Some(&old));
    }

    #[test]
    fn the_default_advertise_is_the_listen_when_it_names_one_place() {
        let unix = Listen::Unix("/run/clusterd/fleet.sock".into());
        assert_eq!(
            default_advertise(&unix, false).as_deref(),
            Some("unix:///run/clusterd/fleet.sock")
        );
        let lo = Listen::Tcp("127.0.0.1:4001".parse().unwrap());
        assert_eq!(
            default_advertise(&lo, false).as_deref(),
            Some("tcp://127.0.0.1:4001")
        );
        let tls = Listen::Tcp("10.0.0.1:4001".parse().unwrap());
        assert_eq!(
            default_advertise(&tls, true).as_deref(),
            Some("https://10.0.0.1:4001")
        );
        // Every address: none of them to hand out.
        for any in ["0.0.0.0:4001", "[::]:4001"] {
            let l = Listen::Tcp(any.parse().unwrap());
            assert_eq!(default_advertise(&l, true), None, "{any}");
        }
        // Each default passes the check an explicit one gets.
        for (l, tls) in [(&unix, false), (&lo, false), (&tls, true)] {
            let a = default_advertise(l, tls).unwrap();
            assert!(check_advertise(&a, tls).is_ok(), "{a}");
        }
    }

    #[test]
    fn advertised_addresses() {
        assert_eq!(
            parse_target("unix:///run/a.sock"),
            Ok(Target::Unix("/run/a.sock".into()))
        );
        assert_eq!(
            parse_target("tcp://127.0.0.1:4001"),
            Ok(Target::Tcp("127.0.0.1:4001".parse().unwrap()))
        );
        // TLS on any address, loopback included; IPv6 in brackets.
        for (s, a) in [
            ("https://10.1.2.3:4001", "10.1.2.3:4001"),
            ("https://10.1.2.3:4001/", "10.1.2.3:4001"),
            ("https://127.0.0.1:9", "127.0.0.1:9"),
            ("https://[fd00::1]:4001", "[fd00::1]:4001"),
        ] {
            assert_eq!(parse_target(s), Ok(Target::Tls(a.parse().unwrap())), "{s}");
        }
        let err = |s: &str| parse_target(s).err().unwrap_or_default();
        // Plain HTTP off loopback: the error says what to do instead.
        assert_eq!(
            err("tcp://10.1.2.3:4001"),
            "--api-advertise tcp://10.1.2.3:4001: forwarded writes would travel in plain HTTP \
             off loopback; advertise https://HOST:PORT (with --api-cert, --api-key and \
             --api-client-ca)"
        );
        // A name: the certificate is checked for an IP address.
        assert!(err("https://api.example:4001").contains("expected https://IP:PORT"));
        assert!(err("https://10.1.2.3").contains("expected https://IP:PORT"));
        assert!(err("http://10.1.2.3:1").contains("names unix:///PATH"));
        assert!(err("unix://rel.sock").contains("absolute path"));
    }

    #[test]
    fn advertise_matches_the_api_tls() {
        assert!(check_advertise("https://10.0.0.1:1", true).is_ok());
        assert!(check_advertise("unix:///a.sock", false).is_ok());
        assert!(check_advertise("tcp://127.0.0.1:1", false).is_ok());
        let e = check_advertise("https://10.0.0.1:1", false).unwrap_err();
        assert!(e.contains("needs --api-cert, --api-key and"), "{e}");
        for s in ["unix:///a.sock", "tcp://127.0.0.1:1"] {
            let e = check_advertise(s, true).unwrap_err();
            assert!(e.contains("advertise it as https://IP:PORT"), "{e}");
        }
    }

    #[tokio::test]
    async fn not_sent_writes_are_committed_here_with_the_reason_logged() {
        let (tx, rx) = watch::channel(None);
        let f = Forwarder::new("m2".into(), rx, None);
        let h = HeaderMap::new();
        let put = || f.unit_write(Method::PUT, "a.service", &h, Bytes::new());
        // No committer: here.
        assert!(matches!(put().await, Forwarded::Local));
        // An https:// committer, and no TLS client here.
        let https = Committer::new("m1", "https://127.0.0.1:9", None);
        tx.send_replace(Some(https));
        assert!(matches!(put().await, Forwarded::Local));
        let why = f.failing.lock().unwrap().clone().unwrap();
        assert!(why.contains("no TLS client certificate"), "{why}");
        // Nobody listening: refused, here.
        let dir = tempfile::tempdir().unwrap();
        let url = format!("unix://{}", dir.path().join("none.sock").display());
        tx.send_replace(Some(Committer::new(
            "m1",
            &url,
            crate::host::boot_id().as_deref(),
        )));
        assert!(matches!(put().await, Forwarded::Local));
        let why = f.failing.lock().unwrap().clone().unwrap();
        assert!(why.contains("connecting: "), "{why}");
    }

    #[test]
    fn the_tls_client_needs_readable_files() {
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("junk.pem");
        std::fs::write(&junk, "not a certificate\n").unwrap();
        let t = ApiTls {
            cert: junk.clone(),
            key: junk.clone(),
            client_ca: junk,
        };
        let e = format!("{:#}", tls_client_config(&t).err().unwrap());
        assert!(e.starts_with("--api-cert "), "{e}");
        let t = ApiTls {
            cert: dir.path().join("missing.pem"),
            ..t
        };
        let e = format!("{:#}", tls_client_config(&t).err().unwrap());
        assert!(e.contains("missing.pem"), "{e}");
    }

    #[test]
    fn paths_and_values() {
        assert_eq!(unit_path("a@b.service"), "/fleet/v1/units/a@b.service");
        assert_eq!(
            unit_path("x\\x2dy.service"),
            "/fleet/v1/units/x%5Cx2dy.service"
        );
        assert_eq!(unit_path("a b"), "/fleet/v1/units/a%20b");
        let v = serde_json::to_string(&c("m1")).unwrap();
        assert_eq!(
            v,
            r#"{"machine":"m1","url":"unix:///run/a.sock","host":"boot1"}"#
        );
        assert_eq!(serde_json::from_str::<Committer>(&v).unwrap(), c("m1"));
    }
}
