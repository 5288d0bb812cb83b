//! A `socket` unit's settings (systemd.socket(5)): what it listens on,
//! how the sockets are made, and how connections reach its service. The
//! values are read in systemd's syntax ([`SocketSettings::set`]); the init
//! binds the sockets (`init/src/sys/listen.rs`).

use super::{mode, size, tristate, u32_value, TriggerLimit};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::{IpAddr, Ipv6Addr};
use std::path::PathBuf;
use std::str::FromStr;

/// What kind of socket (or FIFO) a `Listen…=` line makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ListenKind {
    /// `ListenStream=`: TCP, or a unix stream socket.
    Stream,
    /// `ListenDatagram=`: UDP, or a unix datagram socket.
    Datagram,
    /// `ListenSequentialPacket=`: a unix `SOCK_SEQPACKET` socket.
    SequentialPacket,
    /// `ListenFIFO=`: a named pipe.
    Fifo,
    /// `ListenNetlink=`: a netlink socket of a family, bound to its
    /// multicast groups.
    Netlink,
    /// `ListenSpecial=`: a special file (a character device, a file in
    /// `/proc` or `/sys`), opened.
    Special,
}

impl ListenKind {
    /// The systemd key.
    pub fn key(self) -> &'static str {
        match self {
            ListenKind::Stream => "ListenStream",
            ListenKind::Datagram => "ListenDatagram",
            ListenKind::SequentialPacket => "ListenSequentialPacket",
            ListenKind::Fifo => "ListenFIFO",
            ListenKind::Netlink => "ListenNetlink",
            ListenKind::Special => "ListenSpecial",
        }
    }

    /// Whether the descriptor is a file the unit's lines name in the file
    /// system that the init makes (a unix socket or a FIFO, which
    /// `RemoveOnStop=` and `Symlinks=` are about); a special file is only
    /// opened.
    pub fn makes_file(self) -> bool {
        self != ListenKind::Special
    }

    /// Whether the socket listens for connections (`listen(2)`).
    pub fn connects(self) -> bool {
        matches!(self, ListenKind::Stream | ListenKind::SequentialPacket)
    }
}

/// Where a socket listens, in systemd's syntax (`ListenStream=`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ListenAddr {
    /// `PORT` (every address: `[::]` taking IPv4 too), `ADDR:PORT`,
    /// `[ADDR6]:PORT`.
    Inet {
        /// The address; `None` for every address.
        ip: Option<IpAddr>,
        /// The port, 1 to 65535.
        port: u16,
    },
    /// `/path`: a unix socket (or the FIFO) in the file system.
    Path(PathBuf),
    /// `@name`: a unix socket in the abstract namespace.
    Abstract(String),
    /// `FAMILY GROUP` of `ListenNetlink=`: the protocol (`kobject-uevent`
    /// is 15) and the multicast group mask.
    Netlink {
        /// The netlink protocol number.
        family: u32,
        /// The groups (`nl_groups`).
        group: u32,
    },
}

/// systemd's names of the netlink families (`netlink(7)`), by number.
const NETLINK_FAMILIES: [(&str, u32); 19] = [
    ("route", 0),
    ("usersock", 2),
    ("firewall", 3),
    ("sock-diag", 4),
    ("nflog", 5),
    ("xfrm", 6),
    ("selinux", 7),
    ("iscsi", 8),
    ("audit", 9),
    ("fib-lookup", 10),
    ("connector", 11),
    ("netfilter", 12),
    ("ip6-fw", 13),
    ("dnrtmsg", 14),
    ("kobject-uevent", 15),
    ("generic", 16),
    ("scsitransport", 18),
    ("ecryptfs", 19),
    ("rdma", 20),
];

impl ListenAddr {
    /// `ListenNetlink=`: a family, by name or number (0 to 31), and a
    /// multicast group mask (0 when left out).
    pub fn parse_netlink(text: &str) -> Result<ListenAddr, String> {
        let mut words = text.split_whitespace();
        let name = words.next().ok_or_else(|| {
            "a netlink family is needed (route, audit, kobject-uevent …)".to_string()
        })?;
        let family = match NETLINK_FAMILIES.iter().find(|(n, _)| *n == name) {
            Some(&(_, n)) => n,
            None => match name.parse::<u32>() {
                Ok(n) if n < 32 => n,
                _ => return Err(format!("{name:?} is not a netlink family (route, audit, kobject-uevent, generic … or 0 to 31)")),
            },
        };
        let group = match words.next() {
            Some(g) => g
                .parse::<u32>()
                .map_err(|_| format!("{g:?} is not a netlink group (a number)"))?,
            None => 0,
        };
        if let Some(extra) = words.next() {
            return Err(format!("{extra:?}: a netlink socket is FAMILY GROUP"));
        }
        Ok(ListenAddr::Netlink { family, group })
    }
}

