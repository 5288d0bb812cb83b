//! Parsing `/proc/self/mountinfo` (see `proc_pid_mountinfo(5)`): for the
//! init, which of `/proc`, `/sys`, `/dev`, … PID 1 still has to mount,
//! and what to unmount at shutdown; for the bus side, the mount units of
//! the mount points no unit file made (`bus/src/mounted.rs`). Pure: the
//! text comes in as bytes.
//!
//! A line reads
//! `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue`:
//! mount ID, parent ID, `major:minor`, root, mount point, mount options,
//! optional fields ended by `-`, file system type, source, super options.
//! Paths escape space, tab, newline and backslash as `\040`, `\011`,
//! `\012` and `\134`.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// One mount, as a line of `/proc/self/mountinfo` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    /// The mount's unique ID.
    pub id: u32,
    /// The parent mount's ID.
    pub parent_id: u32,
    /// The directory of the file system mounted here (`/` usually).
    pub root: PathBuf,
    /// Where it is mounted, relative to the process's root.
    pub mount_point: PathBuf,
    /// Per-mount options (`rw,nosuid,…`).
    pub options: String,
    /// The file system type (`proc`, `ext4`, …).
    pub fstype: String,
    /// The source (`/dev/sda1`, `proc`, …).
    pub source: String,
    /// The file system's own options (`rw,errors=remount-ro`).
    pub super_options: String,
}

/// Every well-formed line of `text`, in order (a mount listed later is
/// mounted on top of earlier ones). Malformed lines are skipped.
pub fn entries(text: &[u8]) -> impl Iterator<Item = MountEntry> + '_ {
    text.split(|&c| c == b'\n').filter_map(parse_line)
}

/// Whether some mount's mount point is exactly `path` (compared byte for
/// byte after unescaping: pass a normalised absolute path).
pub fn is_mount_point(text: &[u8], path: &Path) -> bool {
    let want = path.as_os_str().as_bytes();
    text.split(|&c| c == b'\n').any(|line| {
        let mut fields = line.split(|&c| c == b' ');
        fields.nth(4).is_some_and(|mp| unescape_eq(mp, want)) && parse_line(line).is_some()
    })
}

/// The API file systems' mount points, which systemd keeps no unit for
/// (its `mount_point_is_api`): those PID 1 mounts itself before any unit
/// runs. Below `/sys/fs/cgroup/` every mount is one of them.
const API: [&str; 12] = [
    "/proc",
    "/sys",
    "/dev",
    "/sys/kernel/security",
    "/sys/fs/smackfs",
    "/dev/shm",
    "/dev/pts",
    "/run",
    "/sys/fs/cgroup",
    "/sys/fs/pstore",
    "/sys/firmware/efi/efivars",
    "/sys/fs/bpf",
];

/// Mount points other software puts in place that systemd ignores too
/// (its `mount_point_ignore`): SELinux's, and a container manager's bind
/// mounts.
const IGNORED: [&str; 5] = [
    "/sys/fs/selinux",
    "/dev/console",
    "/proc/kmsg",
    "/proc/sys",
    "/proc/sys/kernel/random/boot_id",
];

/// Whether systemd has a `.mount` unit for a mount at `path`: every mount
/// point but the API file systems' and the ignored ones (`/run/host/…`, a
/// container manager's, among them).
pub fn has_unit(path: &Path) -> bool {
    !(API
        .iter()
        .chain(IGNORED.iter())
        .any(|p| path == Path::new(p))
        || path.starts_with("/sys/fs/cgroup")
        || path.starts_with("/run/host"))
}

/// Whether systemd has a `.mount` unit for the mount `e`: [`has_unit`] of
/// its place, and not an autofs (an automount point's own mount).
pub fn entry_has_unit(e: &MountEntry) -> bool {
    e.fstype != "autofs" && has_unit(&e.mount_point)
}

