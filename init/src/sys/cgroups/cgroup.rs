//! cgroup v2: each unit in a cgroup of its own below the init's, its
//! limits, a stop that reaches every process it made, its memory and CPU.
//!
//! # Where
//!
//! The init's own cgroup is read from `/proc/self/cgroup` (the `0::` line)
//! and the cgroup2 mount from `/proc/self/mountinfo`: as the machine's
//! PID 1 that is the root of the hierarchy, and units go right below it
//! while the init moves into `init.scope` ([`Cgroups::machine_layout`],
//! systemd's layout); in supervisor mode
//! it is whatever subtree the init was started in (delegated to it by its
//! own manager), and units go below that. [`Cgroups::discover`] says why
//! when there is none to use (no cgroup2 mounted, as on a v1-only host, or
//! not writable): the caller then keeps process groups, and says so once.
//!
//! # Controllers and the init's own leaf
//!
//! Limits need their controllers enabled in the parent's
//! `cgroup.subtree_control`, which the kernel refuses while the parent
//! holds processes ("no internal processes"), except at the root. So in
//! supervisor mode, the first time a unit needs a controller, the init
//! moves itself into a leaf of its own, `init.scope` (unit names that
//! could clash are escaped: [`cgroup_name`]). A controller the kernel
//! does not offer there is an error that names the key needing it.
//!
//! # A cgroup killed once is never born into again
//!
//! A stop kills what is left of a unit with one write to `cgroup.kill`.
//! On the kernels this project runs on (6.18 here), every child created
//! *into* a cgroup by `clone3(CLONE_INTO_CGROUP)` after that cgroup was
//! ever killed is itself killed by the kernel at birth, before it can
//! `execve` (the kernel compares the kill count of the parent's cgroup
//! with the target's: they differ for good once the target was killed).
//! A run's cgroup is therefore made afresh at each start: the last run's
//! is removed at its end, or, when its killed processes were still dying
//! then, at the next start ([`Cgroups::create`]); the cgroups the unit
//! made below its own go first. Only if it still holds processes (still
//! dying, or left by `KillMode=process`) is it reused, and then its
//! children are not born in it but join it by writing `cgroup.procs`
//! ([`UnitCgroup::fresh`]), which the kernel lets through: slower for the
//! init (see `clone3.rs`), and rare.
//!
//! # Delegation
//!
//! `Delegate=` gives a unit its cgroup to manage: the controllers it asks
//! for (all the base offers, for `yes`) are enabled for the units, and
//! with `User=` the directory and the files a manager of the cgroups
//! below writes are given to that user. A stop kills and removes the
//! whole subtree, as for any unit.
//!
//! # Cost
//!
//! Everything here is a few small reads and writes of kernfs files (no
//! disk): `mkdir` at a unit's start, one write per limit, `rmdir` once it
//! is empty. The child joins its cgroup by writing `0` to `cgroup.procs`
//! before `execve` (see `spawn/`).

use std::cell::Cell;
use std::ffi::{CStr, CString};
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use flotilla_units::context::devices::DeviceNode;
use flotilla_units::context::resources::{cgroup_name, Delegation, Resources, V2_CONTROLLERS};
use flotilla_units::context::slice::DEFAULT_SLICE;
use flotilla_units::context::Key;

use crate::sys::{mountinfo, slices, Pid, Reached};

/// The leaf the init moves itself into in supervisor mode.
const INIT_LEAF: &str = "init.scope";

/// The OOM kills counted in the init's own cgroup already seen
/// ([`Cgroups::init_oom_kills`]).
static INIT_OOM_SEEN: AtomicU32 = AtomicU32::new(0);

/// The cgroups of the init's units.
#[derive(Debug, Clone)]
pub struct Cgroups {
    /// The directory below which each unit gets its own.
    base: PathBuf,
    /// The base is the root of the hierarchy (PID 1, or a cgroup namespace
    /// root): no internal-process rule.
    at_root: bool,
    /// `cgroup.kill` exists (Linux 5.14).
    has_kill: bool,
}