impl ListenAddr {
    /// Reads an address as `ListenStream=` takes it.
    pub fn parse(text: &str) -> Result<ListenAddr, String> {
        let t = text.trim();
        if let Some(name) = t.strip_prefix('@') {
            if name.is_empty() || name.len() > 106 {
                return Err("an abstract socket name is 1 to 106 bytes".to_string());
            }
            return Ok(ListenAddr::Abstract(name.to_string()));
        }
        if t.starts_with('/') {
            if t.len() > 107 {
                return Err(format!(
                    "the socket path is longer than 107 bytes ({})",
                    t.len()
                ));
            }
            if t.contains("/../") || t.ends_with("/..") {
                return Err("the path has a `..` component".to_string());
            }
            return Ok(ListenAddr::Path(PathBuf::from(t)));
        }
        if t.starts_with("vsock:") {
            return Err("vsock sockets are not supported".to_string());
        }
        let port = |p: &str| match p.parse::<u16>() {
            Ok(0) | Err(_) => Err(format!("{p:?} is not a port (1 to 65535)")),
            Ok(n) => Ok(n),
        };
        if t.bytes().all(|b| b.is_ascii_digit()) && !t.is_empty() {
            return Ok(ListenAddr::Inet {
                ip: None,
                port: port(t)?,
            });
        }
        if let Some(rest) = t.strip_prefix('[') {
            let (addr, p) = rest
                .split_once("]:")
                .ok_or_else(|| format!("{t:?}: an IPv6 address is written [ADDRESS]:PORT"))?;
            let ip =
                Ipv6Addr::from_str(addr).map_err(|_| format!("{addr:?} is not an IPv6 address"))?;
            return Ok(ListenAddr::Inet {
                ip: Some(IpAddr::V6(ip)),
                port: port(p)?,
            });
        }
        let (addr, p) = t.rsplit_once(':').ok_or_else(|| {
            format!("{t:?} is not a port, ADDRESS:PORT, [ADDRESS]:PORT, /path or @name")
        })?;
        // `::1:53` would parse as an IPv6 address and a port, but systemd
        // wants the brackets: the split is ambiguous without them.
        if addr.contains(':') {
            return Err(format!("{t:?}: an IPv6 address is written [ADDRESS]:PORT"));
        }
        let ip: IpAddr = addr.parse().map_err(|_| {
            if addr.contains(':') {
                format!("{t:?}: an IPv6 address is written [ADDRESS]:PORT")
            } else {
                format!("{addr:?} is not an IP address")
            }
        })?;
        Ok(ListenAddr::Inet {
            ip: Some(ip),
            port: port(p)?,
        })
    }
}

impl fmt::Display for ListenAddr {
    /// As systemd's syntax writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenAddr::Inet { ip: None, port } => write!(f, "{port}"),
            ListenAddr::Inet {
                ip: Some(IpAddr::V6(ip)),
                port,
            } => write!(f, "[{ip}]:{port}"),
            ListenAddr::Inet {
                ip: Some(IpAddr::V4(ip)),
                port,
            } => write!(f, "{ip}:{port}"),
            ListenAddr::Path(p) => write!(f, "{}", p.display()),
            ListenAddr::Abstract(n) => write!(f, "@{n}"),
            ListenAddr::Netlink { family, group } => {
                match NETLINK_FAMILIES.iter().find(|(_, n)| n == family) {
                    Some((name, _)) => write!(f, "{name} {group}"),
                    None => write!(f, "{family} {group}"),
                }
            }
        }
    }
}

