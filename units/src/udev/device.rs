//! A device as udev describes it, and what it becomes as systemd's
//! `.device` units: a device udev tagged `systemd` (a current tag) and
//! whose `SYSTEMD_READY=` is not false is **ready**, and is then named by
//! a unit for its sysfs path (`sys-devices-….device`, the main one, which
//! the others but those named `sys-…` follow), one for its node
//! (`dev-sda.device`), one for each symlink to the node but those under
//! `/dev/block/` and `/dev/char/` (unique but neither stable nor
//! predictable), and one for each absolute path in `SYSTEMD_ALIAS=` (`sys-subsystem-net-devices-eth0.device`).
//! Each name is the path escaped as `systemd-escape --path` does
//! ([`crate::escape::escape_path`]) with `.device` added.
//!
//! `SYSTEMD_WANTS=` lists units the main unit wants: a template
//! (`ifup@.service`) gets the escaped sysfs path as its instance, a name
//! without a type becomes a `.service`. udevd expanded its own `$name`,
//! `%k`, … when it ran the rules; systemd expands no specifier here.
//!
//! A unit's description is the model (`ID_MODEL_FROM_DATABASE=`, else
//! `ID_MODEL=`), followed by the file system's label, the partition's
//! name or its number when there is one; without a model, the unit's own
//! path.

use super::db::DbRecord;
use crate::escape::{escape_path, name_from_path};
use crate::unit_name::UnitName;
use std::collections::BTreeMap;

/// The tag that makes a device a unit.
pub const TAG: &str = "systemd";

/// One device.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Device {
    /// Its directory in sysfs (`/sys/devices/…`).
    pub syspath: String,
    /// Its node, if it has one (`/dev/sda`).
    pub devname: Option<String>,
    /// The symlinks udev made to the node (`/dev/disk/by-uuid/…`).
    pub symlinks: Vec<String>,
    /// Its properties.
    pub properties: BTreeMap<String, String>,
    /// The tags its last event set.
    pub current_tags: Vec<String>,
}

/// One name a ready device is known by as a unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceUnit {
    /// The unit's name (`dev-sda.device`).
    pub name: String,
    /// The path it is named after (`/dev/sda`).
    pub path: String,
    /// Its description.
    pub description: String,
    /// The main unit this one follows (`None` for the main unit and any
    /// other named `sys-…`).
    pub following: Option<String>,
}

impl Device {
    /// The device of database record `record`, whose sysfs directory is
    /// `syspath` and whose `uevent` file there says `uevent`.
    pub fn from_db(syspath: &str, uevent: &BTreeMap<String, String>, record: DbRecord) -> Device {
        let mut properties = uevent.clone();
        properties.extend(record.properties);
        Device {
            syspath: syspath.to_string(),
            devname: uevent.get("DEVNAME").map(|n| Device::node_path(n)),
            symlinks: record.symlinks,
            properties,
            current_tags: record.current_tags,
        }
    }

    /// A node's path from `DEVNAME=`, which the kernel gives relative to
    /// `/dev` (`sda`, `input/event0`) and udev absolute.
    pub fn node_path(name: &str) -> String {
        if name.starts_with('/') {
            name.to_string()
        } else {
            format!("/dev/{name}")
        }
    }

    /// Whether udev tagged it `systemd` in its last event.
    pub fn is_tagged(&self) -> bool {
        self.current_tags.iter().any(|t| t == TAG)
    }

    /// Whether its units are `plugged`: tagged, and `SYSTEMD_READY=` not
    /// false (a value that is no boolean counts as true, as systemd's).
    pub fn is_ready(&self) -> bool {
        self.is_tagged()
            && self
                .properties
                .get("SYSTEMD_READY")
                .and_then(|v| crate::fleet::parse_bool(v))
                != Some(false)
    }