/// A unit's cgroup.
///
/// Its directory is a C string shared with the unit's prepared context
/// (`context.rs`: the directory a child is born in), one copy for both;
/// the file a child joins through is made from it when a context is
/// prepared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitCgroup {
    dir: Arc<CStr>,
    /// Made by [`Cgroups::create`] for this run, so never killed.
    fresh: bool,
    /// The OOM kills in it already seen (`memory.events`'s `oom_kill`):
    /// those of an earlier run, or reported ([`UnitCgroup::new_oom_kills`]).
    oom_seen: Cell<u32>,
    /// The controllers counted for it in the levels above (`slices.rs`),
    /// given back at its end ([`Cgroups::release`]): a bit per name of
    /// `V2_CONTROLLERS`, one byte that fits in the padding, as every
    /// running unit's run holds this whether it has a cgroup or not
    /// (docs/performance.md, "Memory budget").
    controllers: u8,
}

/// A unit's use of the machine, from its cgroup (`None`: not available,
/// e.g. the controller is not enabled).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CgroupStats {
    /// `memory.current`, bytes.
    pub memory: Option<u64>,
    /// `cpu.stat` `usage_usec`, microseconds.
    pub cpu_usec: Option<u64>,
    /// `pids.current`.
    pub tasks: Option<u64>,
}

/// What percentages of `MemoryMax=`, `MemoryHigh=` and `TasksMax=` are
/// of: the machine's memory in bytes (`MemTotal` of `/proc/meminfo`) and
/// its task limit (the smaller of `kernel.pid_max` and
/// `kernel.threads-max`), as systemd takes them. Read once at start.
pub fn machine() -> (u64, u64) {
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kib| kib.saturating_mul(1024));
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
    };
    let tasks = match (
        read("/proc/sys/kernel/pid_max"),
        read("/proc/sys/kernel/threads-max"),
    ) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b).unwrap_or(0),
    };
    (memory, tasks)
}

/// The directory of the init's own cgroup v2: from the `0::PATH` line of
/// `/proc/self/cgroup` (`cgroup`) and the cgroup2 mount of
/// `/proc/self/mountinfo` (`mountinfo`). `Err` says why there is none.
pub fn own_cgroup_dir(cgroup: &str, mountinfo: &[u8]) -> Result<PathBuf, String> {
    let own = cgroup
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .ok_or("no cgroup v2 hierarchy in /proc/self/cgroup")?;
    let mount = mountinfo::entries(mountinfo)
        .filter(|m| m.fstype == "cgroup2")
        .last()
        .ok_or("no cgroup2 file system is mounted")?;
    // The mount shows the hierarchy from `mount.root` down; the init's
    // path must lie below it.
    let rel = Path::new(own).strip_prefix(&mount.root).map_err(|_| {
        format!(
            "the init's cgroup {own} is outside the cgroup2 mount at {}",
            mount.mount_point.display()
        )
    })?;
    Ok(mount.mount_point.join(rel))
}

