//! The async client (`tokio` feature), for `clusterd`: one connection per
//! request, a connection kept for many requests (the agent's: one
//! connection, not one per change), and a long-lived `subscribe` stream.
//! Lines are written and read as the blocking [`crate::Connection`] does
//! ([`crate::request_line`], [`crate::parse_reply`]).

use crate::{parse_reply, request_line, Error};
use flotilla_units::protocol::{Reply, Request};
use std::path::{Path, PathBuf};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;

/// Connects to the control socket at `path`.
async fn open(path: &Path) -> Result<UnixStream, Error> {
    UnixStream::connect(path)
        .await
        .map_err(|source| Error::Unreachable {
            path: path.to_path_buf(),
            source,
        })
}

/// Connects; the halves of the connection.
async fn connect(path: &Path) -> Result<(Lines<BufReader<OwnedReadHalf>>, OwnedWriteHalf), Error> {
    let (r, w) = open(path).await?.into_split();
    Ok((BufReader::new(r).lines(), w))
}

/// Writes one request line.
async fn send(w: &mut OwnedWriteHalf, path: &Path, request: Request) -> Result<(), Error> {
    w.write_all(&request_line(request))
        .await
        .map_err(|source| Error::Send {
            path: path.to_path_buf(),
            source,
        })
}

/// The next reply of a stream, blank lines skipped; `None` at its end.
async fn next_reply(
    lines: &mut Lines<BufReader<OwnedReadHalf>>,
    path: &Path,
) -> Result<Option<Reply>, Error> {
    loop {
        let line = lines.next_line().await.map_err(|source| Error::Receive {
            path: path.to_path_buf(),
            source,
        })?;
        match line {
            None => return Ok(None),
            Some(l) if l.trim().is_empty() => continue,
            Some(l) => return parse_reply(l.as_bytes()).map(Some),
        }
    }
}

/// Sends one request on a new connection and returns its final reply.
pub async fn request(path: &Path, req: Request) -> Result<Reply, Error> {
    Connection::open(path).await?.request(req).await
}

