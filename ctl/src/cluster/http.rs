//! A small blocking HTTP/1.1 client for the fleet API: `unix:///path`
//! (Host `domain-sock`, as fleetctl) and `http://host:port[/base]`
//! endpoints, one connection per request, `Connection: close`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// Why `initctl cluster` fails: the exit code and the message (printed with
/// the `initctl cluster: ` prefix; empty when already said).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The exit code: [`super::EXIT_FAILED`] or [`super::EXIT_USAGE`].
    pub code: i32,
    /// For people.
    pub message: String,
}

impl Failure {
    /// The request failed (exit 1).
    pub fn failed(message: impl Into<String>) -> Failure {
        Failure {
            code: super::EXIT_FAILED,
            message: message.into(),
        }
    }

    /// The API cannot be reached (exit 2, as `initctl` when its init
    /// cannot be reached).
    pub fn unreachable(message: impl Into<String>) -> Failure {
        Failure {
            code: super::EXIT_USAGE,
            message: message.into(),
        }
    }
}

/// Where the API is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A unix socket path.
    Unix(String),
    /// `host:port` and a base path ending in `/`.
    Tcp(String, String),
}

/// Parses `unix:///path` or `http://host:port[/base]`.
pub fn parse_endpoint(s: &str) -> Result<Endpoint, String> {
    if let Some(p) = s.strip_prefix("unix://") {
        if p.is_empty() {
            return Err(format!("endpoint {s}: empty socket path"));
        }
        return Ok(Endpoint::Unix(p.to_string()));
    }
    if let Some(rest) = s.strip_prefix("http://") {
        let (host, base) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if host.is_empty() {
            return Err(format!("endpoint {s}: no host"));
        }
        let mut base = base.to_string();
        if !base.ends_with('/') {
            base.push('/');
        }
        let host = if host.contains(':') {
            host.to_string()
        } else {
            format!("{host}:80")
        };
        return Ok(Endpoint::Tcp(host, base));
    }
    if s.starts_with("https://") {
        return Err(format!(
            "endpoint {s}: https is not supported by initctl; use unix:// or http:// on loopback"
        ));
    }
    Err(format!(
        "endpoint {s}: expected unix:///PATH or http://HOST:PORT"
    ))
}

/// How long an answer may take.
const ANSWER_WITHIN: Option<Duration> = Some(Duration::from_secs(30));

/// A response.
#[derive(Debug)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Body.
    pub body: Vec<u8>,
}

fn decode_chunked(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(i) = b.windows(2).position(|w| w == b"\r\n") {
        let size_s = String::from_utf8_lossy(&b[..i]);
        let Ok(size) = usize::from_str_radix(size_s.split(';').next().unwrap_or("").trim(), 16)
        else {
            break;
        };
        if size == 0 || b.len() < i + 2 + size {
            break;
        }
        out.extend_from_slice(&b[i + 2..i + 2 + size]);
        b = &b[(i + 4 + size).min(b.len())..];
    }
    out
}

fn exchange<S: Read + Write>(mut s: S, req: &[u8]) -> Result<Response, String> {
    s.write_all(req)
        .map_err(|e| format!("sending the request: {e}"))?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)
        .map_err(|e| format!("reading the response: {e}"))?;
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("malformed HTTP response")?;
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut body = raw[split + 4..].to_vec();
    let status = head
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or("malformed HTTP status line")?;
    if head.lines().any(|l| {
        l.to_ascii_lowercase().starts_with("transfer-encoding:")
            && l.to_ascii_lowercase().contains("chunked")
    }) {
        body = decode_chunked(&body);
    }
    Ok(Response { status, body })
}

/// Sends `method path` (path relative to `fleet/v1/`, query included) with
/// an optional JSON body.
pub fn request(
    ep: &Endpoint,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> Result<Response, Failure> {
    let sep = if path.contains('?') { '&' } else { '?' };
    let full = format!("fleet/v1/{path}{sep}alt=json");
    let req = request_text(ep, method, &full, body);
    exchange(connect(ep, ANSWER_WITHIN)?, req.as_bytes()).map_err(Failure::failed)
}

/// The request's text, for `path` relative to the endpoint's base.
fn request_text(ep: &Endpoint, method: &str, path: &str, body: Option<&str>) -> String {
    let (host, base) = match ep {
        Endpoint::Unix(_) => ("domain-sock".to_string(), "/".to_string()),
        Endpoint::Tcp(h, b) => (h.clone(), b.clone()),
    };
    let mut req = format!("{method} {base}{path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: initctl-cluster\r\nAccept: application/json\r\nConnection: close\r\n");
    if let Some(b) = body {
        req.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{b}",
            b.len()
        ));
    } else {
        req.push_str("\r\n");
    }
    req
}

