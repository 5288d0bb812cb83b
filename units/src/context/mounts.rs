//! The mount namespace a sandbox asks for, as a plan: which paths become
//! read-only, which are covered, which keep what they were, which get a
//! private tmpfs or `/dev`. The executor carries it out in the child, in
//! order; the rules of systemd's `namespace.c` tables are here.
//!
//! # How a plan is carried out
//!
//! Entries are sorted by path, parents first, so a deeper entry always
//! wins over the one above it (`ReadWritePaths=/var/lib/foo` under
//! `ProtectSystem=strict`, `ReadOnlyPaths=/var/lib/foo/conf` under that).
//! A [`MountKind::Keep`] entry is a copy of the path's mounts taken before
//! anything changed (`open_tree(OPEN_TREE_CLONE)`), put back on top: the
//! path is exactly as it was, writable where it was writable and no more,
//! whatever its parents became.
//!
//! One path named by two entries keeps the more restrictive one:
//! inaccessible, then replaced (tmpfs, bind, private `/dev`), then
//! read-only, then kept.
//!
//! Whether a path may be executed is a matter of its own: the
//! [`MountKind::NoExec`] and [`MountKind::Exec`] entries of
//! `NoExecPaths=` and `ExecPaths=` come after all the others (sorted
//! likewise, parents first; a path in both lists is not executable) and
//! change only that, on the path and everything mounted below it, so that
//! `NoExecPaths=/` reaches a private `/tmp` and `ExecPaths=/usr/lib` under
//! it makes that tree executable again, read-only or not.

use std::path::{Path, PathBuf};

use super::dirs::DirLink;
use super::log_namespace;
use super::sandbox::{ProtectHome, ProtectSystem};
use super::tmpfs::TmpfsMount;
use super::{Key, ServiceContext};

/// What happens at a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MountKind {
    /// Covered by an empty node: an empty read-only tmpfs with mode 000 on
    /// a directory, an empty mode-000 file on anything else.
    Inaccessible,
    /// An empty read-only tmpfs with this mode (`ProtectHome=tmpfs`).
    EmptyTmpfs(u32),
    /// A tmpfs of `TemporaryFileSystem=`, holding the mount points of
    /// what the plan puts back below it and the unit's directory links
    /// whose place it covers (made while it is writable, before a `ro`
    /// makes it read-only), as systemd makes them in its namespace.
    Tmpfs {
        /// How it is mounted.
        mount: TmpfsMount,
        /// The links made in it.
        links: Vec<DirLink>,
    },
    /// `source` bound here: the init's directory of `PrivateTmp=`, a path
    /// of `BindPaths=` or `BindReadOnlyPaths=`. A missing mount point is
    /// made (a directory or an empty file, as `source` is), as systemd
    /// makes it.
    Bind {
        /// The host's path, as it was before the plan started.
        source: PathBuf,
        /// Made read-only with everything below it.
        read_only: bool,
        /// Only the source's own mount, not those below it (`norbind`).
        no_recursive: bool,
    },
    /// A new tmpfs `/dev` holding only `null`, `zero`, `full`, `random`,
    /// `urandom`, `tty`, a new `pts` instance and `shm`.
    PrivateDev,
    /// Bound onto itself and made read-only with everything below it.
    ReadOnly,
    /// A new procfs instance with these options (`hidepid=…`,
    /// `subset=pid`: `ProtectProc=`, `ProcSubset=`).
    Proc(String),
    /// Put back as it was before the plan started.
    Keep,
    /// Bound onto itself and made not executable with everything below it.
    NoExec,
    /// Bound onto itself and made executable with everything below it.
    Exec,
}

impl MountKind {
    /// Which of two entries for one path wins: the lower rank.
    fn rank(&self) -> u8 {
        match self {
            MountKind::Inaccessible => 0,
            MountKind::EmptyTmpfs(_)
            | MountKind::Tmpfs { .. }
            | MountKind::Bind { .. }
            | MountKind::PrivateDev
            | MountKind::Proc(_) => 1,
            MountKind::ReadOnly | MountKind::NoExec => 2,
            MountKind::Keep | MountKind::Exec => 3,
        }
    }

