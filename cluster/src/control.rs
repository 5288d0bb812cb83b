//! A client of the local init's control socket (newline-delimited JSON,
//! `flotilla_units::protocol`): one request per connection, a connection
//! kept for many requests, and a long-lived `subscribe` stream.

use flotilla_units::protocol::{Envelope, Reply, Request};
use std::path::{Path, PathBuf};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

/// The init's control socket as `initctl` resolves it: `$INIT_CONTROL`,
/// else `/run/init/control.sock` for root, else
/// `$XDG_RUNTIME_DIR/init/control.sock`.
pub fn default_control_path() -> PathBuf {
    if let Some(p) = std::env::var_os("INIT_CONTROL").filter(|p| !p.is_empty()) {
        return p.into();
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(d) if !root && !d.is_empty() => PathBuf::from(d).join("init/control.sock"),
        _ => PathBuf::from("/run/init/control.sock"),
    }
}

/// Sends one request and reads its final reply.
pub async fn request(path: &Path, req: Request) -> std::io::Result<Reply> {
    Ok(request_all(path, req).await?.pop().unwrap_or(Reply::LogEnd))
}

/// Sends one request and reads every reply up to the final one (the lines
/// of `logs`, then `log-end`).
pub async fn request_all(path: &Path, req: Request) -> std::io::Result<Vec<Reply>> {
    Connection::open(path).await?.request_all(req).await
}

/// A connection kept for many requests, one after the other (the agent's:
/// one connection, not one per change).
#[derive(Debug)]
pub struct Connection {
    lines: tokio::io::Lines<BufReader<tokio::net::unix::OwnedReadHalf>>,
    w: tokio::net::unix::OwnedWriteHalf,
}

impl Connection {
    /// Connects to the init.
    pub async fn open(path: &Path) -> std::io::Result<Connection> {
        let (r, w) = UnixStream::connect(path).await?.into_split();
        Ok(Connection {
            lines: BufReader::new(r).lines(),
            w,
        })
    }

    /// Sends one request and reads every reply up to the final one.
    pub async fn request_all(&mut self, req: Request) -> std::io::Result<Vec<Reply>> {
        let mut line = serde_json::to_string(&Envelope::new(req)).map_err(std::io::Error::other)?;
        line.push('\n');
        self.w.write_all(line.as_bytes()).await?;
        let mut out = Vec::new();
        loop {
            let Some(l) = self.lines.next_line().await? else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "init closed the connection",
                ));
            };
            let reply: Reply = serde_json::from_str(&l).map_err(std::io::Error::other)?;
            let last = reply.is_final();
            out.push(reply);
            if last {
                return Ok(out);
            }
        }
    }

    /// Sends one request and reads its final reply.
    pub async fn request(&mut self, req: Request) -> std::io::Result<Reply> {
        Ok(self.request_all(req).await?.pop().unwrap_or(Reply::LogEnd))
    }
}

/// A `subscribe` stream: call [`Subscription::next`] for each change.
pub struct Subscription {
    lines: tokio::io::Lines<BufReader<tokio::net::unix::OwnedReadHalf>>,
    // Kept open for the life of the stream: the init may treat a closed
    // write side as the end of the connection.
    _w: tokio::net::unix::OwnedWriteHalf,
}

impl Subscription {
    /// The next reply; `None` when the init closed the stream.
    pub async fn next(&mut self) -> std::io::Result<Option<Reply>> {
        loop {
            let Some(l) = self.lines.next_line().await? else {
                return Ok(None);
            };
            if l.trim().is_empty() {
                continue;
            }
            return serde_json::from_str(&l)
                .map(Some)
                .map_err(std::io::Error::other);
        }
    }
}

/// Opens a `subscribe` stream.
pub async fn subscribe(path: &Path) -> std::io::Result<Subscription> {
    let stream = UnixStream::connect(path).await?;
    let (r, mut w) = stream.into_split();
    let mut line =
        serde_json::to_string(&Envelope::new(Request::Subscribe)).map_err(std::io::Error::other)?;
    line.push('\n');
    w.write_all(line.as_bytes()).await?;
    Ok(Subscription {
        lines: BufReader::new(r).lines(),
        _w: w,
    })
}