impl Serialize for ListenAddr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ListenAddr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ListenAddr, D::Error> {
        ListenAddr::parse(&String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// One `Listen…=` line. It travels as its kind and the address as the
/// line writes it, read back by [`Listen::parse`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Listen {
    /// The kind of socket.
    pub kind: ListenKind,
    /// Where.
    pub addr: ListenAddr,
}

impl Listen {
    /// A `Listen…=` value: the kinds that only exist as unix sockets (or
    /// FIFOs) refuse network addresses.
    pub fn parse(kind: ListenKind, text: &str) -> Result<Listen, String> {
        if kind == ListenKind::Netlink {
            let addr = ListenAddr::parse_netlink(text)?;
            return Ok(Listen { kind, addr });
        }
        let addr = ListenAddr::parse(text)?;
        match (kind, &addr) {
            (ListenKind::Fifo | ListenKind::Special, ListenAddr::Path(_)) => {}
            (ListenKind::Fifo, _) => return Err("a FIFO is an absolute path".to_string()),
            (ListenKind::Special, _) => {
                return Err("a special file is an absolute path".to_string())
            }
            (ListenKind::SequentialPacket, ListenAddr::Inet { .. }) => {
                return Err(
                    "a sequential-packet socket is a unix socket (/path or @name)".to_string(),
                )
            }
            _ => {}
        }
        Ok(Listen { kind, addr })
    }
}

impl<'de> Deserialize<'de> for Listen {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Listen, D::Error> {
        #[derive(Deserialize)]
        struct Raw {
            kind: ListenKind,
            addr: String,
        }
        let raw = Raw::deserialize(d)?;
        Listen::parse(raw.kind, &raw.addr).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for Listen {
    /// `stream 127.0.0.1:80`, `datagram /run/x.sock`, as status shows it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let k = match self.kind {
            ListenKind::Stream => "stream",
            ListenKind::Datagram => "datagram",
            ListenKind::SequentialPacket => "seqpacket",
            ListenKind::Fifo => "fifo",
            ListenKind::Netlink => "netlink",
            ListenKind::Special => "special",
        };
        write!(f, "{k} {}", self.addr)
    }
}

/// `BindIPv6Only=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BindIpv6Only {
    /// The kernel's default (`net.ipv6.bindv6only`), except that a port
    /// alone listens on both.
    #[default]
    Default,
    /// IPv6 sockets take IPv4 connections too.
    Both,
    /// IPv6 only.
    Ipv6Only,
}

/// A `[Socket]` section (its service is the unit's `triggers`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct SocketSettings {
    /// Every `Listen…=` line, in order: the order of the descriptors
    /// handed over (`LISTEN_FDS`).
    pub listen: Vec<Listen>,
    /// `Accept=`: one service instance per connection.
    pub accept: bool,
    /// `MaxConnections=`: with `Accept=yes`, at most this many instances at
    /// once (connections beyond are closed at once).
    pub max_connections: u32,
    /// `MaxConnectionsPerSource=`: with `Accept=yes`, at most this many at
    /// once from one source (an IP address; a user, on a unix socket); 0:
    /// no limit of its own.
    pub max_connections_per_source: u32,
    /// `Backlog=` (default `SOMAXCONN`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backlog: Option<u32>,
    /// `SocketUser=`: owner of unix sockets and FIFOs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub socket_user: Option<String>,
    /// `SocketGroup=`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub socket_group: Option<String>,
    /// `SocketMode=` (default 0666).
    pub socket_mode: u32,
    /// `DirectoryMode=`: of directories made for unix sockets (0755).
    pub directory_mode: u32,
    /// `BindIPv6Only=`.
    pub bind_ipv6_only: BindIpv6Only,
    /// `ReusePort=` (`SO_REUSEPORT`).
    pub reuse_port: bool,
    /// `FreeBind=` (`IP_FREEBIND`).
    pub free_bind: bool,
    /// `Transparent=` (`IP_TRANSPARENT`).
    pub transparent: bool,
    /// `KeepAlive=` (`SO_KEEPALIVE`).
    pub keep_alive: bool,
    /// `NoDelay=` (`TCP_NODELAY`).
    pub no_delay: bool,
    /// `Broadcast=` (`SO_BROADCAST`).
    pub broadcast: bool,
    /// `PassCredentials=` (`SO_PASSCRED`).
    pub pass_credentials: bool,
    /// `PassSecurity=` (`SO_PASSSEC`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pass_security: bool,
    /// `PassPacketInfo=` (`IP_PKTINFO`, `IPV6_RECVPKTINFO`,
    /// `NETLINK_PKTINFO`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pass_packet_info: bool,
    /// `Timestamping=` (`SO_TIMESTAMP`, `SO_TIMESTAMPNS`).
    #[serde(skip_serializing_if = "is_off")]
    pub timestamping: Timestamping,
    /// `Symlinks=`: links made to the unit's one socket file or FIFO, and
    /// removed with it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub symlinks: Vec<PathBuf>,
    /// `Writable=`: a `ListenSpecial=` file opened for writing too.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub writable: bool,
    /// `ReceiveBuffer=` (`SO_RCVBUF`), bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receive_buffer: Option<u64>,
    /// `SendBuffer=` (`SO_SNDBUF`), bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub send_buffer: Option<u64>,
    /// `Mark=` (`SO_MARK`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mark: Option<u32>,
    /// `BindToDevice=` (`SO_BINDTODEVICE`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bind_to_device: Option<String>,
    /// `RemoveOnStop=`: unix socket files and FIFOs removed when the socket
    /// unit stops.
    pub remove_on_stop: bool,
    /// `FileDescriptorName=`: the name in `LISTEN_FDNAMES` (default: the
    /// socket unit's name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_descriptor_name: Option<String>,
    /// `TriggerLimitIntervalSec=`, `TriggerLimitBurst=`.
    pub trigger_limit: TriggerLimit,
    /// Whether `TriggerLimitBurst=` was given: if not, the burst follows
    /// `Accept=` (20, or 200 with `Accept=yes`), whichever comes first.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub trigger_burst_given: bool,
}

