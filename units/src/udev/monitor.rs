//! The messages udevd broadcasts on netlink (`NETLINK_KOBJECT_UEVENT`,
//! multicast group 2, "udev") after processing a device's event, which is
//! what systemd's device units listen to (the kernel's own group 1 comes
//! before udev's rules ran, without the symlinks and properties).
//!
//! A message is a 40-byte header, then the properties: `libudev\0`, the
//! magic `0xfeedcafe` in network order, the header's size, the offset and
//! length of the properties (host order), and four filter hashes this
//! reader does not need; the properties are `KEY=VALUE` strings each ended
//! by a NUL: `ACTION=add`, `DEVPATH=/devices/…` (under `/sys`),
//! `SUBSYSTEM=`, `DEVNAME=`, `DEVLINKS=` (the symlinks, space-separated),
//! `TAGS=`/`CURRENT_TAGS=` (`:systemd:`), `SEQNUM=` and the device's
//! properties.

use super::device::Device;
use std::collections::BTreeMap;

/// The prefix of a message udevd sent (the kernel's begin with the action).
const PREFIX: &[u8; 8] = b"libudev\0";
/// The magic after it, in network byte order.
const MAGIC: u32 = 0xfeed_cafe;
/// The size of the header this reader knows.
const HEADER: usize = 40;

/// What happened to a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// It appeared.
    Add,
    /// It is gone.
    Remove,
    /// Its properties changed (or `udevadm trigger` ran).
    Change,
    /// It was renamed (its sysfs path moved).
    Move,
    /// A driver bound to it.
    Bind,
    /// A driver unbound from it.
    Unbind,
}

impl Action {
    /// Reads `ACTION=`'s value.
    pub fn parse(s: &str) -> Option<Action> {
        Some(match s {
            "add" => Action::Add,
            "remove" => Action::Remove,
            "change" => Action::Change,
            "move" => Action::Move,
            "bind" => Action::Bind,
            "unbind" => Action::Unbind,
            _ => return None,
        })
    }
}

/// One processed event: what happened, and the device as udev left it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uevent {
    /// The action.
    pub action: Action,
    /// The device.
    pub device: Device,
    /// Its path before a `move` (`DEVPATH_OLD=`, under `/sys`).
    pub old_syspath: Option<String>,
}

/// Reads one datagram; `None` when it is not a well-formed message of
/// udevd's (a kernel uevent, a truncated one, one without `ACTION=` or
/// `DEVPATH=`).
pub fn parse(msg: &[u8]) -> Option<Uevent> {
    let head = msg.get(..HEADER)?;
    if &head[..8] != PREFIX {
        return None;
    }
    let word = |at: usize| -> Option<[u8; 4]> { head.get(at..at + 4)?.try_into().ok() };
    if u32::from_be_bytes(word(8)?) != MAGIC {
        return None;
    }
    let off = u32::from_ne_bytes(word(16)?) as usize;
    let len = u32::from_ne_bytes(word(20)?) as usize;
    let props = msg.get(off..off.checked_add(len)?)?;
    let mut all: BTreeMap<String, String> = props
        .split(|&b| b == 0)
        .filter_map(|kv| {
            let kv = std::str::from_utf8(kv).ok()?;
            let (k, v) = kv.split_once('=')?;
            Some((k.to_string(), v.to_string()))
        })
        .collect();
    let action = Action::parse(&all.remove("ACTION")?)?;
    let syspath = format!("/sys{}", all.remove("DEVPATH")?);
    let old_syspath = all.remove("DEVPATH_OLD").map(|p| format!("/sys{p}"));
    let symlinks = all
        .remove("DEVLINKS")
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    let tags = |v: Option<String>| -> Vec<String> {
        v.map(|t| {
            t.split(':')
                .filter(|t| !t.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
    };
    let _all_tags = tags(all.remove("TAGS"));
    let current_tags = tags(all.remove("CURRENT_TAGS"));
    let devname = all.get("DEVNAME").map(|n| Device::node_path(n));
    Some(Uevent {
        action,
        device: Device {
            syspath,
            devname,
            symlinks,
            properties: all,
            current_tags,
        },
        old_syspath,
    })
}

/// The message udevd sends for a device with these `KEY=VALUE`
/// properties (`ACTION=` and `DEVPATH=` among them): the header, then
/// each property NUL-ended. What [`parse`] reads; for tests and fakes.
pub fn encode(properties: &[&str]) -> Vec<u8> {
    let body: Vec<u8> = properties
        .iter()
        .flat_map(|p| p.bytes().chain(std::iter::once(0)))
        .collect();
    let mut m = PREFIX.to_vec();
    m.extend(MAGIC.to_be_bytes());
    let len = u32::try_from(body.len()).unwrap_or(u32::MAX);
    for n in [HEADER as u32, HEADER as u32, len, 0, 0, 0, 0] {
        m.extend(n.to_ne_bytes());
    }
    m.extend(body);
    m
}
