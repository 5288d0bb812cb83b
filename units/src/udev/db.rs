//! udev's database: one file per device under `/run/udev/data/`, named by
//! the device's id, and the tag directories `/run/udev/tags/TAG/ID`
//! listing the devices a tag is on.
//!
//! The id says which device it is: `b8:0` (block device 8:0), `c4:64`
//! (character device 4:64), `n2` (network interface of index 2),
//! `+SUBSYSTEM:SYSNAME` (any other, a `/` of the name written `!`). A
//! record is lines `X:value`: `S:` a symlink to the node, relative to
//! `/dev`; `E:KEY=VALUE` a property; `G:` a tag the device carries, `Q:`
//! one it carries since its last event (systemd asks for the current
//! ones); `I:` when it was initialised (µs), `L:` the symlinks' priority,
//! `W:` a watch handle, `V:` the format's version, which this reader does
//! not need.

use std::collections::BTreeMap;

/// Which device a database id names, and where its directory in sysfs
/// is found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbId {
    /// A block device: `/sys/dev/block/MAJOR:MINOR` links to it.
    Block(u32, u32),
    /// A character device: `/sys/dev/char/MAJOR:MINOR` links to it.
    Char(u32, u32),
    /// A network interface by index: the one under `/sys/class/net/`
    /// whose `ifindex` says it.
    Net(u32),
    /// Another device: `/sys/bus/SUBSYSTEM/devices/SYSNAME`, or
    /// `/sys/class/SUBSYSTEM/SYSNAME` for a class.
    Other {
        /// The subsystem (`drm`, `pci`, `module`, …).
        subsystem: String,
        /// The device's name in its subsystem, `!` back to `/`.
        sysname: String,
    },
}

impl DbId {
    /// Reads an id (a file name in `/run/udev/data/`); `None` for a name
    /// that is not one.
    pub fn parse(id: &str) -> Option<DbId> {
        let numbers = |s: &str| -> Option<(u32, u32)> {
            let (a, b) = s.split_once(':')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        };
        let mut chars = id.chars();
        match chars.next()? {
            'b' => numbers(chars.as_str()).map(|(a, b)| DbId::Block(a, b)),
            'c' => numbers(chars.as_str()).map(|(a, b)| DbId::Char(a, b)),
            'n' => chars.as_str().parse().ok().map(DbId::Net),
            '+' => {
                let (subsystem, sysname) = chars.as_str().split_once(':')?;
                (!subsystem.is_empty() && !sysname.is_empty()).then(|| DbId::Other {
                    subsystem: subsystem.to_string(),
                    sysname: sysname.replace('!', "/"),
                })
            }
            _ => None,
        }
    }
}

/// What one database file says of its device.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DbRecord {
    /// The symlinks udev made to the node, absolute (`/dev/disk/by-uuid/…`).
    pub symlinks: Vec<String>,
    /// The properties (`E:` lines), by name.
    pub properties: BTreeMap<String, String>,
    /// The tags the device carries (`G:`).
    pub tags: Vec<String>,
    /// The tags set by its last event (`Q:`): what "tagged" means to systemd.
    pub current_tags: Vec<String>,
}

/// Reads a database file's text. Lines of an unknown kind or without a
/// `:` are skipped, as udev skips them.
pub fn parse(text: &str) -> DbRecord {
    let mut r = DbRecord::default();
    for line in text.lines() {
        let Some((kind, value)) = line.split_once(':') else {
            continue;
        };
        match kind {
            "S" => r.symlinks.push(format!("/dev/{value}")),
            "E" => {
                if let Some((k, v)) = value.split_once('=') {
                    r.properties.insert(k.to_string(), v.to_string());
                }
            }
            "G" => r.tags.push(value.to_string()),
            "Q" => r.current_tags.push(value.to_string()),
            _ => {}
        }
    }
    r
}

/// Reads a sysfs `uevent` file (`KEY=VALUE` lines: `DEVNAME=sda`,
/// `DEVTYPE=disk`, `INTERFACE=eth0`, …) into its properties.
pub fn parse_uevent(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Where the symlink `link`, whose target reads `target`, points:
/// `target` taken from `link`'s directory when relative (sysfs's links
/// are: `../../devices/…`), `.` and `..` resolved by name (sysfs's
/// directories are no symlinks). `None` when `..` climbs above `/`.
///
/// ```
/// use flotilla_units::udev::db::resolve_link;
/// assert_eq!(
///     resolve_link("/sys/dev/block/254:1", "../../devices/pci0000:00/0000:00:04.0/virtio1/block/vda/vda1").as_deref(),
///     Some("/sys/devices/pci0000:00/0000:00:04.0/virtio1/block/vda/vda1")
/// );
/// ```
pub fn resolve_link(link: &str, target: &str) -> Option<String> {
    let base = if target.starts_with('/') {
        ""
    } else {
        link.rsplit_once('/').map_or("", |(dir, _)| dir)
    };
    let mut parts: Vec<&str> = Vec::new();
    for c in base.split('/').chain(target.split('/')) {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            c => parts.push(c),
        }
    }
    Some(format!("/{}", parts.join("/")))
}