/// Sends one request on a new connection with descriptors attached to
/// its line ([`crate::fds::send_with_fds`]; the request says how many it
/// carries, [`Request::passed_fds`]) and returns its final reply. The
/// descriptors stay the caller's; the init gets copies.
pub async fn request_passing(
    path: &Path,
    req: Request,
    fds: &[std::os::fd::RawFd],
) -> Result<Reply, Error> {
    use std::os::fd::AsRawFd;
    let send_error = |source| Error::Send {
        path: path.to_path_buf(),
        source,
    };
    let stream = open(path).await?;
    let line = request_line(req);
    let sent = loop {
        stream.writable().await.map_err(send_error)?;
        match stream.try_io(tokio::io::Interest::WRITABLE, || {
            crate::fds::send_with_fds(stream.as_raw_fd(), &line, fds)
        }) {
            Ok(n) => break n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(send_error(e)),
        }
    };
    let (r, mut w) = stream.into_split();
    w.write_all(line.get(sent..).unwrap_or_default())
        .await
        .map_err(send_error)?;
    let mut c = Connection {
        path: path.to_path_buf(),
        lines: BufReader::new(r).lines(),
        w,
    };
    let mut all = c.read_all().await?;
    all.pop().ok_or(Error::Closed {
        path: path.to_path_buf(),
    })
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
        let (lines, w) = connect(path).await?;
        Ok(Connection {
            path: path.to_path_buf(),
            lines,
            w,
        })
    }

    /// Sends one request and reads every reply up to the final one.
    pub async fn request_all(&mut self, req: Request) -> Result<Vec<Reply>, Error> {
        send(&mut self.w, &self.path, req).await?;
        self.read_all().await
    }

    /// Reads every reply up to the final one.
    async fn read_all(&mut self) -> Result<Vec<Reply>, Error> {
        let mut out = Vec::new();
        loop {
            let Some(reply) = next_reply(&mut self.lines, &self.path).await? else {
                return Err(Error::Closed {
                    path: self.path.clone(),
                });
            };
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

/// A `subscribe` stream: call [`Subscription::next`] for each change.
pub struct Subscription {
    path: PathBuf,
    lines: Lines<BufReader<OwnedReadHalf>>,
    // Kept open for the life of the stream: the init treats a closed write
    // side as the end of the connection.
    _w: OwnedWriteHalf,
}

impl Subscription {
    /// The next reply; `None` when the init closed the stream.
    pub async fn next(&mut self) -> Result<Option<Reply>, Error> {
        next_reply(&mut self.lines, &self.path).await
    }
}

/// Opens a `subscribe` stream.
pub async fn subscribe(path: &Path) -> Result<Subscription, Error> {
    stream(path, Request::Subscribe).await
}

/// Sends a request whose replies go on until the connection closes (a
/// `subscribe`, a followed `logs`); read them with [`Subscription::next`].
pub async fn stream(path: &Path, req: Request) -> Result<Subscription, Error> {
    let (lines, mut w) = connect(path).await?;
    send(&mut w, path, req).await?;
    Ok(Subscription {
        path: path.to_path_buf(),
        lines,
        _w: w,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// A server at a new socket that takes one connection, reads one
    /// request and answers `reply`; the socket's directory and what the
    /// server read.
    fn serve(reply: &'static [u8]) -> (tempfile::TempDir, tokio::task::JoinHandle<Vec<u8>>) {
        let dir = tempfile::tempdir().unwrap();
        let listener = tokio::net::UnixListener::bind(dir.path().join("s")).unwrap();
        let server = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut got = vec![0u8; 64];
            let n = s.read(&mut got).await.unwrap();
            s.write_all(reply).await.unwrap();
            got.truncate(n);
            got
        });
        (dir, server)
    }

    #[tokio::test]
    async fn a_request_reads_until_its_final_reply() {
        let (dir, server) = serve(
            b"{\"reply\":\"log\",\"time\":\"t\",\"stream\":\"stdout\",\"line\":\"x\"}\n\n{\"reply\":\"log-end\"}\n",
        );
        let reply = request(&dir.path().join("s"), Request::List).await.unwrap();
        assert_eq!(reply, Reply::LogEnd);
        assert_eq!(server.await.unwrap(), b"{\"v\":1,\"op\":\"list\"}\n");
    }

    #[tokio::test]
    async fn a_kept_connection_carries_one_request_after_another() {
        let dir = tempfile::tempdir().unwrap();
        let listener = tokio::net::UnixListener::bind(dir.path().join("s")).unwrap();
        let server = tokio::spawn(async move {
            let (s, _) = listener.accept().await.unwrap();
            let (r, mut w) = s.into_split();
            let mut lines = BufReader::new(r).lines();
            let mut got = Vec::new();
            while got.len() < 2 {
                let Some(l) = lines.next_line().await.unwrap() else {
                    break;
                };
                got.push(l);
                w.write_all(
                    b"{\"reply\":\"log\",\"time\":\"t\",\"stream\":\"stdout\",\"line\":\"x\"}\n{\"reply\":\"log-end\"}\n",
                )
                .await
                .unwrap();
            }
            got
        });
        let mut c = Connection::open(&dir.path().join("s")).await.unwrap();
        assert_eq!(c.request_all(Request::List).await.unwrap().len(), 2);
        assert_eq!(c.request(Request::List).await.unwrap(), Reply::LogEnd);
        assert_eq!(server.await.unwrap().len(), 2);
        // The init gone, the next request fails; it is never answered by
        // an empty reply.
        let e = c.request(Request::List).await.unwrap_err();
        assert!(
            matches!(e, Error::Closed { .. } | Error::Send { .. }),
            "{e:?}"
        );
    }

    #[tokio::test]
    async fn a_closed_stream_ends_a_subscription() {
        let (dir, server) = serve(b"{\"reply\":\"log-end\"}\n");
        let mut sub = subscribe(&dir.path().join("s")).await.unwrap();
        assert_eq!(sub.next().await.unwrap(), Some(Reply::LogEnd));
        assert_eq!(server.await.unwrap(), b"{\"v\":1,\"op\":\"subscribe\"}\n");
        assert_eq!(sub.next().await.unwrap(), None);
        let e = request(&dir.path().join("none"), Request::List)
            .await
            .unwrap_err();
        assert!(matches!(e, Error::Unreachable { .. }), "{e:?}");
    }
}
