//! Where the bus side listens: the peer-to-peer socket
//! (`/run/systemd/private`), handed over by the init as fd 3
//! (`LISTEN_FDS`, as sd_listen_fds(3) hands sockets), or bound at a path
//! given by flag (tests, and running it by hand); each connection is
//! authenticated as a D-Bus server and served with its peer's user. And
//! the system bus, once it runs, under the name `org.freedesktop.systemd1`.

use crate::hub::Hub;
use crate::server::{serve, serve_stream, Caller};
use std::os::fd::FromRawFd;
use std::path::Path;
use std::sync::Arc;

/// The first fd of `LISTEN_FDS`.
const LISTEN_FDS_START: i32 = 3;

/// The listening socket the init handed over, if `LISTEN_FDS` says so for
/// this process (`LISTEN_PID`, when set, is ours). The variables are taken
/// away so that nothing this process starts takes them for its own.
pub fn inherited() -> Option<std::os::unix::net::UnixListener> {
    let n: i32 = std::env::var("LISTEN_FDS").ok()?.parse().ok()?;
    if let Ok(pid) = std::env::var("LISTEN_PID") {
        if pid.parse::<u32>().ok() != Some(std::process::id()) {
            return None;
        }
    }
    std::env::remove_var("LISTEN_FDS");
    std::env::remove_var("LISTEN_PID");
    std::env::remove_var("LISTEN_FDNAMES");
    if n < 1 {
        return None;
    }
    // SAFETY: LISTEN_FDS says fd 3 is a socket handed to this process and
    // owned by nothing else in it.
    let l = unsafe { std::os::unix::net::UnixListener::from_raw_fd(LISTEN_FDS_START) };
    // SAFETY: fcntl on an fd this process owns.
    unsafe { libc::fcntl(LISTEN_FDS_START, libc::F_SETFD, libc::FD_CLOEXEC) };
    Some(l)
}

/// Binds `path` (replacing a stale socket, refusing anything else),
/// connectable by everyone: everyone may read, and only root may change
/// (`crate::server::Caller`).
pub fn bind(path: &Path) -> std::io::Result<std::os::unix::net::UnixListener> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!("{} exists and is not a socket", path.display()),
            ));
        }
        std::fs::remove_file(path)?;
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let l = std::os::unix::net::UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666))?;
    Ok(l)
}

/// Accepts connections for as long as the process lives.
pub async fn accept(
    hub: Arc<Hub>,
    listener: std::os::unix::net::UnixListener,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let listener = tokio::net::UnixListener::from_std(listener)?;
    let guid = zbus::Guid::generate();
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("flotilla-busd: accept: {e}");
                continue;
            }
        };
        let (uid, pid) = match stream.peer_cred() {
            Ok(c) => (c.uid(), c.pid().unwrap_or(0)),
            Err(e) => {
                eprintln!("flotilla-busd: peer credentials: {e}");
                continue;
            }
        };
        let (hub, guid) = (hub.clone(), guid.clone());
        tokio::spawn(async move {
            let built = match zbus::connection::Builder::unix_stream(stream).server(guid) {
                Ok(b) => b.p2p().build().await,
                Err(e) => Err(e),
            };
            match built {
                Ok(conn) => serve(hub, conn, Caller::Peer(uid, pid)).await,
                Err(e) => eprintln!("flotilla-busd: a client's handshake failed: {e}"),
            }
        });
    }
}

/// The unit whose coming up means the system bus may be there now.
const BUS_SERVICE: &str = "dbus.service";
/// The bus's socket unit: while the init holds it and the bus does not
/// run, a connection would start the bus (systemd connects only once
/// `dbus.service` is up, so a socket-activated bus starts on its first
/// client's call, not on the manager's).
const BUS_SOCKET: &str = "dbus.socket";

/// Serves the system bus: at once if it runs (unless a connection would
/// only start it: see [`BUS_SOCKET`]), else once `dbus.service` becomes
/// active (the init's changes say so: no polling), and again after the
/// bus went away and came back.
pub async fn system_bus_when_up(hub: Arc<Hub>) {
    let mut changes = hub.changes();
    let mut first = true;
    loop {
        // The bus's service that is up may not have bound its socket yet
        // (a simple service is active once it runs): after its change, a
        // few tries over about ten seconds.
        let tries = if first {
            usize::from(!would_activate(&hub).await)
        } else {
            12
        };
        first = false;
        let mut delay = std::time::Duration::from_millis(50);
        for n in 0..tries {
            if n > 0 {
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(std::time::Duration::from_secs(2));
            }
            if let Some(conn) = system_bus(hub.clone(), n + 1 == tries).await {
                conn.closed().await;
                eprintln!("flotilla-busd: the system bus went away");
                break;
            }
        }
        // Wait for the bus's units to come (back) up.
        loop {
            match changes.recv().await {
                Ok(crate::hub::Event::Changed(s)) => {
                    let name = crate::model::systemd_name(&s);
                    if name == BUS_SERVICE && s.state.is_active() {
                        break;
                    }
                }
                Ok(crate::hub::Event::Resync) => break,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => break,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    }
}

/// Whether a connection to the system bus now would only start it: the
/// init holds its socket and its service is not up.
async fn would_activate(hub: &Hub) -> bool {
    let Ok(units) = hub.list().await else {
        return false;
    };
    let active = |name: &str| {
        units
            .iter()
            .any(|u| crate::model::systemd_name(u) == name && u.state.is_active())
    };
    active(BUS_SOCKET) && !active(BUS_SERVICE)
}

/// Takes the name `org.freedesktop.systemd1` on the system bus and serves
/// it, if the bus runs; `None` when it does not (yet: said when `say`).
pub async fn system_bus(hub: Arc<Hub>, say: bool) -> Option<zbus::Connection> {
    // The bus hands over the activation requests it held while the name
    // had no owner (after it restarted, before busd is back) the moment
    // the name is taken: the connection's message stream must exist by
    // then, as zbus gives a message only to the streams open when it
    // comes. So: connect, open the stream, then take the name.
    let built = async {
        let conn = zbus::connection::Builder::system()?.build().await?;
        let stream = zbus::MessageStream::from(&conn);
        conn.request_name("org.freedesktop.systemd1").await?;
        Ok::<_, zbus::Error>((conn, stream))
    }
    .await;
    match built {
        Ok((conn, stream)) => {
            eprintln!("flotilla-busd: serving org.freedesktop.systemd1 on the system bus");
            tokio::spawn(serve_stream(hub, conn.clone(), Caller::Bus, stream));
            Some(conn)
        }
        Err(e) => {
            if say {
                eprintln!(
                    "flotilla-busd: no system bus yet ({e}); serving the peer-to-peer socket"
                );
            }
            None
        }
    }
}
