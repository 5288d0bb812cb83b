//! The keys of the trigger units (`timer`, `socket`, `path`): each a
//! systemd key of `[Timer]`, `[Socket]` or `[Path]` and its YAML twin (the
//! key in lower kebab case), read in systemd's syntax by
//! [`crate::trigger::set`]. The unit a trigger starts (`Unit=`,
//! `Service=`) is `triggers`, in the main table.

use super::{Key, Slot};
use crate::spec::UnitType;

/// `timer`.
const TIMER: &[UnitType] = &[UnitType::Timer];
/// `socket`.
const SOCKET: &[UnitType] = &[UnitType::Socket];
/// `path`.
const PATH: &[UnitType] = &[UnitType::Path];
/// `socket` and `path`.
const SOCKET_PATH: &[UnitType] = &[UnitType::Socket, UnitType::Path];

macro_rules! key {
    ($yaml:literal, $types:expr, [$(($sec:literal, $sd:literal)),+], $name:literal) => {
        Key {
            name: $yaml,
            systemd: &[$(($sec, $sd)),+],
            applies_to: $types,
            slot: |s| Slot::Trigger(&mut s.extras.activation, $name),
        }
    };
}

/// Every trigger key, in the order the docs list them.
pub const TRIGGER_KEYS: [Key; 53] = [
    key!(
        "on-active-sec",
        TIMER,
        [("Timer", "OnActiveSec")],
        "OnActiveSec"
    ),
    key!("on-boot-sec", TIMER, [("Timer", "OnBootSec")], "OnBootSec"),
    key!(
        "on-startup-sec",
        TIMER,
        [("Timer", "OnStartupSec")],
        "OnStartupSec"
    ),
    key!(
        "on-unit-active-sec",
        TIMER,
        [("Timer", "OnUnitActiveSec")],
        "OnUnitActiveSec"
    ),
    key!(
        "on-unit-inactive-sec",
        TIMER,
        [("Timer", "OnUnitInactiveSec")],
        "OnUnitInactiveSec"
    ),
    key!(
        "on-calendar",
        TIMER,
        [("Timer", "OnCalendar")],
        "OnCalendar"
    ),
    key!("persistent", TIMER, [("Timer", "Persistent")], "Persistent"),
    key!(
        "accuracy-sec",
        TIMER,
        [("Timer", "AccuracySec")],
        "AccuracySec"
    ),
    key!(
        "randomized-delay-sec",
        TIMER,
        [("Timer", "RandomizedDelaySec")],
        "RandomizedDelaySec"
    ),
    key!(
        "fixed-random-delay",
        TIMER,
        [("Timer", "FixedRandomDelay")],
        "FixedRandomDelay"
    ),
    key!(
        "remain-after-elapse",
        TIMER,
        [("Timer", "RemainAfterElapse")],
        "RemainAfterElapse"
    ),
    key!(
        "on-clock-change",
        TIMER,
        [("Timer", "OnClockChange")],
        "OnClockChange"
    ),
    key!(
        "listen-stream",
        SOCKET,
        [("Socket", "ListenStream")],
        "ListenStream"
    ),
    key!(
        "listen-datagram",
        SOCKET,
        [("Socket", "ListenDatagram")],
        "ListenDatagram"
    ),
    key!(
        "listen-sequential-packet",
        SOCKET,
        [("Socket", "ListenSequentialPacket")],
        "ListenSequentialPacket"
    ),
    key!(
        "listen-fifo",
        SOCKET,
        [("Socket", "ListenFIFO")],
        "ListenFIFO"
    ),
    key!(
        "listen-netlink",
        SOCKET,
        [("Socket", "ListenNetlink")],
        "ListenNetlink"
    ),
    key!(
        "listen-special",
        SOCKET,
        [("Socket", "ListenSpecial")],
        "ListenSpecial"
    ),
    key!("accept", SOCKET, [("Socket", "Accept")], "Accept"),
    key!(
        "max-connections",
        SOCKET,
        [("Socket", "MaxConnections")],
        "MaxConnections"
    ),
    key!(
        "max-connections-per-source",
        SOCKET,
        [("Socket", "MaxConnectionsPerSource")],
        "MaxConnectionsPerSource"
    ),
    key!("backlog", SOCKET, [("Socket", "Backlog")], "Backlog"),
    key!(
        "socket-user",
        SOCKET,
        [("Socket", "SocketUser")],
        "SocketUser"
    ),
    key!(
        "socket-group",
        SOCKET,
        [("Socket", "SocketGroup")],
        "SocketGroup"
    ),
    key!(
        "socket-mode",
        SOCKET,
        [("Socket", "SocketMode")],
        "SocketMode"
    ),
    key!(
        "bind-ipv6-only",
        SOCKET,
        [("Socket", "BindIPv6Only")],
        "BindIPv6Only"
    ),
    key!("reuse-port", SOCKET, [("Socket", "ReusePort")], "ReusePort"),
    key!("free-bind", SOCKET, [("Socket", "FreeBind")], "FreeBind"),
    key!(
        "transparent",
        SOCKET,
        [("Socket", "Transparent")],
        "Transparent"
    ),
    key!("keep-alive", SOCKET, [("Socket", "KeepAlive")], "KeepAlive"),
    key!("no-delay", SOCKET, [("Socket", "NoDelay")], "NoDelay"),
    key!("broadcast", SOCKET, [("Socket", "Broadcast")], "Broadcast"),
    key!(
        "pass-credentials",
        SOCKET,
        [("Socket", "PassCredentials")],
        "PassCredentials"
    ),
    key!(
        "pass-security",
        SOCKET,
        [("Socket", "PassSecurity")],
        "PassSecurity"
    ),
    key!(
        "pass-packet-info",
        SOCKET,
        [("Socket", "PassPacketInfo")],
        "PassPacketInfo"
    ),
    key!(
        "timestamping",
        SOCKET,
        [("Socket", "Timestamping")],
        "Timestamping"
    ),
    key!("symlinks", SOCKET, [("Socket", "Symlinks")], "Symlinks"),
    key!("writable", SOCKET, [("Socket", "Writable")], "Writable"),
    key!(
        "receive-buffer",
        SOCKET,
        [("Socket", "ReceiveBuffer")],
        "ReceiveBuffer"
    ),
    key!(
        "send-buffer",
        SOCKET,
        [("Socket", "SendBuffer")],
        "SendBuffer"
    ),
    key!("mark", SOCKET, [("Socket", "Mark")], "Mark"),
    key!(
        "bind-to-device",
        SOCKET,
        [("Socket", "BindToDevice")],
        "BindToDevice"
    ),
    key!(
        "remove-on-stop",
        SOCKET,
        [("Socket", "RemoveOnStop")],
        "RemoveOnStop"
    ),
    key!(
        "file-descriptor-name",
        SOCKET,
        [("Socket", "FileDescriptorName")],
        "FileDescriptorName"
    ),
    key!("path-exists", PATH, [("Path", "PathExists")], "PathExists"),
    key!(
        "path-exists-glob",
        PATH,
        [("Path", "PathExistsGlob")],
        "PathExistsGlob"
    ),
    key!(
        "path-changed",
        PATH,
        [("Path", "PathChanged")],
        "PathChanged"
    ),
    key!(
        "path-modified",
        PATH,
        [("Path", "PathModified")],
        "PathModified"
    ),
    key!(
        "directory-not-empty",
        PATH,
        [("Path", "DirectoryNotEmpty")],
        "DirectoryNotEmpty"
    ),
    key!(
        "make-directory",
        PATH,
        [("Path", "MakeDirectory")],
        "MakeDirectory"
    ),
    key!(
        "directory-mode",
        SOCKET_PATH,
        [("Socket", "DirectoryMode"), ("Path", "DirectoryMode")],
        "DirectoryMode"
    ),
    key!(
        "trigger-limit-interval-sec",
        SOCKET_PATH,
        [
            ("Socket", "TriggerLimitIntervalSec"),
            ("Path", "TriggerLimitIntervalSec")
        ],
        "TriggerLimitIntervalSec"
    ),
    key!(
        "trigger-limit-burst",
        SOCKET_PATH,
        [
            ("Socket", "TriggerLimitBurst"),
            ("Path", "TriggerLimitBurst")
        ],
        "TriggerLimitBurst"
    ),
];
