//! The mount units of mount points that no unit file made (docs/dbus.md,
//! "Mount points"). systemd has a `.mount` unit for every mount point of
//! its mount table, whoever mounted it (the kernel, an initramfs, PID 1,
//! mount(8) from a shell): active and `mounted`, its `Where=`, `What=`,
//! `Type=` and `Options=` those of the table; `-.mount`, the root, is
//! perpetual (never stopped). flotilla's init has units only for the
//! `.mount` files it loads, so a `.mount` name the init does not have is
//! answered here from the init's mount table (`/proc/1/mountinfo`), read
//! when a client asks: the init itself watches and reads nothing for it.

use crate::dict::Props;
use flotilla_units::escape::{is_hashed, name_from_path, unescape_path};
use flotilla_units::mountinfo::{self, MountEntry};
use std::path::Path;
use zbus::zvariant::Value;

/// The mount interface.
pub const MOUNT: &str = "org.freedesktop.systemd1.Mount";

/// The root's unit.
pub const ROOT: &str = "-.mount";

/// Where the mount table is read: the init's (PID 1's, as systemd reads
/// its own), else the bus side's own (the same, unless it was given a
/// mount namespace of its own).
const TABLES: [&str; 2] = ["/proc/1/mountinfo", "/proc/self/mountinfo"];

/// The mount the unit `name` stands for, when it is a mount unit's name
/// and its place is a mount point now.
pub fn find(name: &str) -> Option<MountEntry> {
    name.strip_suffix(".mount")?;
    lookup(&table()?, name)
}

/// The mount table, read now.
pub fn table() -> Option<Vec<u8>> {
    TABLES.iter().find_map(|p| std::fs::read(p).ok())
}

/// [`find`] in the mount table `text`: the mount on top at the place the
/// name says (the last one listed there), when the name is that place's
/// own (its escaped path, as systemd names it: `tmp-x.mount` is
/// `/tmp/x`, never `/tmp-x`) and systemd keeps a unit for it (not for the
/// API file systems, `proc.mount` is no unit, nor for an autofs).
///
/// A hashed name (a mount point too deep for its escaped path to be a
/// name, `escape::name_from_path`) says no place: it is the mount whose
/// place's name it is, as systemd reads no path back from such a name.
pub fn lookup(text: &[u8], name: &str) -> Option<MountEntry> {
    let stem = name.strip_suffix(".mount")?;
    // A name that looks hashed may also be a short path's own name
    // (`/a_0123456789abcdef`): the names of the table's places decide.
    let place = if is_hashed(name) {
        None
    } else {
        let place = unescape_path(stem).ok()?;
        if name_from_path(&place, "mount").ok()? != name {
            return None;
        }
        Some(place)
    };
    mountinfo::entries(text)
        .filter(|e| match &place {
            Some(p) => e.mount_point == Path::new(p),
            None => e
                .mount_point
                .to_str()
                .is_some_and(|p| name_from_path(p, "mount").is_ok_and(|n| n == name)),
        })
        .last()
        .filter(mountinfo::entry_has_unit)
}

/// Unmounts `e` as systemd stops a mount unit: `umount WHERE -c` (the
/// place as the table has it, not resolved again). `Err` says why not,
/// with umount's own words.
pub async fn unmount(e: &MountEntry) -> Result<(), String> {
    let place = e.mount_point.clone();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("umount")
            .arg(&place)
            .arg("-c")
            .stdin(std::process::Stdio::null())
            .output()
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| format!("run umount: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "umount {} failed ({}): {}",
        e.mount_point.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    ))
}

/// The answer to what cannot be done to the mount unit `name` of a mount
/// point no unit made: a start or reload, and the root's stop.
pub fn refused(name: &str) -> crate::error::BusError {
    crate::error::BusError {
        name: "org.freedesktop.systemd1.UnitIsPerpetual",
        message: format!(
            "Unit {name} is a mount point no unit of the init's made: it can \
             neither start nor reload it{}.",
            if name == ROOT { ", nor stop it" } else { "" }
        ),
    }
}

/// The description systemd gives a mount unit with no file: the mount
/// point, `Root Mount` for the root.
pub fn description(name: &str, e: &MountEntry) -> String {
    if name == ROOT {
        "Root Mount".to_string()
    } else {
        e.mount_point.display().to_string()
    }
}

/// The mount's options as systemd shows them (`Options=`): the mount's
/// own, then those of its file system that are not among them.
pub fn options(e: &MountEntry) -> String {
    let mut out: Vec<&str> = e.options.split(',').filter(|o| !o.is_empty()).collect();
    for o in e.super_options.split(',') {
        if !o.is_empty() && !out.contains(&o) {
            out.push(o);
        }
    }
    out.join(",")
}

/// `org.freedesktop.systemd1.Unit` of the mount unit `name` for the mount
/// `e`: loaded from the mount table (`SourcePath`), no unit file, active
/// and `mounted` since a time nobody recorded (0). flotilla cannot start
/// it (the init has no such unit), and stops it by unmounting it
/// ([`unmount`]) unless it is the root: `CanStart` and `CanStop` say so.
pub fn unit(name: &str, e: &MountEntry) -> Props {
    let mut props = crate::fixed::unit(name, description(name, e), "mounted", name == ROOT);
    props.push(("SourcePath", Value::from("/proc/self/mountinfo")));
    props
}