impl Cgroups {
    /// The init's own cgroup, if a writable cgroup2 holds it.
    pub fn discover() -> Result<Cgroups, String> {
        let cgroup = std::fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| format!("/proc/self/cgroup: {e}"))?;
        let mi = std::fs::read("/proc/self/mountinfo")
            .map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
        let dir = own_cgroup_dir(&cgroup, &mi)?;
        Cgroups::at(dir)
    }

    /// Units below `base`, which must be a writable cgroup2 directory.
    pub fn at(base: PathBuf) -> Result<Cgroups, String> {
        let procs = base.join("cgroup.procs");
        if !procs.exists() {
            return Err(format!("{} is not a cgroup v2 directory", base.display()));
        }
        let c = CString::new(base.as_os_str().as_bytes()).map_err(|e| e.to_string())?;
        // SAFETY: access(2) with a valid C string.
        if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
            return Err(format!(
                "{} is not writable: {}",
                base.display(),
                std::io::Error::last_os_error()
            ));
        }
        let at_root = !base.join("cgroup.events").exists();
        // The root has no `cgroup.kill` of its own: a child would show it.
        let has_kill = base.join("cgroup.kill").exists() || (at_root && probe_kill(&base));
        Ok(Cgroups {
            base,
            at_root,
            has_kill,
        })
    }

    /// The machine's PID 1, as systemd's: its units below the root of the
    /// hierarchy and the init itself in `/init.scope`, so that what reads
    /// a process's cgroup (journald's `_SYSTEMD_UNIT`, `journalctl -u
    /// init.scope`, `systemd-cgls`) finds the manager's unit. After a
    /// re-exec the init is found there already, and the base is its
    /// parent, the root. A move the kernel refuses leaves the init where
    /// it was, with units below the root as before.
    pub fn machine_layout(self) -> Cgroups {
        let base = match self.base.parent() {
            Some(root)
                if self.base.ends_with(INIT_LEAF) && !root.join("cgroup.events").exists() =>
            {
                root.to_path_buf()
            }
            _ => self.base,
        };
        let c = Cgroups {
            at_root: !base.join("cgroup.events").exists(),
            base,
            has_kill: self.has_kill,
        };
        let _ = c.move_init_to_leaf();
        c
    }

    /// How many processes the kernel's OOM killer killed while they still
    /// used the init's memory, since the last call: `oom_kill` in
    /// `memory.events.local` of the init's own cgroup (its leaf once it
    /// has moved there, else the base). The kernel counts a kill for the
    /// cgroup of the memory's owner, and a child started with `CLONE_VM`
    /// (`sys/procs/spawn/`) uses the init's memory until its `execve` has
    /// replaced it. That `execve` lets the init go on first, so a child
    /// whose start the init has already told can still be killed on the
    /// init's memory if it has not run since (systemd's test 32 kills one
    /// with `echo f > /proc/sysrq-trigger` right after `systemd-run`
    /// returns); its unit's cgroup then counts nothing. The init itself
    /// is never the victim: PID 1 is exempt, and a supervisor killed
    /// reads nothing. 0 without the memory controller.
    pub fn init_oom_kills(&self) -> u32 {
        let leaf = self.base.join(INIT_LEAF);
        let dir = if leaf.is_dir() { &leaf } else { &self.base };
        let text = std::fs::read_to_string(dir.join("memory.events.local")).unwrap_or_default();
        let now = oom_kills(&text);
        // Not `max`: after a move into the leaf its counter starts again.
        now.saturating_sub(INIT_OOM_SEEN.swap(now, Ordering::Relaxed))
    }

    /// The directory units go below.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// Whether a stop can kill a whole cgroup in one write (`cgroup.kill`).
    pub fn has_kill(&self) -> bool {
        self.has_kill
    }

    /// The cgroup of unit `name` in `parent` (not created).
    fn unit(&self, parent: &Path, name: &str) -> UnitCgroup {
        let dir = parent.join(cgroup_name(name));
        UnitCgroup {
            dir: Arc::from(CString::new(dir.into_os_string().into_vec()).unwrap_or_default()),
            fresh: false,
            oom_seen: Cell::new(0),
            controllers: 0,
        }
    }

    /// Creates the cgroup of unit `name` and applies `limits` to it; an
    /// existing one (from an earlier run whose processes were still dying
    /// when it ended) is removed and made again, or reused while it is
    /// busy (the module documentation says why that matters). `owner` is
    /// the unit's user and group, who own a delegated cgroup. `memory`
    /// and `tasks` are the machine's memory in bytes and task limit, for
    /// percentages. The error names the key that could not be honoured.
    pub fn create(
        &self,
        name: &str,
        limits: &Resources,
        owner: Option<(u32, u32)>,
        memory: u64,
        tasks: u64,
    ) -> Result<UnitCgroup, (Option<Key>, String)> {
        let slice = limits.slice.as_deref().unwrap_or(DEFAULT_SLICE);
        let levels = slices::levels(&self.base, slice);
        let mut controllers = 0u8;
        let enabled = self.enable_along(&levels, slice, limits, &mut controllers);
        let parent = levels.last().unwrap_or(&self.base);
        let mut cg = self.unit(parent, name);
        cg.controllers = controllers;
        if let Err(e) = enabled {
            self.release(&cg);
            return Err(e);
        }
        // The slices' directories are made when the unit's cannot be made
        // without them (or by `enable_along`): most starts find them
        // there, and make one directory.
        let made = match std::fs::create_dir(cg.dir()) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                slices::make(&levels, slice).map_err(|e| (Some(Key::Slice), e))?;
                std::fs::create_dir(cg.dir())
            }
            made => made,
        };
        let made = match made {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                // From an earlier run: made afresh, or reused if busy.
                remove_below(cg.dir());
                std::fs::remove_dir(cg.dir()).and_then(|()| std::fs::create_dir(cg.dir()))
            }
            made => made,
        };
        cg.fresh = match made {
            Ok(()) => true,
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                // Reused from an earlier run (or the init's before a
                // re-exec): it keeps its counter, and only kills after
                // now are news. A cgroup made now counts from 0.
                cg.new_oom_kills();
                false
            }
            Err(e) => return Err((None, format!("create cgroup {}: {e}", cg.dir().display()))),
        };
        for (file, value, key) in limits.cgroup_files(memory, tasks) {
            let k = Key::from_systemd(key);
            write_file(&cg.dir().join(file), value.as_bytes()).map_err(|e| {
                (
                    k,
                    format!("write {value} to {}: {e}", cg.dir().join(file).display()),
                )
            })?;
        }
        if let Some(allow) = limits.devices.filter() {
            // A reused cgroup keeps its earlier program too: both must
            // allow an access.
            let groups = allow
                .iter()
                .any(|a| matches!(a.node, DeviceNode::Group { .. }));
            let table = if groups {
                std::fs::read_to_string("/proc/devices").unwrap_or_default()
            } else {
                String::new()
            };
            let rules = crate::sys::devices::resolve(&allow, &table);
            crate::sys::devices::apply(cg.dir(), &rules)
                .map_err(|e| (Some(Key::DeviceAllow), e))?;
        }
        crate::sys::ipfilter::apply(cg.dir(), &limits.ip_access)
            .map_err(|e| (Some(Key::IpAddressDeny), e))?;
        if let (Some(_), Some((uid, gid))) = (&limits.delegate, owner) {
            delegate_to(cg.dir(), uid, gid).map_err(|e| (Some(Key::Delegate), e))?;
        }
        Ok(cg)
    }

    /// Enables in each of `levels` (the base, then the slices' down to
    /// the unit's parent) the controllers `limits` need, every one a level
    /// offers for `Delegate=yes`; each of `V2_CONTROLLERS` is counted (its
    /// bit in `counted`, and in `slices.rs` once per level), whether the
    /// init turned it on there or found it on: a controller the kernel has
    /// and this list has not is enabled and never turned off. The slices'
    /// directories (of `slice`) are made first when there is anything to
    /// enable.
    fn enable_along(
        &self,
        levels: &[PathBuf],
        slice: &str,
        limits: &Resources,
        counted: &mut u8,
    ) -> Result<(), (Option<Key>, String)> {
        let wanted = limits.controllers();
        let all = limits.delegate == Some(Delegation::All);
        if wanted.is_empty() && !all {
            return Ok(());
        }
        slices::make(levels, slice).map_err(|e| (Some(Key::Slice), e))?;
        for level in levels {
            let mut here: Vec<(String, &str)> =
                wanted.iter().map(|&(c, k)| (c.to_string(), k)).collect();
            if all {
                let offered =
                    std::fs::read_to_string(level.join("cgroup.controllers")).unwrap_or_default();
                for c in offered.split_whitespace() {
                    if !here.iter().any(|(h, _)| h == c) {
                        here.push((c.to_string(), "Delegate"));
                    }
                }
            }
            for (ctl, key) in &here {
                let turned_on = match self.enable(level, ctl, key) {
                    Ok(on) => on,
                    // Counting is no limit: where its controller is not to
                    // be had, the unit runs uncounted, as under systemd.
                    Err(_) if key.ends_with("Accounting") => continue,
                    Err(e) => return Err(e),
                };
                if let Some(bit) = V2_CONTROLLERS.iter().position(|c| c == ctl) {
                    slices::count(level, ctl, turned_on);
                    *counted |= 1 << bit;
                }
            }
        }
        Ok(())
    }

    /// Enables controller `ctl` (which `key` needs) in `level`'s
    /// `cgroup.subtree_control`, moving the init into its own leaf first
    /// where the kernel asks for it (the base, in supervisor mode).
    /// Whether it was off before.
    fn enable(&self, level: &Path, ctl: &str, key: &str) -> Result<bool, (Option<Key>, String)> {
        let k = Key::from_systemd(key);
        let enabled =
            std::fs::read_to_string(level.join("cgroup.subtree_control")).unwrap_or_default();
        if enabled.split_whitespace().any(|c| c == ctl) {
            return Ok(false);
        }
        let available =
            std::fs::read_to_string(level.join("cgroup.controllers")).unwrap_or_default();
        if !available.split_whitespace().any(|c| c == ctl) {
            return Err((
                k,
                format!(
                "needs the cgroup {ctl} controller, which is not available in {} (available: {})",
                level.display(),
                if available.trim().is_empty() { "none" } else { available.trim() }
            ),
            ));
        }
        let plus = format!("+{ctl}");
        let mut r = write_control(level, &plus);
        if matches!(&r, Err(e) if e.raw_os_error() == Some(libc::EBUSY))
            && !self.at_root
            && level == self.base
        {
            self.move_init_to_leaf().map_err(|e| (k, e))?;
            r = write_control(level, &plus);
        }
        r.map_err(|e| {
            (
                k,
                format!(
                    "enable the cgroup {ctl} controller in {}: {e}",
                    level.display()
                ),
            )
        })?;
        Ok(true)
    }

    /// A unit's cgroup is gone (or going): the slices above it are
    /// tidied (`slices.rs`).
    pub fn release(&self, cg: &UnitCgroup) {
        let counted: Vec<&str> = V2_CONTROLLERS
            .iter()
            .enumerate()
            .filter(|(i, _)| cg.controllers & (1 << i) != 0)
            .map(|(_, c)| *c)
            .collect();
        slices::release(&self.base, cg.dir(), &counted);
    }

    /// Moves the init (every process of the base, which in supervisor
    /// mode is the init alone) into `init.scope`.
    fn move_init_to_leaf(&self) -> Result<(), String> {
        let leaf = self.base.join(INIT_LEAF);
        match std::fs::create_dir(&leaf) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("create {}: {e}", leaf.display())),
        }
        let me = std::process::id().to_string();
        write_file(&leaf.join("cgroup.procs"), me.as_bytes())
            .map_err(|e| format!("move the init into {}: {e}", leaf.display()))
    }
}

