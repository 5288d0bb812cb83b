//! `DevicePolicy=` and `DeviceAllow=` (systemd.resource-control(5)): which
//! device nodes a service's processes may open, read, write or make,
//! whatever their privileges. The init turns the list into a cgroup device
//! program (`init/src/sys/devices.rs`); here are the values and the rule
//! of which list applies.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::value::words;

/// `DevicePolicy=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DevicePolicy {
    /// Every device, unless `DeviceAllow=` names some: then `closed`.
    #[default]
    Auto,
    /// The standard pseudo devices and what `DeviceAllow=` names.
    Closed,
    /// Only what `DeviceAllow=` names.
    Strict,
}

/// What a `DeviceAllow=` line names.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceNode {
    /// A device node, by path (its type and numbers are read when the
    /// unit starts).
    Path(PathBuf),
    /// `char-NAME` / `block-NAME`: every device of the drivers of that
    /// name in `/proc/devices` (a `*` pattern allowed).
    Group {
        /// `block-`, else `char-`.
        block: bool,
        /// The driver's name or pattern.
        name: String,
    },
}

/// The access bits of the kernel's device programs (`BPF_DEVCG_ACC_*`).
pub const MKNOD: u8 = 1;
/// Reading.
pub const READ: u8 = 2;
/// Writing.
pub const WRITE: u8 = 4;

/// One `DeviceAllow=` entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DeviceAllow {
    /// The device or devices.
    pub node: DeviceNode,
    /// [`READ`], [`WRITE`], [`MKNOD`] bits.
    pub access: u8,
}

/// The device keys of a service.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct Devices {
    /// `DevicePolicy=`.
    pub policy: DevicePolicy,
    /// `DeviceAllow=`, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<DeviceAllow>,
}

/// What `closed` adds (systemd's list): the pseudo devices every program
/// takes for granted, and the pseudo-terminals.
fn standard() -> Vec<DeviceAllow> {
    let rwm = READ | WRITE | MKNOD;
    let path = |p: &str| DeviceAllow {
        node: DeviceNode::Path(PathBuf::from(p)),
        access: rwm,
    };
    let mut out: Vec<DeviceAllow> = [
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/random",
        "/dev/urandom",
        "/dev/tty",
        "/dev/ptmx",
    ]
    .into_iter()
    .map(path)
    .collect();
    out.push(DeviceAllow {
        node: DeviceNode::Group {
            block: false,
            name: "pts".to_string(),
        },
        access: READ | WRITE,
    });
    out
}

impl Devices {
    /// The devices the service may use, or `None` for every device (no
    /// filter): `auto` without `DeviceAllow=`.
    pub fn filter(&self) -> Option<Vec<DeviceAllow>> {
        let closed = match self.policy {
            DevicePolicy::Auto if self.allow.is_empty() => return None,
            DevicePolicy::Auto | DevicePolicy::Closed => true,
            DevicePolicy::Strict => false,
        };
        let mut out = if closed { standard() } else { Vec::new() };
        out.extend(self.allow.iter().cloned());
        Some(out)
    }
}

/// `DevicePolicy=`.
pub fn parse_policy(value: &str) -> Result<DevicePolicy, String> {
    match value.trim() {
        "auto" => Ok(DevicePolicy::Auto),
        "closed" => Ok(DevicePolicy::Closed),
        "strict" => Ok(DevicePolicy::Strict),
        t => Err(format!(
            "`{t}` is not a device policy (write auto, closed or strict)"
        )),
    }
}

/// `DeviceAllow=`: a device node path (`/dev/…`, a leading `-` tolerated
/// as systemd writes it for optional nodes) or `char-NAME`/`block-NAME`,
/// then the access (`r`, `w`, `m`; all three when left out). An empty
/// value empties the list.
pub fn assign_allow(list: &mut Vec<DeviceAllow>, value: &str) -> Result<(), String> {
    let w = words(value)?;
    let Some(first) = w.first() else {
        list.clear();
        return Ok(());
    };
    if w.len() > 2 {
        return Err(format!(
            "`{}`: a device and its access, nothing more",
            value.trim()
        ));
    }
    let node = if let Some(name) = first.strip_prefix("char-") {
        group(false, name)?
    } else if let Some(name) = first.strip_prefix("block-") {
        group(true, name)?
    } else {
        let p = first.strip_prefix('-').unwrap_or(first);
        DeviceNode::Path(super::sandbox::normal_absolute(p).map_err(|_| {
            format!("`{first}` is not a device path (/dev/…) or char-NAME / block-NAME")
        })?)
    };
    let access = match w.get(1) {
        None => READ | WRITE | MKNOD,
        Some(a) => {
            let mut bits = 0;
            for c in a.chars() {
                bits |= match c {
                    'r' => READ,
                    'w' => WRITE,
                    'm' => MKNOD,
                    _ => return Err(format!("`{a}` is not an access (write r, w and m)")),
                };
            }
            bits
        }
    };
    list.push(DeviceAllow { node, access });
    Ok(())
}

fn group(block: bool, name: &str) -> Result<DeviceNode, String> {
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(format!("`{name}` is not a driver name of /proc/devices"));
    }
    Ok(DeviceNode::Group {
        block,
        name: name.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allow(values: &[&str]) -> Result<Vec<DeviceAllow>, String> {
        let mut l = Vec::new();
        for v in values {
            assign_allow(&mut l, v)?;
        }
        Ok(l)
    }

    #[test]
    fn entries_and_their_access() {
        let l = allow(&["/dev/null rw", "char-pts", "block-loop r", "-/dev/fuse m"]).unwrap();
        assert_eq!(
            l[0],
            DeviceAllow {
                node: DeviceNode::Path("/dev/null".into()),
                access: READ | WRITE
            }
        );
        assert_eq!(l[1].access, READ | WRITE | MKNOD);
        assert_eq!(
            l[2].node,
            DeviceNode::Group {
                block: true,
                name: "loop".into()
            }
        );
        assert_eq!(l[3].node, DeviceNode::Path("/dev/fuse".into()));
        assert_eq!(l[3].access, MKNOD);
        assert_eq!(allow(&["/dev/null r", ""]).unwrap(), []);
    }

    #[test]
    fn bad_entries_say_why() {
        assert_eq!(
            allow(&["/dev/null rx"]).unwrap_err(),
            "`rx` is not an access (write r, w and m)"
        );
        assert_eq!(
            allow(&["null rw"]).unwrap_err(),
            "`null` is not a device path (/dev/…) or char-NAME / block-NAME"
        );
        assert_eq!(
            allow(&["char- rw"]).unwrap_err(),
            "`` is not a driver name of /proc/devices"
        );
        assert_eq!(
            allow(&["/dev/a r w"]).unwrap_err(),
            "`/dev/a r w`: a device and its access, nothing more"
        );
        assert_eq!(
            parse_policy("open").unwrap_err(),
            "`open` is not a device policy (write auto, closed or strict)"
        );
    }

    #[test]
    fn which_list_applies() {
        let mut d = Devices::default();
        assert_eq!(d.filter(), None, "auto, nothing allowed: no filter");
        d.policy = DevicePolicy::Strict;
        assert_eq!(d.filter(), Some(vec![]), "strict: nothing at all");
        d.allow = allow(&["/dev/kvm rw"]).unwrap();
        assert_eq!(d.filter().unwrap().len(), 1);
        d.policy = DevicePolicy::Auto;
        let auto = d.filter().unwrap();
        assert_eq!(auto.len(), 9, "the standard devices, the pts and /dev/kvm");
        d.policy = DevicePolicy::Closed;
        assert_eq!(d.filter().unwrap(), auto);
    }
}
