//! The dependencies systemd gives a mount unit of itself, from what is
//! mounted where (systemd.mount(5), "Implicit Dependencies" and "Default
//! Dependencies"): a unit file's `[Mount]` keys while its place is not
//! mounted, the mount table's entry while it is (systemd's mount units
//! take the table's values then, so a hand-made `mount -t ext4` at the
//! place of an NFS unit is ordered as a local file system). The
//! translator (`translate/mount.rs`) adds those of the file to the unit;
//! the bus side shows those of the table.

use flotilla_units::escape::{escape_path, name_from_path};
use flotilla_units::spec::MountParams;

/// systemd's `fstype_is_network()`: file systems that need the network.
const NETWORK_TYPES: [&str; 19] = [
    "afs",
    "ceph",
    "cifs",
    "smb3",
    "smbfs",
    "sshfs",
    "ncpfs",
    "ncp",
    "nfs",
    "nfs4",
    "gfs",
    "gfs2",
    "glusterfs",
    "gpfs",
    "pvfs2",
    "ocfs2",
    "lustre",
    "davfs",
    "9p",
];

/// A mount's dependencies, each list in the order systemd adds them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MountDeps {
    /// Pulled in and required: the device the mount is of.
    pub requires: Vec<String>,
    /// Pulled in: `network-online.target` for a network file system.
    pub wants: Vec<String>,
    /// Ordered after.
    pub after: Vec<String>,
    /// Ordered before.
    pub before: Vec<String>,
    /// Stopped when these start: `umount.target`.
    pub conflicts: Vec<String>,
}

/// Whether option `name` is among the comma-separated `options` (as a
/// word of its own, or as `name=value`).
pub fn has_option(options: &str, name: &str) -> bool {
    options
        .split(',')
        .any(|o| o == name || o.strip_prefix(name).is_some_and(|r| r.starts_with('=')))
}

/// systemd's `mount_is_network()`: `_netdev`, or a network file system.
pub fn is_network(m: &MountParams) -> bool {
    has_option(&m.options, "_netdev")
        || NETWORK_TYPES.contains(&m.fstype.as_str())
        || m.fstype.starts_with("fuse.sshfs")
}

/// systemd's `mount_is_bind()`.
fn is_bind(m: &MountParams) -> bool {
    has_option(&m.options, "bind")
        || has_option(&m.options, "rbind")
        || m.fstype == "bind"
        || m.fstype == "rbind"
}

/// systemd's `fstab_is_extrinsic()` (outside an initrd): mounts the
/// system stands on, or below the API file systems, which get no default
/// dependencies.
pub fn is_extrinsic(m: &MountParams) -> bool {
    let under = |dir: &str| {
        m.place == dir
            || m.place
                .strip_prefix(dir)
                .is_some_and(|r| r.starts_with('/'))
    };
    ["/", "/usr", "/etc"].contains(&m.place.as_str())
        || ["/run/initramfs", "/proc", "/sys", "/dev"]
            .into_iter()
            .any(under)
        || has_option(&m.options, "x-initrd.mount")
}

/// The device unit and `blockdev@.target` instance a mount of a device
/// is ordered after (systemd's `mount_add_device_dependencies`): none for
/// a bind mount, a source that is not a device path, `/dev/root` or
/// `/dev/nfs`, or the root's mount.
pub fn device_deps(m: &MountParams) -> Option<(String, Option<String>)> {
    let device_path = m.what.starts_with("/dev/") || m.what.starts_with("/sys/");
    if !device_path || is_bind(m) || ["/dev/root", "/dev/nfs"].contains(&m.what.as_str()) {
        return None;
    }
    if m.place == "/" {
        return None;
    }
    let device = name_from_path(&m.what, "device").ok()?;
    let blockdev = (m.what.starts_with("/dev/"))
        .then(|| escape_path(&m.what).ok())
        .flatten()
        .map(|e| format!("blockdev@{e}.target"));
    Some((device, blockdev))
}

/// systemd's default dependencies of a mount (`DefaultDependencies=yes`,
/// not extrinsic): after `local-fs-pre.target` and before
/// `local-fs.target`, or for a network file system after
/// `remote-fs-pre.target`, `network.target` and `network-online.target`
/// (wanted) and before `remote-fs.target`; the `Before=` dropped for a
/// unit file's `nofail`; before and in conflict with `umount.target`; a
/// tmpfs after `swap.target`.
pub fn default_deps(m: &MountParams, nofail: bool) -> MountDeps {
    let mut d = MountDeps::default();
    if is_extrinsic(m) {
        return d;
    }
    let network = is_network(m);
    let (after, before) = if network {
        ("remote-fs-pre.target", "remote-fs.target")
    } else {
        ("local-fs-pre.target", "local-fs.target")
    };
    if !nofail {
        d.before.push(before.into());
    }
    d.after.push(after.into());
    d.before.push("umount.target".into());
    d.conflicts.push("umount.target".into());
    if network {
        d.after.push("network.target".into());
        d.wants.push("network-online.target".into());
        d.after.push("network-online.target".into());
    }
    if m.fstype == "tmpfs" {
        d.after.push("swap.target".into());
    }
    d
}

/// What systemd gives a mount of the mount table (no unit file): its
/// device's dependencies, then the default ones.
pub fn of_table(m: &MountParams) -> MountDeps {
    let mut d = default_deps(m, false);
    if let Some((device, blockdev)) = device_deps(m) {
        d.requires.insert(0, device.clone());
        let mut after = vec![device];
        after.extend(blockdev);
        after.append(&mut d.after);
        d.after = after;
    }
    d
}

#[cfg(test)]
#[path = "mount_deps_tests.rs"]
mod tests;