    /// Whether the entry hides or freezes what is below it, so that a
    /// [`MountKind::Keep`] below it has something to undo.
    fn protects(&self) -> bool {
        self.rank() < 3
    }
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    /// Absolute, normal.
    pub path: PathBuf,
    /// What happens there.
    pub kind: MountKind,
    /// A missing path is skipped (systemd's `-`).
    pub optional: bool,
    /// The key that asked for it, for errors.
    pub key: Key,
}

fn entry(path: &str, kind: MountKind, optional: bool, key: Key) -> MountEntry {
    MountEntry {
        path: PathBuf::from(path),
        kind,
        optional,
        key,
    }
}

/// `ProtectKernelTunables=`: the kernel's knobs under `/proc` and `/sys`.
const TUNABLES_READ_ONLY: [&str; 12] = [
    "/proc/acpi",
    "/proc/apm",
    "/proc/asound",
    "/proc/bus",
    "/proc/fs",
    "/proc/irq",
    "/proc/latency_stats",
    "/proc/mtrr",
    "/proc/scsi",
    "/proc/sys",
    "/proc/sysrq-trigger",
    "/proc/timer_stats",
];

/// The mount plan of `ctx`, sorted; empty when no key needs a mount
/// namespace. `private_tmp` is the init's directory for the unit's private
/// `/tmp` (it holds `tmp` and `var-tmp`); it is needed exactly when
/// `PrivateTmp=` is set.
pub fn plan(ctx: &ServiceContext, private_tmp: Option<&Path>) -> Vec<MountEntry> {
    use MountKind::*;
    let sb = &ctx.sandbox;
    let mut out = Vec::new();
    let key = Key::ProtectSystem;
    match sb.protect_system {
        ProtectSystem::No => {}
        ProtectSystem::Yes | ProtectSystem::Full => {
            out.push(entry("/usr", ReadOnly, false, key));
            out.push(entry("/boot", ReadOnly, true, key));
            out.push(entry("/efi", ReadOnly, true, key));
            if sb.protect_system == ProtectSystem::Full {
                out.push(entry("/etc", ReadOnly, false, key));
            }
        }
        ProtectSystem::Strict => {
            out.push(entry("/", ReadOnly, false, key));
            // The kernel's file systems are left to their own keys, the
            // home directories to ProtectHome=.
            for p in ["/proc", "/sys", "/dev"] {
                out.push(entry(p, Keep, false, key));
            }
            for p in ["/home", "/run/user", "/root"] {
                out.push(entry(p, Keep, true, key));
            }
        }
    }
    let key = Key::ProtectHome;
    let homes = [("/home", 0o755), ("/run/user", 0o755), ("/root", 0o700)];
    for (p, mode) in homes {
        match sb.protect_home {
            ProtectHome::No => {}
            ProtectHome::Yes => out.push(entry(p, Inaccessible, true, key)),
            ProtectHome::ReadOnly => out.push(entry(p, ReadOnly, true, key)),
            ProtectHome::Tmpfs => out.push(entry(p, EmptyTmpfs(mode), true, key)),
        }
    }
    let proc_options: Vec<String> = sb
        .protect_proc
        .hidepid()
        .map(|h| format!("hidepid={h}"))
        .into_iter()
        .chain(sb.proc_subset_pid.then(|| "subset=pid".to_string()))
        .collect();
    if !proc_options.is_empty() {
        let key = if sb.protect_proc.hidepid().is_some() {
            Key::ProtectProc
        } else {
            Key::ProcSubset
        };
        out.push(entry("/proc", Proc(proc_options.join(",")), false, key));
    }
    if sb.protect_kernel_tunables {
        let key = Key::ProtectKernelTunables;
        for p in TUNABLES_READ_ONLY {
            out.push(entry(p, ReadOnly, true, key));
        }
        for p in ["/proc/kallsyms", "/proc/kcore"] {
            out.push(entry(p, Inaccessible, true, key));
        }
        out.push(entry("/sys", ReadOnly, false, key));
        if !sb.protect_control_groups {
            out.push(entry("/sys/fs/cgroup", Keep, true, key));
        }
        out.push(entry("/sys/fs/selinux", Keep, true, key));
        for p in ["/sys/kernel/debug", "/sys/kernel/tracing"] {
            out.push(entry(p, ReadOnly, true, key));
        }
    }
    if sb.protect_control_groups {
        out.push(entry(
            "/sys/fs/cgroup",
            ReadOnly,
            false,
            Key::ProtectControlGroups,
        ));
    }
    if sb.protect_kernel_modules {
        for p in ["/usr/lib/modules", "/lib/modules"] {
            out.push(entry(p, Inaccessible, true, Key::ProtectKernelModules));
        }
    }
    if sb.protect_kernel_logs {
        for p in ["/proc/kmsg", "/dev/kmsg"] {
            out.push(entry(p, Inaccessible, true, Key::ProtectKernelLogs));
        }
    }
    // With `ProcSubset=pid` the unit's /proc has no sys/ (Debian's
    // chrony.service has both keys): there is nothing of the host name's
    // to make read-only, and the bind would fail the start.
    if sb.protect_hostname && !sb.proc_subset_pid {
        for p in ["/proc/sys/kernel/hostname", "/proc/sys/kernel/domainname"] {
            out.push(entry(p, ReadOnly, false, Key::ProtectHostname));
        }
    }
    if sb.private_devices {
        out.push(entry("/dev", PrivateDev, false, Key::PrivateDevices));
    }
    if let (true, Some(dir)) = (sb.private_tmp, private_tmp) {
        for (path, dir) in [("/tmp", dir.join("tmp")), ("/var/tmp", dir.join("var-tmp"))] {
            out.push(MountEntry {
                path: path.into(),
                kind: Bind {
                    source: dir,
                    read_only: false,
                    no_recursive: false,
                },
                optional: false,
                key: Key::PrivateTmp,
            });
        }
    }
    let binds = [
        (&sb.bind_paths, false, Key::BindPaths),
        (&sb.bind_read_only_paths, true, Key::BindReadOnlyPaths),
    ];
    for (rules, read_only, key) in binds {
        for r in rules {
            out.push(MountEntry {
                path: r.destination.clone(),
                kind: Bind {
                    source: r.source.clone(),
                    read_only,
                    no_recursive: r.no_recursive,
                },
                optional: r.optional,
                key,
            });
        }
    }
    // The namespace's journal sockets where the service's `syslog(3)`
    // and `sd_journal_send(3)` look for the system's.
    if let Some(ns) = &ctx.log_namespace {
        out.push(MountEntry {
            path: log_namespace::JOURNAL_DIR.into(),
            kind: Bind {
                source: ns.journal_dir(),
                read_only: true,
                no_recursive: false,
            },
            optional: false,
            key: Key::LogNamespace,
        });
    }
    for r in &sb.temporary_file_systems {
        out.push(MountEntry {
            path: r.path.clone(),
            kind: Tmpfs {
                mount: r.mount(),
                links: Vec::new(),
            },
            optional: false,
            key: Key::TemporaryFileSystem,
        });
    }
    let user = [
        (&sb.read_write_paths, Keep, Key::ReadWritePaths),
        (&sb.read_only_paths, ReadOnly, Key::ReadOnlyPaths),
        (&sb.inaccessible_paths, Inaccessible, Key::InaccessiblePaths),
    ];
    for (rules, kind, key) in user {
        for r in rules {
            out.push(MountEntry {
                path: r.path.clone(),
                kind: kind.clone(),
                optional: r.optional,
                key,
            });
        }
    }
    // The service's own directories stay writable (the configuration one
    // is not meant to be written). Those below a `private/` (a dynamic
    // user's) are reached through it: the 0700 root is covered by an
    // empty tmpfs the service may search, holding only its own
    // directories (as systemd's namespace does).
    for place in ctx.directories.places() {
        if !place.kind.owned_and_writable() {
            continue;
        }
        let key = place.kind.key();
        let path = match place.private {
            Some(p) => {
                out.push(MountEntry {
                    path: p.root,
                    kind: EmptyTmpfs(0o755),
                    optional: false,
                    key,
                });
                p.dir
            }
            None => place.path,
        };
        out.push(MountEntry {
            path,
            kind: Keep,
            optional: false,
            key,
        });
    }
    let mut out = finish(out);
    place_links(&mut out, ctx);
    let mut exec = Vec::new();
    let lists = [
        (&sb.no_exec_paths, NoExec, Key::NoExecPaths),
        (&sb.exec_paths, Exec, Key::ExecPaths),
    ];
    for (rules, kind, key) in lists {
        for r in rules {
            exec.push(MountEntry {
                path: r.path.clone(),
                kind: kind.clone(),
                optional: r.optional,
                key,
            });
        }
    }
    sort_dedup(&mut exec);
    out.extend(exec);
    out
}

