//! `Accept=yes`: what a connection a socket unit accepted is called. Each
//! connection gets an instance of the socket's template service, named as
//! systemd names it (`socket.c`'s `instance_from_socket`): the socket's
//! count of accepted connections, then for IP the local and the remote
//! address and port (`echo@3-127.0.0.1:7-127.0.0.1:52314.service`; an
//! IPv4 peer on an IPv6 socket written as IPv4), for a unix socket the
//! peer's PID and UID (`echo@3-812-0.service`), for anything else the
//! count alone. The limits (`MaxConnections=`, `MaxConnectionsPerSource=`)
//! count per [`Peer::source`].

use std::net::{IpAddr, SocketAddr};

/// Who is at the other end of an accepted connection, as far as the
/// instance name and the limits care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// An IP connection: the local (the socket's) and the remote address.
    Inet {
        /// Where the connection came in.
        local: SocketAddr,
        /// Where it came from.
        remote: SocketAddr,
    },
    /// A unix socket connection: the peer's credentials.
    Unix {
        /// The peer's PID.
        pid: i32,
        /// The peer's UID.
        uid: u32,
    },
    /// Anything else (or credentials the kernel did not give).
    Other,
}

/// An IPv4 address carried in an IPv6 one (`::ffff:a.b.c.d`) as IPv4;
/// others as they are.
fn plain(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

impl Peer {
    /// What `MaxConnectionsPerSource=` counts by: the remote IP address,
    /// or a unix peer's UID; `None`: not counted.
    pub fn source(&self) -> Option<String> {
        match self {
            Peer::Inet { remote, .. } => Some(plain(remote.ip()).to_string()),
            Peer::Unix { uid, .. } => Some(format!("uid {uid}")),
            Peer::Other => None,
        }
    }

    /// The remote address and port, for the instance's `REMOTE_ADDR` and
    /// `REMOTE_PORT` (IP connections only).
    pub fn remote(&self) -> Option<(IpAddr, u16)> {
        match self {
            Peer::Inet { remote, .. } => Some((plain(remote.ip()), remote.port())),
            _ => None,
        }
    }

    /// The instance part of the name of connection number `n`.
    pub fn instance(&self, n: u64) -> String {
        match self {
            Peer::Inet { local, remote } => {
                let (l, r) = (plain(local.ip()), plain(remote.ip()));
                // systemd writes the IPv4 form only when both ends are
                // IPv4 (mapped or not).
                let (l, r) = match (l, r) {
                    (IpAddr::V4(_), IpAddr::V4(_)) => (l, r),
                    _ => (local.ip(), remote.ip()),
                };
                format!("{n}-{l}:{}-{r}:{}", local.port(), remote.port())
            }
            Peer::Unix { pid, uid } => format!("{n}-{pid}-{uid}"),
            Peer::Other => n.to_string(),
        }
    }
}

/// The instance of template `template` (`echo@.service`) for connection
/// number `n` from `peer`: `echo@N-….service`.
pub fn instance_name(template: &str, n: u64, peer: &Peer) -> String {
    let (prefix, suffix) = template
        .split_once("@.")
        .unwrap_or((template.trim_end_matches('@'), "service"));
    format!("{prefix}@{}.{suffix}", peer.instance(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inet(local: &str, remote: &str) -> Peer {
        Peer::Inet {
            local: local.parse().unwrap_or_else(|e| panic!("{local}: {e}")),
            remote: remote.parse().unwrap_or_else(|e| panic!("{remote}: {e}")),
        }
    }

    #[test]
    fn names_as_systemd_gives_them() {
        let p = inet("127.0.0.1:7", "127.0.0.1:52314");
        assert_eq!(
            instance_name("echo@.service", 3, &p),
            "echo@3-127.0.0.1:7-127.0.0.1:52314.service"
        );
        // An IPv4 client of a socket on [::]: both ends mapped.
        let p = inet("[::ffff:10.0.0.1]:22", "[::ffff:10.0.0.9]:4000");
        assert_eq!(p.instance(0), "0-10.0.0.1:22-10.0.0.9:4000");
        assert_eq!(p.source().as_deref(), Some("10.0.0.9"));
        assert_eq!(p.remote(), Some(("10.0.0.9".parse().unwrap(), 4000)));
        let p = inet("[::1]:22", "[::1]:4000");
        assert_eq!(p.instance(12), "12-::1:22-::1:4000");
        let p = Peer::Unix { pid: 812, uid: 0 };
        assert_eq!(
            instance_name("sshd@.service", 5, &p),
            "sshd@5-812-0.service"
        );
        assert_eq!(p.source().as_deref(), Some("uid 0"));
        assert_eq!(p.remote(), None);
        assert_eq!(instance_name("x@.service", 7, &Peer::Other), "x@7.service");
        assert_eq!(Peer::Other.source(), None);
        // Every name is a valid unit name.
        for n in [
            instance_name("echo@.service", 3, &inet("[::1]:22", "[fe80::1]:9")),
            instance_name("sshd@.service", 5, &Peer::Unix { pid: 1, uid: 2 }),
        ] {
            crate::unit_name::validate_unit_name(&n).unwrap_or_else(|e| panic!("{n}: {e}"));
        }
    }
}
