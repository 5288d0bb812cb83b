//! A `.mount` unit: its `[Mount]` keys read into a oneshot that runs
//! `mount(8)` to start and `umount(8)` to stop, as systemd runs them (in a
//! unit process, never in the init itself), with systemd's implicit and
//! default dependencies (systemd.mount(5)).

use super::*;
use crate::mount_deps::{self, has_option};
use flotilla_units::escape::name_from_path;
use flotilla_units::spec::{MountParams, Names};

/// Where systemd finds the two programs (`MOUNT_PATH`, `UMOUNT_PATH`).
const MOUNT: &str = "/bin/mount";
const UMOUNT: &str = "/bin/umount";

/// The `[Mount]` keys of one unit, as read (the last assignment wins).
#[derive(Default)]
pub(super) struct MountKeys {
    what: Option<String>,
    where_: Option<(String, Pos)>,
    fstype: Option<String>,
    options: Option<String>,
    sloppy: bool,
    lazy: bool,
    force: bool,
    directory_mode: Option<u32>,
    timeout: Option<Duration>,
}

/// A `[Mount]` key's reader: the mount's keys so far, the translator, the
/// key's position, its name and its value (an empty value resets the key).
pub(super) type Read = fn(&mut MountKeys, &mut Tr<'_>, Pos, &str, &str);

/// The reader of a `[Mount]` key flotilla supports.
pub(super) fn read_of(key: &str) -> Option<Read> {
    READ.iter().find(|(k, _)| *k == key).map(|&(_, read)| read)
}

/// The `[Mount]` keys, each with its reader.
const READ: [(&str, Read); 9] = [
    ("What", |m, _, _, _, v| m.what = text(v)),
    ("Where", |m, _, p, _, v| m.where_ = text(v).map(|w| (w, p))),
    ("Type", |m, _, _, _, v| m.fstype = text(v)),
    ("Options", |m, _, _, _, v| m.options = text(v)),
    ("SloppyOptions", |m, t, p, key, v| {
        m.sloppy = flag(t, p, key, v)
    }),
    ("LazyUnmount", |m, t, p, key, v| m.lazy = flag(t, p, key, v)),
    ("ForceUnmount", |m, t, p, key, v| {
        m.force = flag(t, p, key, v)
    }),
    ("DirectoryMode", directory_mode),
    ("TimeoutSec", timeout_sec),
];

fn text(v: &str) -> Option<String> {
    (!v.is_empty()).then(|| v.to_string())
}

fn flag(t: &mut Tr<'_>, p: Pos, key: &str, v: &str) -> bool {
    match v {
        "" => false,
        _ => sd_bool(v).unwrap_or_else(|| {
            t.error(p, format!("invalid {key}={v}: not a boolean"));
            false
        }),
    }
}

fn directory_mode(m: &mut MountKeys, t: &mut Tr<'_>, p: Pos, _: &str, v: &str) {
    m.directory_mode = None;
    if !v.is_empty() {
        match u32::from_str_radix(v, 8) {
            Ok(mode) if mode <= 0o7777 => m.directory_mode = Some(mode),
            _ => t.error(p, format!("invalid DirectoryMode={v}: not an octal mode")),
        }
    }
}

fn timeout_sec(m: &mut MountKeys, t: &mut Tr<'_>, p: Pos, _: &str, v: &str) {
    m.timeout = None;
    if !v.is_empty() {
        match timeout(v) {
            Ok(d) => m.timeout = Some(d),
            Err(e) => t.error(p, format!("invalid TimeoutSec={v}: {e}")),
        }
    }
}

/// The mount unit names of `path` and of each directory above it, `/`
/// (`-.mount`) first: what `RequiresMountsFor=PATH` pulls in. A path that
/// cannot be escaped (a `..` in it) gives none; a name with an escape in
/// it (`/a-b`: `a\x2db.mount`) is a name as any other.
pub fn mounts_for(path: &str) -> Vec<String> {
    let mut out = vec!["-.mount".to_string()];
    let mut prefix = String::new();
    for part in path.split('/').filter(|p| !p.is_empty() && *p != ".") {
        prefix.push('/');
        prefix.push_str(part);
        match name_from_path(&prefix, "mount") {
            Ok(n) => out.push(n),
            Err(_) => return Vec::new(),
        }
    }
    out.retain(|n| valid_systemd_name(n));
    out
}

impl MountKeys {
    /// Makes `spec` the mount: the commands, the timeouts, the start
    /// skipped when the path is a mount point already (systemd reads
    /// /proc/self/mountinfo and counts such a unit active), the mount
    /// units above `Where=` (required and ordered before it, always), and
    /// with `default_deps` systemd's default dependencies.
    pub(super) fn finish(self, t: &mut Tr<'_>, spec: &mut UnitSpec, default_deps: bool) {
        // Without `Where=`, the place the unit's name says (as systemd's
        // `mount_add_extras` takes it).
        let named = || {
            let stem = t.unit.strip_suffix(".mount")?;
            flotilla_units::escape::unescape_path(stem).ok()
        };
        let Some((place, at)) = self.where_.or_else(|| named().map(|p| (p, Pos::default()))) else {
            t.error(Pos::default(), "[Mount] has no Where=");
            return;
        };
        if !place.starts_with('/') {
            t.error(at, format!("Where= needs an absolute path, not {place:?}"));
            return;
        }
        match name_from_path(&place, "mount") {
            Ok(n) if n == t.unit => {}
            Ok(n) => {
                t.error(
                    at,
                    format!(
                        "Where={place} does not match the unit's name {}: its mount unit is {n}",
                        t.unit
                    ),
                );
                return;
            }
            Err(e) => {
                t.error(at, format!("invalid Where={place}: {e}"));
                return;
            }
        }
        let Some(what) = self.what else {
            t.error(Pos::default(), "[Mount] has no What=");
            return;
        };
        let mut argv = vec![MOUNT.to_string()];
        if self.sloppy {
            argv.push("-s".into());
        }
        if let Some(ty) = &self.fstype {
            argv.extend(["-t".to_string(), ty.clone()]);
        }
        // systemd makes the directory (DirectoryMode=, 0755 by default)
        // before it mounts; mount(8) does it for X-mount.mkdir, which it
        // does not hand to the kernel.
        let mode = self.directory_mode.unwrap_or(0o755);
        let mut options = format!("X-mount.mkdir={mode:04o}");
        if let Some(o) = &self.options {
            options = format!("{o},{options}");
        }
        argv.extend(["-o".to_string(), options, what.clone(), place.clone()]);
        spec.exec_start = Some(Command::new(argv));
        let mut umount = vec![UMOUNT.to_string()];
        if self.lazy {
            umount.push("-l".into());
        }
        if self.force {
            umount.push("-f".into());
        }
        umount.push(place.clone());
        spec.exec_stop = Some(Command::new(umount));
        spec.remain_after_exit = Some(true);
        // systemd's mount: one timeout, the manager's start default
        // when the unit sets none.
        let limit = self.timeout.unwrap_or_else(|| t.default_start());
        spec.start_timeout = limit;
        spec.stop_timeout = limit;
        match flotilla_units::condition::parse_value(
            "PathIsMountPoint",
            false,
            &format!("!{place}"),
        ) {
            Ok(Some(c)) => spec.extras.conditions.push(c),
            Ok(None) => {}
            Err(why) => t.error(at, format!("invalid Where={place}: {why}")),
        }
        // The mount units above it: systemd requires and orders after the
        // ones that exist; one with no unit file counts as met (the graph).
        let mut above = mounts_for(&place);
        above.pop();
        for m in above {
            spec.pull(&m, true, true);
        }
        let params = MountParams {
            place,
            what,
            fstype: self.fstype.unwrap_or_default(),
            options: self.options.unwrap_or_default(),
        };
        if default_deps {
            let d = mount_deps::default_deps(&params, has_option(&params.options, "nofail"));
            let add = |list: &mut Names, names: &[String]| {
                for name in names {
                    if !list.contains(name) {
                        list.push(name.clone());
                    }
                }
            };
            // What it wants it is ordered after too: pulled in ordered
            // (`waits-for`), not listed twice.
            let after: Vec<String> = d
                .after
                .into_iter()
                .filter(|n| !d.wants.contains(n))
                .collect();
            add(&mut spec.after, &after);
            add(&mut spec.before, &d.before);
            add(&mut spec.conflicts, &d.conflicts);
            for w in &d.wants {
                spec.pull(w, false, true);
            }
        }
        spec.extras.mount = Some(Box::new(params));
    }
}

#[cfg(test)]
#[path = "mount_tests.rs"]
mod tests;
