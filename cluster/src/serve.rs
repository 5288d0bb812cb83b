//! Serving the API: where it listens (a unix socket, or TCP: plain HTTP on
//! loopback only, TLS with client certificates anywhere), and how each
//! connection is held to account.
//!
//! Connections are served by hyper directly (HTTP/1.1), each in its own
//! task, with these limits, so that no client can hold the API up:
//!
//! - a request's headers must arrive within [`HEADER_TIMEOUT`], or the
//!   connection is closed (a client that trickles them, or sends none);
//! - a request must be read and answered within [`REQUEST_TIMEOUT`]
//!   (a body that trickles in gets `408` and the JSON error entity);
//! - a body over [`MAX_BODY`] bytes gets `413` and the JSON error entity
//!   as soon as its `Content-Length` says so, before any of it is read
//!   (and when it is sent in chunks, as soon as it passes the limit);
//! - a TLS handshake must finish within [`HEADER_TIMEOUT`] too.
//!
//! On a plain-HTTP TCP listen (loopback), a request whose `Host` is a name
//! other than `localhost` is refused with `403`: a web page from elsewhere
//! whose name resolves to 127.0.0.1 (DNS rebinding) cannot drive the API
//! from a browser on this machine.

use crate::api::Api;
use crate::listen::{pem_identity, pem_roots, ApiTls, Listen, MAX_BODY};
use crate::respond::error_response;
use crate::validate::ApiError;
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::rustls::ServerConfig;

/// How long a client may take to send a request's headers (and a TLS
/// handshake).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long reading a request's body and answering it may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// Builds the API's TLS configuration: TLS 1.2 and 1.3 (rustls with
/// *ring*), HTTP/1.1, and a client certificate that chains to the client CA
/// required of every connection.
pub fn tls_server_config(t: &ApiTls) -> anyhow::Result<std::sync::Arc<ServerConfig>> {
    use anyhow::Context;
    use tokio_rustls::rustls::server::WebPkiClientVerifier;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let (certs, key) = pem_identity(t)?;
    let roots = pem_roots("--api-client-ca", &t.client_ca)?;
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

/// Connections that completed their TLS handshake. Handshakes run in
/// their own tasks (at most [`HEADER_TIMEOUT`] each), so a slow or hostile
/// client never holds up the others.
fn tls_accept(
    tcp: tokio::net::TcpListener,
    cfg: Arc<ServerConfig>,
) -> tokio::sync::mpsc::Receiver<tokio_rustls::server::TlsStream<tokio::net::TcpStream>> {
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    let acceptor = tokio_rustls::TlsAcceptor::from(cfg);
    tokio::spawn(async move {
        loop {
            let (sock, peer) = match tcp.accept().await {
                Ok(x) => x,
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            };
            if tx.is_closed() {
                return;
            }
            let acceptor = acceptor.clone();
            let tx = tx.clone();
            tokio::spawn(async move {
                match tokio::time::timeout(HEADER_TIMEOUT, acceptor.accept(sock)).await {
                    Ok(Ok(tls)) => {
                        let _ = tx.send(tls).await;
                    }
                    Ok(Err(e)) => eprintln!("clusterd: API: TLS handshake with {peer}: {e}"),
                    Err(_) => eprintln!("clusterd: API: TLS handshake with {peer} timed out"),
                }
            });
        }
    });
    rx
}

/// Refuses an over-limit body up front, bounds the time to read and
/// answer a request, and (plain HTTP on TCP) checks the `Host` header.
pub async fn guard(State(api): State<Arc<Api>>, req: Request, next: Next) -> Response {
    if api.is_refused() {
        // fleetd's words while it could not register (its client prints them).
        return error_response(&ApiError::new(
            503,
            "fleet server unable to communicate with etcd: this machine's ID is in use by another running clusterd",
        ));
    }
    if api.check_host {
        let host = req
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        if !host_allowed(host) {
            return error_response(&ApiError::new(
                403,
                format!(
                    "Host {host:?} is not allowed: on a plain-HTTP listen, use an IP address or localhost"
                ),
            ));
        }
    }
    let length = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if length.is_some_and(|n| n > MAX_BODY as u64) {
        return error_response(&ApiError::new(
            413,
            format!("request body too large: the limit is {MAX_BODY} bytes"),
        ));
    }
    match tokio::time::timeout(REQUEST_TIMEOUT, next.run(req)).await {
        Ok(r) => r,
        Err(_) => error_response(&ApiError::new(
            408,
            format!("the request was not received and answered within {REQUEST_TIMEOUT:?}"),
        )),
    }
}

/// Whether a `Host` header names this machine's loopback: an IP address or
/// `localhost`, with or without a port (or no header: HTTP/1.0).
pub fn host_allowed(host: &str) -> bool {
    let h = host.trim();
    if h.is_empty() {
        return true;
    }
    let name = if let Some(rest) = h.strip_prefix('[') {
        // [::1]:port
        return rest
            .split_once(']')
            .is_some_and(|(ip, _)| ip.parse::<std::net::Ipv6Addr>().is_ok());
    } else {
        h.rsplit_once(':').map_or(h, |(n, port)| {
            if port.bytes().all(|b| b.is_ascii_digit()) {
                n
            } else {
                h
            }
        })
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok()
}

/// Serves one connection (HTTP/1.1) until it ends or times out.
fn serve_connection<IO>(io: IO, app: Router)
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let svc = TowerToHyperService::new(app);
        let mut b = hyper::server::conn::http1::Builder::new();
        b.timer(TokioTimer::new())
            .header_read_timeout(HEADER_TIMEOUT)
            .keep_alive(true);
        // Errors are the client's (gone, timed out, not HTTP): nothing to do.
        let _ = b.serve_connection(TokioIo::new(io), svc).await;
    });
}

/// Serves the API until the task is dropped: on a unix socket, on TCP in
/// plain HTTP, or on TCP with TLS when `tls` is given.
pub async fn serve(listen: &Listen, tls: Option<&ApiTls>, app: Router) -> anyhow::Result<()> {
    use anyhow::Context;
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
            loop {
                match l.accept().await {
                    Ok((s, _)) => serve_connection(s, app.clone()),
                    Err(e) => accept_failed(e).await,
                }
            }
        }
        Listen::Tcp(addr) => {
            let l = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("binding {addr}"))?;
            match tls {
                None => loop {
                    match l.accept().await {
                        Ok((s, _)) => {
                            let _ = s.set_nodelay(true);
                            serve_connection(s, app.clone())
                        }
                        Err(e) => accept_failed(e).await,
                    }
                },
                Some(t) => {
                    let mut conns = tls_accept(l, tls_server_config(t)?);
                    while let Some(s) = conns.recv().await {
                        serve_connection(s, app.clone());
                    }
                    Ok(())
                }
            }
        }
    }
}

/// An accept error (out of descriptors, say): wait a little, go on.
async fn accept_failed(e: std::io::Error) {
    eprintln!("clusterd: API: accept: {e}");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        for ok in [
            "",
            "127.0.0.1",
            "127.0.0.1:8080",
            "localhost:1",
            "LOCALHOST",
            "[::1]:9",
            "10.0.0.1",
        ] {
            assert!(host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:80",
            "127.0.0.1.evil.example",
            "[nope]:1",
            "domain-sock",
        ] {
            assert!(!host_allowed(bad), "{bad}");
        }
    }
}