impl Default for SocketSettings {
    fn default() -> SocketSettings {
        SocketSettings {
            listen: Vec::new(),
            accept: false,
            max_connections: 64,
            max_connections_per_source: 0,
            backlog: None,
            socket_user: None,
            socket_group: None,
            socket_mode: 0o666,
            directory_mode: 0o755,
            bind_ipv6_only: BindIpv6Only::Default,
            reuse_port: false,
            free_bind: false,
            transparent: false,
            keep_alive: false,
            no_delay: false,
            broadcast: false,
            pass_credentials: false,
            pass_security: false,
            pass_packet_info: false,
            timestamping: Timestamping::Off,
            symlinks: Vec::new(),
            writable: false,
            receive_buffer: None,
            send_buffer: None,
            mark: None,
            bind_to_device: None,
            remove_on_stop: false,
            file_descriptor_name: None,
            trigger_limit: TriggerLimit::SOCKET,
            trigger_burst_given: false,
        }
    }
}

/// `Timestamping=`: the time stamp received datagrams carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Timestamping {
    /// None.
    #[default]
    Off,
    /// `us`: microseconds (`SO_TIMESTAMP`).
    Us,
    /// `ns`: nanoseconds (`SO_TIMESTAMPNS`).
    Ns,
}

fn is_off(t: &Timestamping) -> bool {
    *t == Timestamping::Off
}

/// The `[Socket]` keys [`SocketSettings::set`] reads (`Service=` is the
/// unit's `triggers`).
pub const SOCKET_KEYS: [&str; 34] = [
    "ListenStream",
    "ListenDatagram",
    "ListenSequentialPacket",
    "ListenFIFO",
    "ListenNetlink",
    "ListenSpecial",
    "PassSecurity",
    "PassPacketInfo",
    "Timestamping",
    "Symlinks",
    "Writable",
    "Accept",
    "MaxConnections",
    "MaxConnectionsPerSource",
    "Backlog",
    "SocketUser",
    "SocketGroup",
    "SocketMode",
    "DirectoryMode",
    "BindIPv6Only",
    "ReusePort",
    "FreeBind",
    "Transparent",
    "KeepAlive",
    "NoDelay",
    "Broadcast",
    "PassCredentials",
    "ReceiveBuffer",
    "SendBuffer",
    "Mark",
    "BindToDevice",
    "RemoveOnStop",
    "FileDescriptorName",
    "TriggerLimitIntervalSec",
];

