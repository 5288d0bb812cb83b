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

use crate::respond::error_response;
use crate::serve::Listen;
use crate::validate::ApiError;
use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, HeaderValue, Method, Request};
use axum::response::Response;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// The header that marks a request one API forwarded to the committer.
pub const FORWARDED: &str = "x-flotilla-forwarded";

/// The header naming the machine whose API committed a unit write.
pub const COMMITTED_BY: &str = "x-flotilla-committed-by";

/// How long an idle connection to the committer is kept for the next
/// write: well under the API's 10 s header timeout, after which the
/// committer closes it.
const IDLE: Duration = Duration::from_secs(4);

/// The value of `engine/committer`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Committer {
    /// The leader's machine ID.
    pub machine: String,
    /// Its API as `--api-advertise` gave it.
    pub url: String,
}

/// Where an API sends a unit write: `None` to commit it itself.
pub fn route<'a>(
    committer: Option<&'a Committer>,
    me: &str,
    forwarded: bool,
) -> Option<&'a Committer> {
    committer.filter(|c| !forwarded && c.machine != me)
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
    committer: watch::Receiver<Option<Committer>>,
    idle: Mutex<Vec<Idle>>,
}

/// How forwarding a write ended.
pub enum Forwarded {
    /// The committer's answer (or a 503 when it failed mid-request).
    Answer(Response),
    /// Nothing was sent: commit the write here.
    Local,
}

impl Forwarder {
    /// A forwarder for machine `me` following `committer`.
    pub fn new(me: String, committer: watch::Receiver<Option<Committer>>) -> Forwarder {
        Forwarder {
            me,
            committer,
            idle: Mutex::new(Vec::new()),
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
            match route(c.as_ref(), &self.me, headers.contains_key(FORWARDED)) {
                Some(c) => c.clone(),
                None => return Forwarded::Local,
            }
        };
        let Ok(listen) = crate::serve::parse_listen(&target.url, false) else {
            return Forwarded::Local;
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
            let Some(mut send) = self.connection(&target.url, &listen, pooled).await else {
                return Forwarded::Local;
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
        let (parts, body) = resp.into_parts();
        // The answers are small (an empty body or an error entity): read
        // whole, so that the connection is free for the next write.
        let body = match axum::body::to_bytes(Body::new(body), crate::serve::MAX_BODY).await {
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

    /// An idle connection to `url` (when `pooled`), or a new one; `None`
    /// when it cannot be reached.
    async fn connection(
        &self,
        url: &str,
        listen: &Listen,
        pooled: bool,
    ) -> Option<SendRequest<Body>> {
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
                return Some(i.send);
            }
        }
        let send = match listen {
            Listen::Unix(p) => {
                let s = tokio::net::UnixStream::connect(p).await.ok()?;
                let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(s))
                    .await
                    .ok()?;
                tokio::spawn(conn);
                send
            }
            Listen::Tcp(a) => {
                let s = tokio::net::TcpStream::connect(a).await.ok()?;
                let _ = s.set_nodelay(true);
                let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(s))
                    .await
                    .ok()?;
                tokio::spawn(conn);
                send
            }
        };
        Some(send)
    }

    fn put_back(&self, i: Idle) {
        let mut v = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        v.push(i);
    }
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
        Committer {
            machine: m.into(),
            url: "unix:///run/a.sock".into(),
        }
    }

    #[test]
    fn writes_go_to_the_committer_once() {
        let leader = c("m1");
        // Another machine's API forwards to the leader's.
        assert_eq!(route(Some(&leader), "m2", false), Some(&leader));
        // The leader commits its own; a forwarded request is never
        // forwarded again (whoever the receiver thinks leads).
        assert_eq!(route(Some(&leader), "m1", false), None);
        assert_eq!(route(Some(&leader), "m2", true), None);
        // No committer published: every API commits its own writes.
        assert_eq!(route(None, "m2", false), None);
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
        assert_eq!(v, r#"{"machine":"m1","url":"unix:///run/a.sock"}"#);
        assert_eq!(serde_json::from_str::<Committer>(&v).unwrap(), c("m1"));
    }
}
