//! A minimal HTTP/1.1 client of the fleet API over a unix socket (or any
//! stream its caller connects: the benchmark's TLS), keeping its
//! connection as a deploy tool would: for the tests that send
//! thousands of requests (curl per request would cost a process each) and
//! for the benchmark (`cluster/examples/bench_launch.rs` includes this
//! file). Only `std`, `serde_json` and `flotilla_units`.
#![allow(dead_code)]

use flotilla_units::fleet_api::{StatePage, UnitPage};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// A connection's byte stream.
pub trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

/// Opens a new connection.
pub type Connect = Box<dyn Fn() -> std::io::Result<Box<dyn Stream>> + Send>;

/// One kept connection to the API.
pub struct Conn {
    connect: Connect,
    r: Option<BufReader<Box<dyn Stream>>>,
    /// The `Host` header sent (a plain-HTTP TCP listen takes an IP
    /// address or `localhost` only).
    host: String,
    /// The machine that committed the last unit write answered on this
    /// connection (its `X-Flotilla-Committed-By` header), if it said.
    pub committed_by: Option<String>,
}

impl Conn {
    /// A connection to the API's socket (opened on first use).
    pub fn new(path: &Path) -> Conn {
        let path = path.to_path_buf();
        Conn::with(Box::new(move || {
            Ok(Box::new(UnixStream::connect(&path)?) as Box<dyn Stream>)
        }))
    }

    /// A connection opened by `connect` (on first use, and again when
    /// the server closed it).
    pub fn with(connect: Connect) -> Conn {
        Conn {
            connect,
            r: None,
            host: "domain-sock".into(),
            committed_by: None,
        }
    }

    /// Sends `host` as the `Host` header.
    pub fn with_host(mut self, host: &str) -> Conn {
        self.host = host.into();
        self
    }

    /// Closes the connection: the next request opens a new one.
    pub fn close(&mut self) {
        self.r = None;
    }

    /// Sends a request; returns the status and the body.
    pub fn request(&mut self, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
        for _ in 0..2 {
            if let Some(r) = self.try_request(method, path, body) {
                return r;
            }
            self.r = None; // closed by the server: once more on a new one
        }
        (0, String::new())
    }

    fn try_request(
        &mut self,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> Option<(u16, String)> {
        if self.r.is_none() {
            self.r = Some(BufReader::new((self.connect)().ok()?));
        }
        let r = self.r.as_mut()?;
        let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\n", self.host);
        match body {
            Some(b) => req.push_str(&format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{b}",
                b.len()
            )),
            None => req.push_str("\r\n"),
        }
        r.get_mut().write_all(req.as_bytes()).ok()?;
        r.get_mut().flush().ok()?;
        let mut status_line = String::new();
        if r.read_line(&mut status_line).ok()? == 0 {
            return None;
        }
        let code: u16 = status_line.split_whitespace().nth(1)?.parse().ok()?;
        let mut len = 0usize;
        let mut chunked = false;
        let mut close = false;
        self.committed_by = None;
        loop {
            let mut h = String::new();
            r.read_line(&mut h).ok()?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            let (k, v) = h.split_once(':')?;
            match k.trim().to_ascii_lowercase().as_str() {
                "content-length" => len = v.trim().parse().ok()?,
                "transfer-encoding" => chunked = v.to_ascii_lowercase().contains("chunked"),
                "connection" => close = v.to_ascii_lowercase().contains("close"),
                "x-flotilla-committed-by" => self.committed_by = Some(v.trim().to_string()),
                _ => {}
            }
        }
        let mut out = Vec::new();
        if chunked {
            loop {
                let mut size = String::new();
                r.read_line(&mut size).ok()?;
                let n = usize::from_str_radix(size.trim(), 16).ok()?;
                let mut chunk = vec![0; n + 2];
                r.read_exact(&mut chunk).ok()?;
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&chunk[..n]);
            }
        } else {
            out.resize(len, 0);
            r.read_exact(&mut out).ok()?;
        }
        if close {
            self.r = None;
        }
        Some((code, String::from_utf8_lossy(&out).into_owned()))
    }
}

/// A page of a listing: its items and the token of the next one.
pub trait Page: serde::de::DeserializeOwned {
    /// What it lists.
    type Item;
    /// The items and the next page's token.
    fn split(self) -> (Vec<Self::Item>, Option<String>);
}

impl Page for UnitPage {
    type Item = flotilla_units::fleet_api::ApiUnit;
    fn split(self) -> (Vec<Self::Item>, Option<String>) {
        (self.units, self.next_page_token)
    }
}

impl Page for StatePage {
    type Item = flotilla_units::fleet_api::ApiUnitState;
    fn split(self) -> (Vec<Self::Item>, Option<String>) {
        (self.states, self.next_page_token)
    }
}

/// Every item of the listing at `path` over all its pages: (items, pages).
pub fn all_pages<P: Page>(c: &mut Conn, path: &str) -> (Vec<P::Item>, usize) {
    let mut out = Vec::new();
    let mut next = path.to_string();
    let mut pages = 0;
    loop {
        let (code, b) = c.request("GET", &next, None);
        assert_eq!(code, 200, "GET {next}: {b}");
        pages += 1;
        let (items, token) = serde_json::from_str::<P>(&b).expect("a page").split();
        out.extend(items);
        match token {
            Some(t) => next = format!("{path}?nextPageToken={t}"),
            None => return (out, pages),
        }
    }
}

/// Every unit over all pages: (units, pages).
pub fn all_units(c: &mut Conn) -> (Vec<flotilla_units::fleet_api::ApiUnit>, usize) {
    all_pages::<UnitPage>(c, "/fleet/v1/units")
}

/// Every unit state over all pages: (states, pages).
pub fn all_states(c: &mut Conn) -> (Vec<flotilla_units::fleet_api::ApiUnitState>, usize) {
    all_pages::<StatePage>(c, "/fleet/v1/state")
}