impl SocketSettings {
    /// One `[Socket]` assignment in systemd's syntax: a `Listen…=` adds a
    /// socket and an empty one removes every socket; an empty value resets
    /// any other setting. Returns whether the key is one of
    /// [`SOCKET_KEYS`] (or `TriggerLimitBurst`).
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, String> {
        let v = value.trim();
        let d = SocketSettings::default();
        let flag = |default: bool| tristate(v, default);
        let kind = match key {
            "ListenStream" => Some(ListenKind::Stream),
            "ListenDatagram" => Some(ListenKind::Datagram),
            "ListenSequentialPacket" => Some(ListenKind::SequentialPacket),
            "ListenFIFO" => Some(ListenKind::Fifo),
            "ListenNetlink" => Some(ListenKind::Netlink),
            "ListenSpecial" => Some(ListenKind::Special),
            _ => None,
        };
        if let Some(kind) = kind {
            if v.is_empty() {
                self.listen.clear();
            } else {
                self.listen.push(Listen::parse(kind, v)?);
            }
            return Ok(true);
        }
        match key {
            "Accept" => {
                self.accept = flag(false)?;
                if !self.trigger_burst_given {
                    self.trigger_limit.burst = TriggerLimit::socket(self.accept).burst;
                }
            }
            "MaxConnections" if v.is_empty() => self.max_connections = d.max_connections,
            "MaxConnections" => self.max_connections = u32_value(v, 1)?,
            "MaxConnectionsPerSource" if v.is_empty() => {
                self.max_connections_per_source = d.max_connections_per_source
            }
            "MaxConnectionsPerSource" => self.max_connections_per_source = u32_value(v, 0)?,
            "Backlog" => self.backlog = (!v.is_empty()).then(|| u32_value(v, 0)).transpose()?,
            "SocketUser" => self.socket_user = account(v)?,
            "SocketGroup" => self.socket_group = account(v)?,
            "SocketMode" => self.socket_mode = mode(v, d.socket_mode)?,
            "DirectoryMode" => self.directory_mode = mode(v, d.directory_mode)?,
            "BindIPv6Only" => {
                self.bind_ipv6_only = match v {
                    "" | "default" => BindIpv6Only::Default,
                    "both" => BindIpv6Only::Both,
                    "ipv6-only" => BindIpv6Only::Ipv6Only,
                    _ => return Err("use default, both or ipv6-only".to_string()),
                }
            }
            "ReusePort" => self.reuse_port = flag(false)?,
            "FreeBind" => self.free_bind = flag(false)?,
            "Transparent" => self.transparent = flag(false)?,
            "KeepAlive" => self.keep_alive = flag(false)?,
            "NoDelay" => self.no_delay = flag(false)?,
            "Broadcast" => self.broadcast = flag(false)?,
            "PassCredentials" => self.pass_credentials = flag(false)?,
            "PassSecurity" => self.pass_security = flag(false)?,
            "PassPacketInfo" => self.pass_packet_info = flag(false)?,
            "Timestamping" => {
                self.timestamping = match v {
                    "" | "off" => Timestamping::Off,
                    "us" | "usec" | "µs" => Timestamping::Us,
                    "ns" | "nsec" => Timestamping::Ns,
                    _ => return Err("use off, us or ns".to_string()),
                }
            }
            "Symlinks" => {
                if v.is_empty() {
                    self.symlinks.clear();
                }
                for w in v.split_whitespace() {
                    let p = crate::context::sandbox::normal_absolute(w)?;
                    self.symlinks.push(p);
                }
            }
            "Writable" => self.writable = flag(false)?,
            "ReceiveBuffer" => self.receive_buffer = size(v)?,
            "SendBuffer" => self.send_buffer = size(v)?,
            "Mark" => self.mark = (!v.is_empty()).then(|| u32_value(v, 0)).transpose()?,
            "BindToDevice" => {
                if v.len() > 15 || v.contains(['/', ' ']) {
                    return Err(format!("{v:?} is not a network interface name"));
                }
                self.bind_to_device = (!v.is_empty()).then(|| v.to_string());
            }
            "RemoveOnStop" => self.remove_on_stop = flag(false)?,
            "FileDescriptorName" => {
                if v.len() > 255 || v.contains(|c: char| c == ':' || c.is_control() || c == ' ') {
                    return Err("a name of at most 255 characters, without `:`, blanks or control characters".to_string());
                }
                self.file_descriptor_name = (!v.is_empty()).then(|| v.to_string());
            }
            "TriggerLimitIntervalSec" | "TriggerLimitBurst" => {
                self.trigger_limit
                    .set(key, v, TriggerLimit::socket(self.accept))?;
                if key == "TriggerLimitBurst" {
                    self.trigger_burst_given = !v.is_empty();
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// What a socket unit needs: something to listen on, and the kinds
    /// `Accept=yes` can take.
    pub fn check(&self) -> Result<(), String> {
        if self.listen.is_empty() {
            return Err("a socket unit needs ListenStream=, ListenDatagram=, ListenSequentialPacket=, ListenFIFO=, ListenNetlink= or ListenSpecial=".to_string());
        }
        if !self.symlinks.is_empty() {
            let files = self
                .listen
                .iter()
                .filter(|l| l.kind.makes_file() && matches!(l.addr, ListenAddr::Path(_)))
                .count();
            if files != 1 || self.listen.len() != 1 {
                return Err("Symlinks= needs exactly one Listen…= line, a unix socket in the file system or a FIFO".to_string());
            }
        }
        if self.writable && !self.listen.iter().any(|l| l.kind == ListenKind::Special) {
            return Err("Writable= applies to ListenSpecial= only".to_string());
        }
        if self.accept {
            if let Some(l) = self.listen.iter().find(|l| !l.kind.connects()) {
                return Err(format!(
                    "Accept=yes works only with stream and sequential-packet sockets, not {}={}",
                    l.kind.key(),
                    l.addr
                ));
            }
        }
        Ok(())
    }
}

/// `SocketUser=`, `SocketGroup=`: a name or number, or reset.
fn account(v: &str) -> Result<Option<String>, String> {
    if v.is_empty() {
        return Ok(None);
    }
    if !crate::account::valid(v) {
        return Err(crate::account::INVALID.to_string());
    }
    Ok(Some(v.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_as_systemd_writes_them() {
        for (text, shown) in [
            ("22", "22"),
            ("127.0.0.1:8080", "127.0.0.1:8080"),
            ("[::1]:53", "[::1]:53"),
            ("/run/dbus/system_bus_socket", "/run/dbus/system_bus_socket"),
            ("@flotilla/x", "@flotilla/x"),
        ] {
            let a = ListenAddr::parse(text).unwrap();
            assert_eq!(a.to_string(), shown);
            assert_eq!(ListenAddr::parse(&a.to_string()).unwrap(), a);
        }
        for (bad, why) in [
            ("0", "is not a port"),
            ("70000", "is not a port"),
            ("::1:53", "[ADDRESS]:PORT"),
            ("host:80", "is not an IP address"),
            ("run/x", "is not a port, ADDRESS:PORT"),
            ("vsock:2:80", "vsock"),
            ("@", "abstract socket name"),
            ("[::1]53", "[ADDRESS]:PORT"),
        ] {
            let e = ListenAddr::parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert!(Listen::parse(ListenKind::Fifo, "22").is_err());
        assert!(Listen::parse(ListenKind::SequentialPacket, "127.0.0.1:9").is_err());
    }

    #[test]
    fn settings_with_systemd_resets() {
        let mut s = SocketSettings::default();
        for (k, v) in [
            ("ListenStream", "22"),
            ("ListenStream", ""),
            ("ListenStream", "/run/a.sock"),
            ("ListenDatagram", "514"),
            ("SocketMode", "0600"),
            ("ReceiveBuffer", "8M"),
            ("Accept", "yes"),
            ("Accept", ""),
            ("Backlog", "16"),
            ("FileDescriptorName", "varlink"),
        ] {
            assert!(s.set(k, v).unwrap(), "{k}");
        }
        assert_eq!(s.listen.len(), 2);
        assert_eq!(s.socket_mode, 0o600);
        assert_eq!(s.receive_buffer, Some(8 << 20));
        assert!(!s.accept);
        assert_eq!(s.backlog, Some(16));
        // The trigger limit's burst follows Accept= unless it was given.
        let mut a = SocketSettings::default();
        a.set("Accept", "yes").unwrap();
        assert_eq!(a.trigger_limit.burst, 200);
        a.set("TriggerLimitBurst", "5").unwrap();
        a.set("Accept", "no").unwrap();
        assert_eq!(a.trigger_limit.burst, 5);
        a.set("MaxConnectionsPerSource", "3").unwrap();
        assert_eq!(a.max_connections_per_source, 3);
        assert!(a.set("MaxConnectionsPerSource", "-1").is_err());
        assert!(!s.set("ListenMessageQueue", "/q").unwrap());
        assert!(s.set("Timestamping", "ms").is_err());
        assert!(s.set("SocketMode", "0999").is_err());
        assert!(s.set("FileDescriptorName", "a:b").is_err());
        s.accept = true;
        assert!(s.check().unwrap_err().contains("Accept=yes works only"));
        assert!(SocketSettings::default().check().is_err());
    }
}