/// A connection to the API, with a read timeout (none: wait as long as it
/// takes).
fn connect(ep: &Endpoint, t: Option<Duration>) -> Result<Box<dyn ReadWrite>, Failure> {
    match ep {
        Endpoint::Unix(p) => {
            let s = UnixStream::connect(p).map_err(|e| {
                Failure::unreachable(format!("cannot reach the fleet API at unix://{p}: {e}"))
            })?;
            let _ = s.set_read_timeout(t);
            Ok(Box::new(s))
        }
        Endpoint::Tcp(h, _) => {
            let s = TcpStream::connect(h).map_err(|e| {
                Failure::unreachable(format!("cannot reach the fleet API at http://{h}: {e}"))
            })?;
            let _ = s.set_read_timeout(t);
            Ok(Box::new(s))
        }
    }
}

/// A socket of either kind.
pub trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

/// `GET path` (relative to the endpoint's base, outside `fleet/v1/`).
pub fn get(ep: &Endpoint, path: &str) -> Result<Response, Failure> {
    let req = request_text(ep, "GET", path, None);
    exchange(connect(ep, ANSWER_WITHIN)?, req.as_bytes()).map_err(Failure::failed)
}

/// A body's lines as they come.
pub type Lines = Box<dyn Iterator<Item = std::io::Result<String>>>;

/// `GET path` whose body goes on while the server has more to say (a
/// followed log): the status, and the body's lines as they come.
pub fn get_lines(ep: &Endpoint, path: &str) -> Result<(u16, Lines), Failure> {
    let req = request_text(ep, "GET", path, None);
    // Lines come when the unit writes them: no read timeout.
    let mut s = connect(ep, None)?;
    s.write_all(req.as_bytes())
        .map_err(|e| Failure::failed(format!("sending the request: {e}")))?;
    let mut r = BufReader::new(s);
    let mut status = 0;
    let mut chunked = false;
    loop {
        let mut l = String::new();
        let n = r
            .read_line(&mut l)
            .map_err(|e| Failure::failed(format!("reading the response: {e}")))?;
        if n == 0 {
            return Err(Failure::failed("malformed HTTP response"));
        }
        let l = l.trim_end();
        if l.is_empty() {
            break;
        }
        let lower = l.to_ascii_lowercase();
        if status == 0 {
            status = l
                .split_whitespace()
                .nth(1)
                .and_then(|c| c.parse().ok())
                .ok_or_else(|| Failure::failed("malformed HTTP status line"))?;
        } else if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
    }
    let body: Box<dyn BufRead> = if chunked {
        Box::new(BufReader::new(Chunked { r, left: 0 }))
    } else {
        Box::new(r)
    };
    Ok((status, Box::new(body.lines())))
}

/// A chunked body, read as it comes.
struct Chunked<R: BufRead> {
    r: R,
    /// Bytes left of the current chunk.
    left: usize,
}

impl<R: BufRead> Read for Chunked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            let mut size = String::new();
            self.r.read_line(&mut size)?;
            if size.trim().is_empty() {
                // The end of the previous chunk's data.
                size.clear();
                self.r.read_line(&mut size)?;
            }
            let n = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16)
                .map_err(|_| std::io::Error::other("malformed chunk size"))?;
            if n == 0 {
                return Ok(0);
            }
            self.left = n;
        }
        let want = buf.len().min(self.left);
        let got = self.r.read(&mut buf[..want])?;
        if got == 0 {
            return Ok(0);
        }
        self.left -= got;
        Ok(got)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        assert_eq!(
            parse_endpoint("unix:///run/x.sock"),
            Ok(Endpoint::Unix("/run/x.sock".into()))
        );
        assert_eq!(
            parse_endpoint("http://127.0.0.1:8080"),
            Ok(Endpoint::Tcp("127.0.0.1:8080".into(), "/".into()))
        );
        assert_eq!(
            parse_endpoint("http://h:1/api"),
            Ok(Endpoint::Tcp("h:1".into(), "/api/".into()))
        );
        assert!(parse_endpoint("127.0.0.1:8080").is_err());
        assert_eq!(
            decode_chunked(b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"),
            b"abcde"
        );
        let mut out = String::new();
        Chunked {
            r: &b"4\r\nab\nc\r\n3\r\nd\nx\r\n0\r\n\r\n"[..],
            left: 0,
        }
        .read_to_string(&mut out)
        .unwrap();
        assert_eq!(out, "ab\ncd\nx");
    }
}