    /// Its main unit's name, from its sysfs path (`None` if the path
    /// cannot be one).
    pub fn main_unit(&self) -> Option<String> {
        unit_name(&self.syspath)
    }

    /// The units a ready device is known by, the main unit first, each
    /// name once; empty when it is not ready.
    pub fn units(&self) -> Vec<DeviceUnit> {
        if !self.is_ready() {
            return Vec::new();
        }
        let Some(main) = self.main_unit() else {
            return Vec::new();
        };
        let links = self
            .symlinks
            .iter()
            .filter(|l| !l.starts_with("/dev/block/") && !l.starts_with("/dev/char/"));
        let paths = std::iter::once(&self.syspath)
            .chain(self.devname.iter())
            .chain(links)
            .cloned()
            .chain(self.aliases());
        let mut out: Vec<DeviceUnit> = Vec::new();
        for path in paths {
            let Some(name) = unit_name(&path) else {
                continue;
            };
            if out.iter().any(|u| u.name == name) {
                continue;
            }
            // As systemd's `device_following`: a unit named `sys-…` follows
            // none (`sys-subsystem-net-devices-eth0.device` neither), the
            // others the one of the sysfs path. systemctl lists a unit that
            // follows another only with `--all`.
            out.push(DeviceUnit {
                following: (!name.starts_with("sys-")).then(|| main.clone()),
                description: self.description(&path),
                name,
                path,
            });
        }
        out
    }

    /// `SYSTEMD_ALIAS=`'s absolute paths without a `..` component.
    fn aliases(&self) -> Vec<String> {
        self.words("SYSTEMD_ALIAS")
            .filter(|a| a.starts_with('/') && !a.split('/').any(|c| c == ".."))
            .map(str::to_string)
            .collect()
    }

    /// The whitespace-separated words of property `key`.
    fn words(&self, key: &str) -> impl Iterator<Item = &str> {
        self.properties
            .get(key)
            .map(String::as_str)
            .unwrap_or("")
            .split_whitespace()
    }

    /// The units its main unit wants (`SYSTEMD_WANTS=`), in order.
    pub fn wants(&self) -> Vec<String> {
        let instance = escape_path(&self.syspath).ok();
        self.words("SYSTEMD_WANTS")
            .filter_map(|w| {
                let n = UnitName::split(w);
                match (&instance, n.is_template()) {
                    (Some(i), true) => n.instantiate(i),
                    _ => mangle(w),
                }
            })
            .collect()
    }

    /// The description of its unit named after `path`.
    pub fn description(&self, path: &str) -> String {
        let p = |k: &str| self.properties.get(k).filter(|v| !v.is_empty());
        let Some(model) = p("ID_MODEL_FROM_DATABASE").or_else(|| p("ID_MODEL")) else {
            return path.to_string();
        };
        match p("ID_FS_LABEL")
            .or_else(|| p("ID_PART_ENTRY_NAME"))
            .or_else(|| p("ID_PART_ENTRY_NUMBER"))
        {
            Some(label) => format!("{model} {label}"),
            None => model.clone(),
        }
    }
}

/// The `.device` unit named after `path` (`None` for a path that cannot
/// be one, with a `..`).
pub fn unit_name(path: &str) -> Option<String> {
    name_from_path(path, "device").ok()
}

/// A word of `SYSTEMD_WANTS=` made a unit name as systemd mangles it: an
/// absolute path names its `.device` (under `/dev`) or `.mount`, a name
/// without a type is a `.service`.
fn mangle(word: &str) -> Option<String> {
    if word.starts_with('/') {
        let suffix = if word.starts_with("/dev/") {
            "device"
        } else {
            "mount"
        };
        return name_from_path(word, suffix).ok();
    }
    let has_type = word
        .rsplit_once('.')
        .is_some_and(|(_, s)| crate::unit_name::UNIT_SUFFIXES.contains(&s));
    Some(if has_type {
        word.to_string()
    } else {
        format!("{word}.service")
    })
}