/// `org.freedesktop.systemd1.Mount` of the mount `e`: what the mount
/// table says, and systemd's values for what nobody set (its default
/// time-out, 90 s; no process; no cgroup).
pub fn mount(e: &MountEntry) -> Props {
    vec![
        ("Where", Value::from(e.mount_point.display().to_string())),
        ("What", Value::from(e.source.clone())),
        ("Options", Value::from(options(e))),
        ("Type", Value::from(e.fstype.clone())),
        ("TimeoutUSec", Value::from(90_000_000u64)),
        ("ControlPID", Value::from(0u32)),
        ("DirectoryMode", Value::from(0o755u32)),
        ("SloppyOptions", Value::from(false)),
        ("LazyUnmount", Value::from(false)),
        ("ForceUnmount", Value::from(false)),
        ("ReadWriteOnly", Value::from(false)),
        ("Result", Value::from("success")),
        ("ControlGroup", Value::from("")),
    ]
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    const TABLE: &[u8] = b"\
21 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw,errors=remount-ro\n\
22 21 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:5 - proc proc rw\n\
30 21 0:30 / /tmp rw,nosuid,nodev shared:9 - tmpfs tmpfs rw,size=65536k\n\
31 30 0:31 / /tmp rw shared:10 - tmpfs other rw\n\
32 21 0:32 / /srv/my\\040data rw - tmpfs data rw\n\
33 21 0:33 / /tmp-x rw - tmpfs tmpx rw\n";

    /// Name, and the place and source of the mount it stands for.
    #[test]
    fn a_mount_units_name_finds_the_mount_on_top_of_its_place() {
        let table: &[(&str, Option<(&str, &str)>)] = &[
            ("-.mount", Some(("/", "/dev/vda1"))),
            // An API file system: no unit, as under systemd.
            ("proc.mount", None),
            // Mounted twice: the one on top.
            ("tmp.mount", Some(("/tmp", "other"))),
            ("srv-my\\x20data.mount", Some(("/srv/my data", "data"))),
            ("tmp\\x2dx.mount", Some(("/tmp-x", "tmpx"))),
            // `tmp-x` is /tmp/x, which is no mount point.
            ("tmp-x.mount", None),
            ("srv.mount", None),
            // Not the place's own name, or not a mount's.
            ("proc-.mount", None),
            ("proc.service", None),
            ("-.service", None),
        ];
        for (name, want) in table {
            let got = lookup(TABLE, name);
            let got = got
                .as_ref()
                .map(|e| (e.mount_point.to_str().unwrap_or(""), e.source.as_str()));
            assert_eq!(got, *want, "{name}");
        }
    }

    /// A mount too deep for its escaped path to be a name (systemd's test
    /// 60 mounts a tmpfs at seven 255-byte components) is found by its
    /// hashed name, and only by that; its neighbours keep theirs.
    #[test]
    fn a_deep_mount_point_answers_to_its_hashed_name() {
        let deep = format!("/{}", "x".repeat(255)).repeat(7);
        let mut table = String::from_utf8(TABLE.to_vec()).expect("UTF-8");
        table.push_str(&format!(
            "99 25 0:77 / {deep} rw,relatime shared:60 - tmpfs tmpfs rw\n"
        ));
        let name = name_from_path(&deep, "mount").expect("a name");
        assert!(name.ends_with("_d47b8f53acebf7de.mount"), "{name}");
        let e = lookup(table.as_bytes(), &name).expect("the deep mount");
        assert_eq!(e.mount_point, Path::new(&deep));
        let other = format!("{}_0123456789abcdef.mount", &name[..232]);
        assert!(lookup(table.as_bytes(), &other).is_none());
        assert!(lookup(table.as_bytes(), "tmp.mount").is_some());
        let rows = crate::listed::mounts(table.as_bytes(), &Default::default());
        assert!(rows.iter().any(|r| r.0 == name), "the listed row");
    }

    #[test]
    fn the_roots_unit_is_perpetual_active_and_mounted() {
        let e = lookup(TABLE, ROOT).expect("the root is mounted");
        let root = unit(ROOT, &e);
        let get = |p: &Props, n: &str| {
            p.iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| panic!("no {n}"))
        };
        assert_eq!(get(&root, "Description"), Value::from("Root Mount"));
        assert_eq!(get(&root, "ActiveState"), Value::from("active"));
        assert_eq!(get(&root, "SubState"), Value::from("mounted"));
        assert_eq!(get(&root, "LoadState"), Value::from("loaded"));
        assert_eq!(get(&root, "Perpetual"), Value::from(true));
        let m = mount(&e);
        assert_eq!(get(&m, "Where"), Value::from("/"));
        assert_eq!(get(&m, "What"), Value::from("/dev/vda1"));
        assert_eq!(get(&m, "Type"), Value::from("ext4"));
        assert_eq!(
            get(&m, "Options"),
            Value::from("rw,relatime,errors=remount-ro")
        );
        let t = lookup(TABLE, "tmp.mount").expect("/tmp is mounted");
        let tmp = unit("tmp.mount", &t);
        assert_eq!(get(&tmp, "Description"), Value::from("/tmp"));
        assert_eq!(get(&tmp, "Perpetual"), Value::from(false));
    }
}