/// The files of a cgroup its owner needs to manage the cgroups below it
/// (the kernel's `cgroup-v2.rst`, "Delegation Containment"): making
/// cgroups in it, moving its processes between them, and enabling
/// controllers for them.
const DELEGATED_FILES: [&str; 3] = ["cgroup.procs", "cgroup.threads", "cgroup.subtree_control"];

/// The `oom_kill` counter of a `memory.events` file's text (0 when it
/// has none).
fn oom_kills(events: &str) -> u32 {
    events
        .lines()
        .find_map(|l| l.strip_prefix("oom_kill "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Gives the cgroup `dir` to `uid`/`gid`: the directory and
/// [`DELEGATED_FILES`].
fn delegate_to(dir: &Path, uid: u32, gid: u32) -> Result<(), String> {
    let files =
        std::iter::once(dir.to_path_buf()).chain(DELEGATED_FILES.iter().map(|f| dir.join(f)));
    for f in files {
        std::os::unix::fs::chown(&f, Some(uid), Some(gid))
            .map_err(|e| format!("give {} to {uid}:{gid}: {e}", f.display()))?;
    }
    Ok(())
}

/// Removes the cgroups below `dir`, deepest first (each must be empty; a
/// busy one stays, and so do those above it).
fn remove_below(dir: &Path) {
    if let Ok(list) = std::fs::read_dir(dir) {
        for e in list.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                remove_tree(&e.path());
            }
        }
    }
}

/// Removes a cgroup and the cgroups below it (each must be empty).
pub fn remove_tree(dir: &Path) {
    remove_below(dir);
    let _ = std::fs::remove_dir(dir);
}

/// Whether the kernel has `cgroup.kill`: a child cgroup would show it.
fn probe_kill(base: &Path) -> bool {
    let probe = base.join(format!("flotilla-probe-{}", std::process::id()));
    let has = std::fs::create_dir(&probe).is_ok() && probe.join("cgroup.kill").exists();
    let _ = std::fs::remove_dir(&probe);
    has
}

/// Writes `change` (`+io`, `-io`) to `level`'s `cgroup.subtree_control`.
pub(in crate::sys) fn write_control(level: &Path, change: &str) -> std::io::Result<()> {
    write_file(&level.join("cgroup.subtree_control"), change.as_bytes())
}

fn write_file(path: &Path, data: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
    f.write_all(data)
}

impl UnitCgroup {
    /// The cgroup's directory.
    pub fn dir(&self) -> &Path {
        Path::new(std::ffi::OsStr::from_bytes(self.dir.to_bytes()))
    }

    /// The cgroup's directory, shared (for `CLONE_INTO_CGROUP`).
    pub(crate) fn dir_c(&self) -> Arc<CStr> {
        Arc::clone(&self.dir)
    }

    /// Whether this run made it, so that its children can be born in it
    /// (`CLONE_INTO_CGROUP`); one reused from an earlier run may have been
    /// killed, and its children join it instead (module documentation).
    pub fn fresh(&self) -> bool {
        self.fresh
    }

    /// Its `cgroup.procs`, for the child to join.
    pub(crate) fn procs_path(&self) -> CString {
        let mut path = self.dir.to_bytes().to_vec();
        path.extend_from_slice(b"/cgroup.procs");
        CString::new(path).unwrap_or_default()
    }

    /// The processes in it.
    pub fn pids(&self) -> Vec<Pid> {
        std::fs::read_to_string(self.dir().join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// The processes in it and in the cgroups below it: those a delegated
    /// unit's own manager made, and those `AttachProcessesToUnit` moved a
    /// process into (`attach.rs`). A stop's signal reaches them all, as
    /// systemd signals a unit's cgroup recursively. A unit without
    /// cgroups below its own costs one more directory read.
    fn subtree_pids(&self) -> Vec<Pid> {
        let mut pids = Vec::new();
        let mut dirs = vec![self.dir().to_path_buf()];
        while let Some(dir) = dirs.pop() {
            let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
            pids.extend(procs.lines().filter_map(|l| l.trim().parse::<Pid>().ok()));
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    dirs.push(e.path());
                }
            }
        }
        pids
    }

    /// Moves process `pid` (someone else's: a scope's) into it.
    pub fn join(&self, pid: Pid) -> std::io::Result<()> {
        write_file(&self.dir().join("cgroup.procs"), pid.to_string().as_bytes())
    }

    /// Its `cgroup.events`, which the kernel modifies when `populated`
    /// changes.
    pub fn events_path(&self) -> PathBuf {
        self.dir().join("cgroup.events")
    }

    /// Whether any process is in it or below it (`cgroup.events`).
    pub fn populated(&self) -> bool {
        std::fs::read_to_string(self.dir().join("cgroup.events"))
            .map(|t| t.lines().any(|l| l == "populated 1"))
            .unwrap_or(false)
    }

    /// Sends `signal` to every process in it; returns how many got it.
    pub fn signal(&self, signal: i32) -> usize {
        self.signal_but(signal, Reached::default())
    }

    /// Sends `signal` to every process in it or below it that `reached` has not
    /// reached already; returns how many got it. A process is signalled
    /// once: a daemon may take a second `SIGTERM` (or `SIGINT`) as "stop
    /// now".
    pub fn signal_but(&self, signal: i32, reached: Reached) -> usize {
        self.subtree_pids()
            .into_iter()
            .filter(|&p| !reached.covers(p))
            // SAFETY: kill(2) takes no pointers.
            .filter(|&p| unsafe { libc::kill(p, signal) } == 0)
            .count()
    }

    /// Kills every process in it and below it: one write to `cgroup.kill`
    /// where the kernel has it; otherwise the cgroup is frozen (so that
    /// nothing forks meanwhile), each process gets `SIGKILL`, and it is
    /// thawed again.
    pub fn kill(&self) -> Result<(), String> {
        let kill = self.dir().join("cgroup.kill");
        if kill.exists() {
            return write_file(&kill, b"1")
                .map_err(|e| format!("write 1 to {}: {e}", kill.display()));
        }
        let freeze = self.dir().join("cgroup.freeze");
        let frozen = write_file(&freeze, b"1").is_ok();
        self.signal(libc::SIGKILL);
        if frozen {
            let _ = write_file(&freeze, b"0");
        }
        Ok(())
    }

    /// Makes the kernel's OOM killer take every process of it at once
    /// (`memory.oom.group`: `OOMPolicy=kill`).
    pub fn set_oom_group(&self) -> std::io::Result<()> {
        write_file(&self.dir().join("memory.oom.group"), b"1")
    }

    /// How many processes of it the kernel's OOM killer killed since the
    /// last call (since the run began, at the first): `memory.events`'s
    /// `oom_kill`, which counts the cgroups below it too. 0 without the
    /// memory controller. Read when one of the unit's processes is reaped
    /// killed by `SIGKILL`, as systemd reads it before it handles such an
    /// exit: no watch, no polling.
    pub fn new_oom_kills(&self) -> u32 {
        let text = std::fs::read_to_string(self.dir().join("memory.events")).unwrap_or_default();
        let now = oom_kills(&text);
        let seen = self.oom_seen.replace(now.max(self.oom_seen.get()));
        now.saturating_sub(seen)
    }

    /// Memory, CPU time and task count.
    pub fn stats(&self) -> CgroupStats {
        let read_u64 = |f: &str| {
            std::fs::read_to_string(self.dir().join(f))
                .ok()
                .and_then(|t| t.trim().parse().ok())
        };
        let cpu_usec = std::fs::read_to_string(self.dir().join("cpu.stat"))
            .ok()
            .and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("usage_usec "))
                    .and_then(|v| v.trim().parse().ok())
            });
        CgroupStats {
            memory: read_u64("memory.current"),
            cpu_usec,
            tasks: read_u64("pids.current"),
        }
    }

    /// Removes it and the cgroups the unit made below it (a delegated
    /// unit's, or a root service's own); they must be empty (`EBUSY`
    /// otherwise). A missing one is fine.
    pub fn remove(&self) -> Result<(), String> {
        remove_below(self.dir());
        match std::fs::remove_dir(self.dir()) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("remove cgroup {}: {e}", self.dir().display())),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