/// The unit's directory links whose place a tmpfs of the plan covers go
/// into that tmpfs: those of its `NAME:LINK` words, and the links from a
/// dynamic user's directories' places to them below `private/` (which
/// the host has too, but the tmpfs hides).
fn place_links(plan: &mut [MountEntry], ctx: &ServiceContext) {
    let private = ctx.directories.places().into_iter().filter_map(|p| {
        let target = p.private?.target?;
        Some(DirLink {
            kind: p.kind,
            path: p.path,
            target,
        })
    });
    for link in private.chain(ctx.directories.links()) {
        if let Some(i) = tmpfs_holding(plan, &link.path) {
            if let MountKind::Tmpfs { links, .. } = &mut plan[i].kind {
                links.push(link);
            }
        }
    }
}

/// The index of the `TemporaryFileSystem=` tmpfs of `plan` that `path`
/// lies in: the deepest entry at or above it that replaces what is there
/// or puts it back is that tmpfs. Elsewhere a link is the host's to make.
pub fn tmpfs_holding(plan: &[MountEntry], path: &Path) -> Option<usize> {
    plan.iter()
        .enumerate()
        .filter(|(_, e)| path.starts_with(&e.path))
        .filter(|(_, e)| e.kind.rank() < 2 || e.kind == MountKind::Keep)
        .max_by_key(|(_, e)| e.path.components().count())
        .filter(|(_, e)| matches!(e.kind, MountKind::Tmpfs { .. }))
        .map(|(i, _)| i)
}

