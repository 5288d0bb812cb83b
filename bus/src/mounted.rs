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
use flotilla_systemd::{mount_deps, mounts_for};
use flotilla_units::escape::{is_hashed, name_from_path, unescape_path};
use flotilla_units::mountinfo::{self, MountEntry};
use flotilla_units::protocol::Dependencies;
use flotilla_units::spec::MountParams;
use std::path::Path;
use zbus::zvariant::Value;

pub use crate::mount_props::{mount, MOUNT};

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

/// A mount point of the table as its unit shows it: the mount, what it
/// is ([`params`]) and the mount units above its place. Made from one
/// read of the table and of `/run/mount/utab`.
#[derive(Debug)]
pub struct TableMount {
    /// The mount on top at the place.
    pub entry: MountEntry,
    /// Its source, type and options, mount(8)'s own included.
    pub params: MountParams,
    /// The mount units of the places above it that are mount points
    /// ([`above`]; none for the root).
    pub above: Vec<String>,
}

/// [`find`], with what the unit's properties need of the table.
pub fn find_mount(name: &str) -> Option<TableMount> {
    name.strip_suffix(".mount")?;
    TableMount::in_table(&table()?, name)
}

impl TableMount {
    /// The mount unit `name` of the mount table `table` ([`lookup`]).
    pub fn in_table(table: &[u8], name: &str) -> Option<TableMount> {
        let entry = lookup(table, name)?;
        let above = if name == ROOT {
            Vec::new()
        } else {
            above(table, &entry.mount_point.display().to_string())
        };
        Some(TableMount {
            params: params(&entry),
            entry,
            above,
        })
    }
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

/// What the mount `e` is, as systemd reads it: the table's source, type
/// and options ([`options`]), and the options mount(8) kept for itself in
/// `/run/mount/utab` (`_netdev`, `x-…`: libmount merges them so).
pub fn params(e: &MountEntry) -> MountParams {
    let mut options = options(e);
    let utab = std::fs::read(UTAB).unwrap_or_default();
    if let Some(own) = mountinfo::utab_options(&utab, &e.mount_point, &e.root) {
        for o in own.split(',').filter(|o| !o.is_empty()) {
            options.push(',');
            options.push_str(o);
        }
    }
    MountParams {
        place: e.mount_point.display().to_string(),
        what: e.source.clone(),
        fstype: e.fstype.clone(),
        options,
    }
}

/// Where mount(8) keeps its own options of each mount.
const UTAB: &str = "/run/mount/utab";

/// The mount units systemd orders a mount at `place` after and requires:
/// those of the places above it that are mount points of `table` (the
/// root's always), as its `RequiresMountsFor=` of the parent directory.
fn above(table: &[u8], place: &str) -> Vec<String> {
    let mut names = mounts_for(place);
    names.pop();
    names.retain(|n| n == ROOT || lookup(table, n).is_some());
    names
}

/// `org.freedesktop.systemd1.Unit` of the mount unit `name` for the mount
/// `m`: loaded from the mount table (`SourcePath`), no unit file, active
/// and `mounted` since a time nobody recorded (0), with the dependencies
/// systemd gives such a mount (`flotilla_systemd::mount_deps`). flotilla
/// cannot start it (the init has no such unit), and stops it by
/// unmounting it ([`unmount`]) unless it is the root: `CanStart` and
/// `CanStop` say so.
pub fn unit(name: &str, m: &TableMount) -> Props {
    let mut props = crate::fixed::unit(name, description(name, &m.entry), "mounted", name == ROOT);
    props.push(("SourcePath", Value::from("/proc/self/mountinfo")));
    let mut deps = mount_deps::of_table(&m.params);
    deps.requires.splice(0..0, m.above.iter().cloned());
    deps.after.splice(0..0, m.above.iter().cloned());
    let deps = Dependencies {
        requires: deps.requires,
        wants: deps.wants,
        after: deps.after,
        before: deps.before,
        conflicts: deps.conflicts,
        default_dependencies: true,
    };
    set_dependencies(&mut props, deps);
    props
}

/// A unit's properties `props` with its dependencies those of `d`.
pub fn set_dependencies(props: &mut Props, d: Dependencies) {
    for (key, list) in [
        ("Requires", d.requires),
        ("Wants", d.wants),
        ("After", d.after),
        ("Before", d.before),
        ("Conflicts", d.conflicts),
    ] {
        crate::dict::set(props, key, Value::from(list));
    }
}

/// The dependencies of the init's mount unit whose file mounts `file`
/// while the mount table has `now` at its place: systemd takes the
/// table's values then, so the default ones of the file (when it has
/// them) give way to those of the table, and the table's device is
/// added.
pub fn init_unit_deps(d: &mut Dependencies, file: &MountParams, now: &MountParams) {
    let of_file = mount_deps::default_deps(file, mount_deps::has_option(&file.options, "nofail"));
    let mut of_table = mount_deps::MountDeps::default();
    if d.default_dependencies {
        for (list, gone) in [
            (&mut d.after, &of_file.after),
            (&mut d.before, &of_file.before),
            (&mut d.wants, &of_file.wants),
            (&mut d.conflicts, &of_file.conflicts),
        ] {
            list.retain(|n| !gone.contains(n));
        }
        of_table = mount_deps::default_deps(now, false);
    }
    if let Some((device, blockdev)) = mount_deps::device_deps(now) {
        of_table.requires.push(device.clone());
        of_table.after.push(device);
        of_table.after.extend(blockdev);
    }
    for (list, more) in [
        (&mut d.requires, of_table.requires),
        (&mut d.wants, of_table.wants),
        (&mut d.after, of_table.after),
        (&mut d.before, of_table.before),
        (&mut d.conflicts, of_table.conflicts),
    ] {
        list.extend(more);
        list.sort();
        list.dedup();
    }
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

    /// systemd's test 60: the NFS unit file of /tmp/deptest, its place
    /// mounted by hand with a loop device's ext4: its dependencies are
    /// those of a local mount of that device, not of the remote one its
    /// file says; with `_netdev` remote again.
    #[test]
    fn an_init_mount_units_dependencies_follow_what_is_mounted() {
        let m = |what: &str, fstype: &str, options: &str| MountParams {
            place: "/tmp/deptest".into(),
            what: what.into(),
            fstype: fstype.into(),
            options: options.into(),
        };
        let file = m("192.168.0.1:/tmp/mnt", "nfs", "");
        // As the translator gives the file's unit (its own `After=` too).
        let as_loaded = || Dependencies {
            requires: vec!["-.mount".into(), "tmp.mount".into()],
            wants: vec!["network-online.target".into()],
            after: [
                "-.mount",
                "network-online.target",
                "network.target",
                "remote-fs-pre.target",
                "tmp.mount",
                "own.service",
            ]
            .map(String::from)
            .to_vec(),
            before: vec!["remote-fs.target".into(), "umount.target".into()],
            conflicts: vec!["umount.target".into()],
            default_dependencies: true,
        };
        let mut d = as_loaded();
        init_unit_deps(&mut d, &file, &m("/dev/loop0p1", "ext4", "rw,relatime"));
        assert_eq!(
            d.after,
            [
                "-.mount",
                "blockdev@dev-loop0p1.target",
                "dev-loop0p1.device",
                "local-fs-pre.target",
                "own.service",
                "tmp.mount"
            ]
        );
        assert_eq!(d.requires, ["-.mount", "dev-loop0p1.device", "tmp.mount"]);
        assert!(d.wants.is_empty(), "{:?}", d.wants);
        assert_eq!(d.before, ["local-fs.target", "umount.target"]);
        let mut d = as_loaded();
        init_unit_deps(&mut d, &file, &m("/dev/loop1p1", "ext4", "rw,_netdev"));
        assert!(d.after.contains(&"remote-fs-pre.target".to_string()));
        assert!(d.after.contains(&"network.target".to_string()));
        assert!(!d.after.contains(&"local-fs-pre.target".to_string()));
        assert!(d.after.contains(&"dev-loop1p1.device".to_string()));
        // `DefaultDependencies=no`: the file's own lists stay whole (even
        // names that default ones would have), and the device is added.
        let own = Dependencies {
            default_dependencies: false,
            ..as_loaded()
        };
        let mut d = own.clone();
        init_unit_deps(&mut d, &file, &m("/dev/loop0p1", "ext4", "rw"));
        assert_eq!(d.wants, own.wants);
        assert_eq!(d.before, own.before);
        let mut after = own.after.clone();
        after.extend(["blockdev@dev-loop0p1.target", "dev-loop0p1.device"].map(String::from));
        after.sort();
        assert_eq!(d.after, after);
    }

    #[test]
    fn the_roots_unit_is_perpetual_active_and_mounted() {
        let r = TableMount::in_table(TABLE, ROOT).expect("the root is mounted");
        let root = unit(ROOT, &r);
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
        let m = mount(&r.params, "success");
        assert_eq!(get(&m, "Where"), Value::from("/"));
        assert_eq!(get(&m, "What"), Value::from("/dev/vda1"));
        assert_eq!(get(&m, "Type"), Value::from("ext4"));
        assert_eq!(
            get(&m, "Options"),
            Value::from("rw,relatime,errors=remount-ro")
        );
        let t = TableMount::in_table(TABLE, "tmp.mount").expect("/tmp is mounted");
        let tmp = unit("tmp.mount", &t);
        assert_eq!(get(&tmp, "Description"), Value::from("/tmp"));
        // Below the root's mount, which it requires and follows.
        assert_eq!(t.above, ["-.mount"]);
        assert!(r.above.is_empty());
        assert_eq!(get(&tmp, "Perpetual"), Value::from(false));
    }
}