/// One line; `None` when it is malformed.
pub fn parse_line(line: &[u8]) -> Option<MountEntry> {
    let mut fields = line.split(|&c| c == b' ').filter(|f| !f.is_empty());
    let id = number(fields.next()?)?;
    let parent_id = number(fields.next()?)?;
    let _dev = fields.next()?;
    let root = unescape_bytes(fields.next()?);
    let mount_point = unescape_bytes(fields.next()?);
    let options = text(fields.next()?);
    // Optional fields up to the separator.
    loop {
        if fields.next()? == b"-" {
            break;
        }
    }
    let fstype = text(fields.next()?);
    let source = String::from_utf8_lossy(&unescape_bytes(fields.next()?)).into_owned();
    let super_options = fields.next().map(text).unwrap_or_default();
    Some(MountEntry {
        id,
        parent_id,
        root: PathBuf::from(OsString::from_vec(root)),
        mount_point: PathBuf::from(OsString::from_vec(mount_point)),
        options,
        fstype,
        source,
        super_options,
    })
}

fn number(field: &[u8]) -> Option<u32> {
    std::str::from_utf8(field).ok()?.parse().ok()
}

fn text(field: &[u8]) -> String {
    String::from_utf8_lossy(field).into_owned()
}

/// Decodes `\NNN` octal escapes; anything else is kept as is.
fn unescape_bytes(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while let Some(&c) = field.get(i) {
        if c == b'\\' {
            if let Some(v) = field.get(i + 1..i + 4).and_then(octal) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

fn octal(digits: &[u8]) -> Option<u8> {
    let mut v: u32 = 0;
    for &d in digits {
        if !(b'0'..=b'7').contains(&d) {
            return None;
        }
        v = v * 8 + u32::from(d - b'0');
    }
    u8::try_from(v).ok()
}

/// `unescape_bytes(field) == want` without allocating when there is no
/// escape (the common case).
/// The options mount(8) keeps for itself in `/run/mount/utab` (libmount's
/// userspace options: `_netdev`, `x-…`, `nofail`, which the kernel never
/// sees) for the mount at `mount_point` of the file system's `root`, as
/// libmount merges them into the table systemd reads. A utab line reads
/// `SRC=tmpfs TARGET=/tmp/x ROOT=/ OPTS=_netdev`, escaped as the mount
/// table is; the last line for the place wins.
pub fn utab_options(utab: &[u8], mount_point: &Path, root: &Path) -> Option<String> {
    let want_place = mount_point.as_os_str().as_bytes();
    let want_root = root.as_os_str().as_bytes();
    utab.split(|&c| c == b'\n').rev().find_map(|line| {
        let (mut place, mut at, mut opts) = (None, None, None);
        for field in line.split(|&c| c == b' ') {
            if let Some(v) = field.strip_prefix(b"TARGET=") {
                place = Some(v);
            } else if let Some(v) = field.strip_prefix(b"ROOT=") {
                at = Some(v);
            } else if let Some(v) = field.strip_prefix(b"OPTS=") {
                opts = Some(v);
            }
        }
        let same_root = at.map_or(want_root == b"/", |r| unescape_eq(r, want_root));
        (place.is_some_and(|p| unescape_eq(p, want_place)) && same_root)
            .then(|| opts.map(|o| text(&unescape_bytes(o))).unwrap_or_default())
    })
}

fn unescape_eq(field: &[u8], want: &[u8]) -> bool {
    if field.contains(&b'\\') {
        unescape_bytes(field) == want
    } else {
        field == want
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::*;

    /// mount(8)'s own options are found by place and root; a place that
    /// is a prefix, or another root, is not the mount's.
    #[test]
    fn utab_options_by_place_and_root() {
        let utab = b"SRC=tmpfs TARGET=/tmp/nd ROOT=/ OPTS=_netdev\n\
SRC=/dev/sdb1 TARGET=/srv/my\\040data ROOT=/ OPTS=x-foo,nofail\n\
SRC=/dev/sdb1 TARGET=/srv/b ROOT=/sub OPTS=x-bind\n";
        let opts = |place: &str, root: &str| utab_options(utab, Path::new(place), Path::new(root));
        assert_eq!(opts("/tmp/nd", "/").as_deref(), Some("_netdev"));
        assert_eq!(opts("/srv/my data", "/").as_deref(), Some("x-foo,nofail"));
        assert_eq!(opts("/srv/b", "/sub").as_deref(), Some("x-bind"));
        assert_eq!(opts("/srv/b", "/"), None);
        assert_eq!(opts("/tmp", "/"), None);
        assert_eq!(
            utab_options(b"", Path::new("/tmp/nd"), Path::new("/")),
            None
        );
    }

    const SAMPLE: &str = "\
22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
23 1 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw
24 1 0:5 / /dev rw,nosuid shared:8 master:3 - devtmpfs udev rw,size=10240k,nr_inodes=1000,mode=755
25 24 0:23 / /dev/pts rw,nosuid,noexec,relatime - devpts devpts rw,gid=5,mode=620,ptmxmode=000
36 1 8:1 /home/a\\040b /mnt/with\\040space rw - ext4 /dev/sda1 rw
garbage line
";

    #[test]
    fn parses_every_field() {
        let all: Vec<_> = entries(SAMPLE.as_bytes()).collect();
        assert_eq!(all.len(), 5);
        let dev = all.get(2).unwrap();
        assert_eq!(dev.id, 24);
        assert_eq!(dev.parent_id, 1);
        assert_eq!(dev.mount_point, Path::new("/dev"));
        assert_eq!(dev.fstype, "devtmpfs");
        assert_eq!(dev.source, "udev");
        assert_eq!(dev.options, "rw,nosuid");
        assert_eq!(dev.super_options, "rw,size=10240k,nr_inodes=1000,mode=755");
        let pts = all.get(3).unwrap();
        assert_eq!(pts.fstype, "devpts");
    }

    #[test]
    fn unescapes_paths() {
        let e = entries(SAMPLE.as_bytes()).last().unwrap();
        assert_eq!(e.root, Path::new("/home/a b"));
        assert_eq!(e.mount_point, Path::new("/mnt/with space"));
        assert_eq!(unescape_bytes(b"a\\134b\\011c\\012"), b"a\\b\tc\n");
        // An incomplete or non-octal escape is kept.
        assert_eq!(unescape_bytes(b"x\\09y\\1"), b"x\\09y\\1");
    }

    #[test]
    fn mount_points() {
        let t = SAMPLE.as_bytes();
        assert!(is_mount_point(t, Path::new("/proc")));
        assert!(is_mount_point(t, Path::new("/dev/pts")));
        assert!(is_mount_point(t, Path::new("/mnt/with space")));
        assert!(!is_mount_point(t, Path::new("/run")));
        assert!(!is_mount_point(t, Path::new("/dev/shm")));
        assert!(!is_mount_point(t, Path::new("line")));
    }

    #[test]
    fn malformed_lines_are_skipped() {
        for bad in [
            "",
            "1 2 3",
            "a 1 0:1 / /x rw - t s o",
            "1 1 0:1 / /x rw shared:1",
            "1 1 0:1 / /x rw -",
        ] {
            assert_eq!(parse_line(bad.as_bytes()), None, "{bad:?}");
        }
    }

    #[test]
    fn reads_this_process_mountinfo() {
        let text = std::fs::read("/proc/self/mountinfo").unwrap();
        assert!(is_mount_point(&text, Path::new("/proc")) || entries(&text).count() > 0);
        assert!(entries(&text).any(|e| e.mount_point == Path::new("/")));
    }

    #[test]
    fn systemd_keeps_no_unit_for_the_api_file_systems() {
        for (path, unit) in [
            ("/", true),
            ("/proc", false),
            ("/proc/sys/fs/binfmt_misc", true),
            ("/sys", false),
            ("/sys/kernel/debug", true),
            ("/sys/kernel/security", false),
            ("/sys/fs/cgroup", false),
            ("/sys/fs/cgroup/unified", false),
            ("/sys/fs/cgroupx", true),
            ("/dev", false),
            ("/dev/mqueue", true),
            ("/dev/pts", false),
            ("/run", false),
            ("/run/user/0", true),
            ("/run/host/incoming", false),
            ("/run/hostx", true),
            ("/dev/console", false),
            ("/proc/sys", false),
        ] {
            assert_eq!(has_unit(Path::new(path)), unit, "{path}");
        }
    }

    proptest::proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            let _ = entries(&bytes).count();
            let _ = is_mount_point(&bytes, Path::new("/x"));
        }
    }
}