/// Sorts by path, parents first, and keeps the most restrictive entry of
/// each path (a required one over an optional one).
fn sort_dedup(out: &mut Vec<MountEntry>) {
    out.sort_by(|a, b| {
        a.path
            .cmp(&b.path)
            .then(a.kind.rank().cmp(&b.kind.rank()))
            .then(a.optional.cmp(&b.optional))
    });
    out.dedup_by(|later, first| later.path == first.path);
}

/// Sorts, keeps the most restrictive entry per path, and drops the
/// implicit `Keep`s that nothing above them protects (explicit
/// `ReadWritePaths=` stay, so that a missing path is still reported).
fn finish(mut out: Vec<MountEntry>) -> Vec<MountEntry> {
    sort_dedup(&mut out);
    let protected: Vec<PathBuf> = out
        .iter()
        .filter(|e| e.kind.protects())
        .map(|e| e.path.clone())
        .collect();
    out.retain(|e| {
        e.kind != MountKind::Keep
            || e.key == Key::ReadWritePaths
            || protected
                .iter()
                .any(|p| p != &e.path && e.path.starts_with(p))
    });
    out
}

/// The entry of `plan` (as [`plan`] returns it, sorted) under which
/// `path` is not the host's: covered (inaccessible, an empty tmpfs, a
/// private `/tmp` or `/dev`, a new procfs) by the deepest entry at or above
/// it that changes what is there, with no [`MountKind::Keep`] deeper that
/// puts it back. Read-only and exec entries leave the path where it was. A
/// notify socket there cannot be reached by the unit (`init`'s executor
/// says so at the spawn).
pub fn hidden_by<'a>(plan: &'a [MountEntry], path: &Path) -> Option<&'a MountEntry> {
    plan.iter()
        .filter(|e| path.starts_with(&e.path))
        .filter(|e| e.kind.rank() < 2 || e.kind == MountKind::Keep)
        .max_by_key(|e| e.path.components().count())
        .filter(|e| e.kind.rank() < 2)
}

#[cfg(test)]
#[path = "mounts_tests.rs"]
mod tests;
