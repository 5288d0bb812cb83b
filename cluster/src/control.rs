//! The local init's control socket, through the shared client
//! (`flotilla_client`): one connection per request, a connection kept for
//! many requests (the agent's: one connection, not one per change), and a
//! long-lived `subscribe` stream.

pub use flotilla_client::tokio::{request, subscribe, Subscription};
use flotilla_client::{parse_reply, request_line, Error};
use flotilla_units::protocol::{Reply, Request, SYSTEM_CONTROL_SOCKET};
use std::path::{Path, PathBuf};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;

/// The init's control socket as `initctl` resolves it (SPEC §2); the system
/// socket when no rule applies (a non-root `clusterd` without
/// `$XDG_RUNTIME_DIR`: under the init, `$INIT_CONTROL` is always set).
pub fn default_control_path() -> PathBuf {
    flotilla_client::control_path(None).unwrap_or_else(|| PathBuf::from(SYSTEM_CONTROL_SOCKET))
}

/// Sends one request on a new connection and reads every reply up to the
/// final one (the lines of `logs`, then `log-end`).
pub async fn request_all(path: &Path, req: Request) -> Result<Vec<Reply>, Error> {
    Connection::open(path).await?.request_all(req).await
}

/// A connection kept for many requests, one after the other.
#[derive(Debug)]
pub struct Connection {
    path: PathBuf,
    lines: Lines<BufReader<OwnedReadHalf>>,
    w: OwnedWriteHalf,
}

impl Connection {
    /// Connects to the init.
    pub async fn open(path: &Path) -> Result<Connection, Error> {
        let stream = UnixStream::connect(path)
            .await
            .map_err(|source| Error::Unreachable {
                path: path.to_path_buf(),
                source,
            })?;
        let (r, w) = stream.into_split();
        Ok(Connection {
            path: path.to_path_buf(),
            lines: BufReader::new(r).lines(),
            w,
        })
    }

    /// Sends one request and reads every reply up to the final one.
    pub async fn request_all(&mut self, req: Request) -> Result<Vec<Reply>, Error> {
        let path = || self.path.clone();
        self.w
            .write_all(&request_line(req))
            .await
            .map_err(|source| Error::Send {
                path: path(),
                source,
            })?;
        let mut out = Vec::new();
        loop {
            let line = self
                .lines
                .next_line()
                .await
                .map_err(|source| Error::Receive {
                    path: self.path.clone(),
                    source,
                })?;
            let Some(l) = line else {
                return Err(Error::Closed {
                    path: self.path.clone(),
                });
            };
            if l.trim().is_empty() {
                continue;
            }
            let reply = parse_reply(l.as_bytes())?;
            let last = reply.is_final();
            out.push(reply);
            if last {
                return Ok(out);
            }
        }
    }

    /// Sends one request and reads its final reply.
    pub async fn request(&mut self, req: Request) -> Result<Reply, Error> {
        let mut all = self.request_all(req).await?;
        all.pop().ok_or(Error::Closed {
            path: self.path.clone(),
        })
    }
}
