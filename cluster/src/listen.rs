//! What the API listens on, as settings: where ([`Listen`]: a unix socket,
//! or TCP, plain HTTP on loopback only), with which TLS files ([`ApiTls`],
//! and their PEM contents), and the largest request body ([`MAX_BODY`]).
//! The server (`serve.rs`), the client that forwards unit writes to the
//! committer (`forward.rs`) and the flags (`config.rs`) all read them from
//! here; this module uses none of them.

/// The largest request body accepted (a unit file is far smaller:
/// [`crate::validate::MAX_UNIT_BYTES`]).
pub const MAX_BODY: usize = 1024 * 1024;

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

/// The API's certificate chain and key (`--api-cert`, `--api-key`): its
/// server identity, and its client identity when it forwards writes
/// (`forward.rs`).
pub fn pem_identity(
    t: &ApiTls,
) -> anyhow::Result<(
    Vec<tokio_rustls::rustls::pki_types::CertificateDer<'static>>,
    tokio_rustls::rustls::pki_types::PrivateKeyDer<'static>,
)> {
    use anyhow::Context;
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
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
    Ok((certs, key))
}

/// The CA certificates of the PEM file `path` (given as `flag`).
pub fn pem_roots(
    flag: &str,
    path: &std::path::Path,
) -> anyhow::Result<tokio_rustls::rustls::RootCertStore> {
    use anyhow::Context;
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::CertificateDer;
    let mut roots = tokio_rustls::rustls::RootCertStore::empty();
    for c in
        CertificateDer::pem_file_iter(path).with_context(|| format!("{flag} {}", path.display()))?
    {
        let c = c.with_context(|| format!("{flag} {}", path.display()))?;
        roots
            .add(c)
            .with_context(|| format!("{flag} {}", path.display()))?;
    }
    anyhow::ensure!(
        !roots.is_empty(),
        "{flag} {}: no certificate in it",
        path.display()
    );
    Ok(roots)
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
    }
}
