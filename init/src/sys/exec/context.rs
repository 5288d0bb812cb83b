//! A service's context, prepared in the parent and applied in the child.
//!
//! [`prepare`] turns a [`ServiceContext`] (the pure description, from
//! `units/`) into a [`ChildContext`]: the list of steps the spawned child
//! takes (`sandbox.rs`), each with every path a C string, every number
//! computed, every seccomp program compiled (`seccomp.rs`), and a name that
//! says which key it serves, for errors. It is built once per unit start
//! (or spec change), not per spawn, and lent to every spawn of the unit
//! through [`crate::sys::SpawnRequest::context`]. A spawn without one does
//! exactly what it did before.
//!
//! # What the kernel cannot do
//!
//! [`Host::probe`] looks once at what this kernel and this init can do:
//! seccomp, the new mount API, namespaces, ambient capabilities, whether
//! the init holds `CAP_SYS_ADMIN`. [`prepare`] checks every key against it
//! (`context/check.rs`; the steps that make files are `context/files.rs`):
//! a key that cannot be honoured is an error that names it
//! ([`ContextError`]), unless the unit lists it in `X-SkipUnsupported=`
//! (YAML `skip-unsupported`), in which case the key is left out and a note
//! says so ([`ChildContext::notes`]). Nothing is dropped silently. What
//! fails only in the child (a path that is not there, a mount the kernel
//! refuses) fails the spawn with an error naming the key and the step.
//!
//! # Order in the child
//!
//! Before the identity change: join the cgroup, OOM score, nice, limits,
//! network and UTS namespaces, the mount namespace, umask, the bounding
//! set (dropping needs `CAP_SETPCAP`, which the new user lacks), keep
//! capabilities across the switch. After it: ambient capabilities. Last,
//! right before `execve`: `PR_SET_NO_NEW_PRIVS` and the seccomp programs,
//! so that nothing of the child's own setup runs under the filter. A unit
//! with a filter that runs as a user other than root gets no-new-privileges
//! implied, as in systemd (the kernel refuses a filter otherwise).

use std::ffi::{c_int, CStr};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use flotilla_units::context::caps::{cap, CapSet};
use flotilla_units::context::placement::{self, Affinity, Placement};
use flotilla_units::context::{mounts, Key, ServiceContext};
use flotilla_units::protocol::NotApplied;

mod check;
mod files;

pub use check::predict;
use check::{check_keys, Checked};
use files::file_steps;

use crate::sys::cgroup::UnitCgroup;
pub use crate::sys::degrade::set_default_policy;
pub use crate::sys::host::Host;
use crate::sys::mount_steps::mount_steps;
use crate::sys::sandbox;
use crate::sys::seccomp;
use crate::sys::steps::{Builder, OnError, Op, Scratch, Step};

/// Who the child becomes, and what the init made for it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Params<'a> {
    /// The user the child switches to (`None`: it stays the init's).
    pub uid: Option<u32>,
    /// The unit's cgroup, which the child joins first.
    pub cgroup: Option<&'a UnitCgroup>,
    /// The init's directory for the unit's private `/tmp` (holding `tmp`
    /// and `var-tmp`): needed with `PrivateTmp=`.
    pub private_tmp: Option<&'a Path>,
    /// Who owns the unit's directories (UID, GID): its user and group.
    pub owner: Option<(u32, u32)>,
    /// The unit's credentials directory (`/run/credentials/UNIT`): needed
    /// with `LoadCredential=` or `SetCredential=`.
    pub credentials: Option<&'a Path>,
}

/// A key that cannot be honoured (or the unit's cgroup that cannot be
/// used), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextError {
    /// The key; `None` for the cgroup, which no key asks for.
    pub key: Option<Key>,
    /// Why, e.g. "needs seccomp, which this kernel lacks".
    pub message: String,
}

impl fmt::Display for ContextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.key {
            Some(k) => write!(f, "{k} {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ContextError {}

/// The steps a spawned child takes to enter its context.
#[derive(Debug)]
pub struct ChildContext {
    /// Fixed once prepared, kept as long as the unit runs: boxed slices,
    /// not the builder's vectors with their room to grow.
    steps: Box<[Step]>,
    /// For each step, the key and what it does ("ProtectSystem=: make /
    /// read-only").
    names: Box<[String]>,
    /// `steps[..identity]` run before the identity change,
    /// `steps[identity..exec]` after it, `steps[exec..]` before `execve`.
    identity: usize,
    exec: usize,
    scratch: Scratch,
    notes: Vec<String>,
    /// The settings left out or changed because the init lacks a
    /// privilege (`degrade.rs`).
    not_applied: Vec<NotApplied>,
    /// The unit's cgroup directory, for `CLONE_INTO_CGROUP`: opened by
    /// each spawn, so that a running unit holds no descriptor of it; the
    /// cgroup's own path, shared.
    cgroup: Option<Arc<CStr>>,
    /// A step may wait on a disk: the child is handed off first.
    detaches: bool,
}

impl ChildContext {
    /// The unit's cgroup directory, if the child is born in it.
    pub(crate) fn cgroup_dir(&self) -> Option<&CStr> {
        self.cgroup.as_deref()
    }

    /// Tells the child whether it was born in its cgroup (set before each
    /// spawn, under the spawner's lock).
    pub(crate) fn set_joined(&self, joined: bool) {
        self.scratch
            .joined
            .store(joined, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether the child has nothing to do (the context only holds keys
    /// that act elsewhere: directories, output, kill mode).
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Keys left out because the kernel cannot honour them and the unit
    /// allows it, one sentence each.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The settings left out or changed because the init lacks a
    /// privilege, as prepared, and those a child found denied
    /// ([`OnError::SkipDenied`]) since.
    pub fn not_applied(&self) -> Vec<NotApplied> {
        let mut all = self.not_applied.clone();
        let denied = self
            .scratch
            .denied
            .load(std::sync::atomic::Ordering::Relaxed);
        for (i, name) in self.names.iter().enumerate().take(64) {
            if denied & (1u64 << i) != 0 {
                let setting = name.split('=').next().unwrap_or(name).to_owned();
                all.push(NotApplied {
                    setting,
                    reason: format!("{name}: denied by the kernel (EPERM or EACCES), skipped as systemd skips it (assuming containerized execution)"),
                });
            }
        }
        all
    }

    /// The steps a child skipped as denied, one bit each (read in a
    /// handed-off child, which reports them itself).
    pub(crate) fn denied(&self) -> u64 {
        self.scratch
            .denied
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Adds the steps a forked child reports it skipped as denied: its
    /// copy of [`Scratch::denied`] is not the init's.
    pub fn add_denied(&self, bits: u64) {
        self.scratch
            .denied
            .fetch_or(bits, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether the child has no step to take once born in its cgroup
    /// (none at all, or only the join, with a cgroup to be born in): a
    /// child in flight (`spawn/flight.rs`) takes none.
    pub(crate) fn only_joins_cgroup(&self) -> bool {
        self.steps.is_empty()
            || (self.cgroup.is_some()
                && self
                    .steps
                    .iter()
                    .all(|s| matches!(s.op, crate::sys::steps::Op::JoinCgroup(_))))
    }

    /// The context of a unit whose context sets nothing, with cgroup
    /// `cg`: the child joins it, nothing more. Such a context is made for
    /// each spawn rather than kept for the whole run ([`Self::is_joining`]).
    pub fn joining(cg: &UnitCgroup) -> ChildContext {
        let mut b = Builder::default();
        let cgroup = join(&mut b, cg);
        let n = b.steps.len();
        ChildContext::built(b, (n, n), Vec::new(), Vec::new(), cgroup)
    }

    /// The context of the steps `b` built: `identity` and `exec` where
    /// the steps after the identity change and right before `execve`
    /// begin.
    fn built(
        b: Builder,
        (identity, exec): (usize, usize),
        notes: Vec<String>,
        not_applied: Vec<NotApplied>,
        cgroup: Option<Arc<CStr>>,
    ) -> ChildContext {
        let detaches = b.steps.iter().any(|s| s.op.may_wait_on_disk());
        ChildContext {
            steps: b.steps.into_boxed_slice(),
            names: b.names.into_boxed_slice(),
            identity,
            exec,
            scratch: Scratch::new(),
            notes,
            not_applied,
            cgroup,
            detaches,
        }
    }

    /// Whether this is what [`Self::joining`] makes: nothing that a run
    /// need keep (a thousand plain units running would keep 300 bytes
    /// each for it, `docs/performance.md`).
    pub(crate) fn is_joining(&self) -> bool {
        matches!(&*self.steps, [s] if matches!(s.op, crate::sys::steps::Op::JoinCgroup(_)))
            && self.notes.is_empty()
            && self.not_applied.is_empty()
            && !self.detaches
    }

    /// Whether the child is handed off before its steps, because one of
    /// them may wait on a disk (`dirs.rs`).
    pub(crate) fn detaches(&self) -> bool {
        self.detaches
    }

    /// The name of step `i` as it is kept, for a handed-off child's
    /// message (no allocation).
    pub(crate) fn step_label(&self, i: usize) -> &[u8] {
        self.names
            .get(i)
            .map_or(b"a context step", |n| n.as_bytes())
    }

    /// The exit status of a handed-off child that failed step `i`.
    pub(crate) fn exit_status(&self, i: usize) -> u8 {
        self.steps.get(i).map_or(127, |s| s.op.exit_status())
    }

    /// The name of step `i`, for an error.
    pub(crate) fn step_name(&self, i: usize) -> String {
        self.names
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("context step {i}"))
    }

    /// # Safety
    ///
    /// In the spawned child only (see `sandbox.rs`).
    pub(crate) unsafe fn before_identity(&self) -> Result<(), (usize, c_int)> {
        sandbox::run(&self.steps, 0..self.identity, &self.scratch)
    }

    /// # Safety
    ///
    /// In the spawned child only, after it changed its identity.
    pub(crate) unsafe fn after_identity(&self) -> Result<(), (usize, c_int)> {
        sandbox::run(&self.steps, self.identity..self.exec, &self.scratch)
    }

    /// # Safety
    ///
    /// In the spawned child only, right before `execve`.
    pub(crate) unsafe fn before_exec(&self) -> Result<(), (usize, c_int)> {
        sandbox::run(&self.steps, self.exec..self.steps.len(), &self.scratch)
    }
}

/// Adds the step that joins `cg`; returns the directory a child is born
/// in, which only a cgroup that was never killed is (cgroup.rs says why:
/// else the child joins it itself).
fn join(b: &mut Builder, cg: &UnitCgroup) -> Option<Arc<CStr>> {
    b.push(
        Op::JoinCgroup(cg.procs_path()),
        format!("join cgroup {}", cg.dir().display()),
        OnError::Fail,
    );
    cg.fresh().then(|| cg.dir_c())
}

/// The steps of `CPUAffinity=` and the NUMA keys; `numa` reads the CPUs
/// of the mask's nodes now, once per start (without a mask it is left
/// out, as systemd ignores it then).
fn placement_steps(b: &mut Builder, pl: &Placement) {
    let cpus = match (&pl.cpu_affinity, &pl.numa_mask) {
        (Some(Affinity::Cpus(cpus)), _) => Some(cpus.clone()),
        (Some(Affinity::Numa), Some(nodes)) => Some(placement::cpus_of_nodes(nodes, |p| {
            std::fs::read_to_string(p).ok()
        })),
        _ => None,
    };
    if let Some(cpus) = cpus {
        b.push(
            Op::CpuAffinity(cpus.words()),
            format!("{} set {}", Key::CpuAffinity, cpus.to_text()),
            OnError::Fail,
        );
    }
    if let Some(request) = pl.mem() {
        b.push(
            Op::MemPolicy(request),
            format!("{} set", Key::NumaPolicy),
            OnError::Fail,
        );
    }
}

/// Prepares `ctx` for a spawn: checks every key against `host`, leaves out
/// the ones that cannot be honoured and may be skipped (with a note), and
/// builds the child's steps.
pub fn prepare(
    ctx: &ServiceContext,
    params: &Params<'_>,
    host: &Host,
) -> Result<ChildContext, ContextError> {
    let mut ctx = ctx.clone();
    let Checked {
        strict,
        degraded,
        notes,
    } = check_keys(&mut ctx, host)?;
    let mut b = Builder::default();
    let plan = if degraded.no_mount_ns {
        Vec::new()
    } else {
        mounts::plan(&ctx, params.private_tmp)
    };
    file_steps(&mut b, &ctx, params, &plan, degraded.plain_credentials)?;
    let cgroup = params.cgroup.and_then(|cg| join(&mut b, cg));
    if let Some(adj) = ctx.oom_score_adjust {
        b.push(
            Op::OomScoreAdj(adj.to_string().into_bytes()),
            format!("{} set {adj}", Key::OomScoreAdjust),
            if strict {
                OnError::Fail
            } else {
                OnError::SkipDenied
            },
        );
    }
    if let Some(n) = ctx.nice {
        b.push(Op::Nice(n), format!("{} set {n}", Key::Nice), OnError::Fail);
    }
    if let Some(cpu) = ctx.scheduling.cpu() {
        b.push(
            Op::Scheduler {
                policy: cpu.policy,
                priority: cpu.priority,
            },
            format!("{} set", Key::CpuSchedulingPolicy),
            OnError::Fail,
        );
    }
    if let Some(ioprio) = ctx.scheduling.ioprio() {
        b.push(
            Op::IoPrio(ioprio),
            format!("{} set", Key::IoSchedulingClass),
            OnError::Fail,
        );
    }
    let pl = &ctx.placement;
    if pl.cpu_affinity.is_some() || pl.numa_policy.is_some() || pl.numa_mask.is_some() {
        placement_steps(&mut b, pl);
    }
    for (r, v) in &ctx.limits {
        b.push(
            Op::Rlimit {
                resource: r.number(),
                soft: v.soft,
                hard: v.hard,
            },
            format!("{}= set the limit", r.key()),
            OnError::Fail,
        );
    }
    let sb = &ctx.sandbox;
    if sb.private_network {
        let k = Key::PrivateNetwork;
        b.push(
            Op::Unshare(libc::CLONE_NEWNET),
            format!("{k} a new network namespace"),
            OnError::Fail,
        );
        b.push(Op::LoopbackUp, format!("{k} bring lo up"), OnError::Fail);
    }
    if sb.protect_hostname && !degraded.no_uts_ns {
        b.push(
            Op::Unshare(libc::CLONE_NEWUTS),
            format!("{} a new UTS namespace", Key::ProtectHostname),
            OnError::Fail,
        );
    }
    if sb.private_tmp && params.private_tmp.is_none() && !degraded.no_mount_ns {
        return Err(ContextError {
            key: Some(Key::PrivateTmp),
            message: "the init made no private /tmp for this unit".into(),
        });
    }
    if !degraded.no_mount_ns {
        mount_steps(&mut b, &ctx, &plan).map_err(|(key, message)| ContextError {
            key: Some(key),
            message,
        })?;
    }
    if ctx.sandbox.private_users {
        // After the other namespaces (userns.rs says why).
        let uid = params.owner.map(|(u, _)| u).or(params.uid);
        let (uid_map, gid_map) = crate::sys::userns::maps(uid, params.owner.map(|(_, g)| g));
        b.push(
            Op::PrivateUsers { uid_map, gid_map },
            format!("{} a new user namespace", Key::PrivateUsers),
            OnError::Fail,
        );
    }
    if let Some(m) = ctx.umask {
        b.push(
            Op::Umask(m),
            format!("{} set {m:04o}", Key::UMask),
            OnError::Fail,
        );
    }
    let sb = &ctx.sandbox;
    let mut drop = Vec::new();
    let implied = [
        (sb.protect_kernel_modules, cap::SYS_MODULE),
        (sb.protect_kernel_logs, cap::SYSLOG),
        (sb.protect_clock, cap::SYS_TIME),
        (sb.protect_clock, cap::WAKE_ALARM),
        (sb.private_devices, cap::MKNOD),
        (sb.private_devices, cap::SYS_RAWIO),
    ];
    for (on, c) in implied {
        if on {
            drop.push(c);
        }
    }
    let keep = drop.iter().fold(
        sb.capability_bounding_set.unwrap_or(CapSet::ALL),
        |s, &c| s.without(c),
    );
    let all_known = if host.cap_last_cap >= 63 {
        u64::MAX
    } else {
        (1u64 << (host.cap_last_cap + 1)) - 1
    };
    if keep.0 & all_known != all_known {
        b.push(
            Op::DropBounding {
                keep: keep.0,
                last: host.cap_last_cap,
            },
            format!("{} drop capabilities", Key::CapabilityBoundingSet),
            OnError::Fail,
        );
    }
    let non_root = params.uid.is_some_and(|u| u != 0);
    let ambient = sb.ambient_capabilities.unwrap_or(CapSet::EMPTY);
    if ambient != CapSet::EMPTY && non_root {
        b.push(
            Op::KeepCaps,
            format!(
                "{} keep capabilities across the user change",
                Key::AmbientCapabilities
            ),
            OnError::Fail,
        );
    }
    let identity = b.steps.len();
    if ambient != CapSet::EMPTY {
        b.push(
            Op::Ambient {
                caps: ambient.0,
                non_root,
            },
            format!(
                "{} raise {}",
                Key::AmbientCapabilities,
                ambient.names().join(" ")
            ),
            OnError::Fail,
        );
    }
    let exec = b.steps.len();
    if ctx.keep_sigpipe {
        b.push(
            Op::DefaultSigpipe,
            format!("{}no: SIGPIPE at its default", Key::IgnoreSigpipe),
            OnError::Fail,
        );
    }
    let programs = seccomp::build(sb).map_err(|(key, message)| ContextError {
        key: Some(key),
        message,
    })?;
    if let Some(p) = ctx.apparmor_profile.as_ref().filter(|_| host.apparmor) {
        let on_error = if p.optional {
            OnError::Ignore
        } else {
            OnError::Fail
        };
        b.push(
            Op::AppArmorExec(p.exec_request().into_bytes()),
            format!(
                "{}{}{}: change to the profile at execve",
                Key::AppArmorProfile,
                if p.optional { "-" } else { "" },
                p.name
            ),
            on_error,
        );
    }
    let implied_nnp = programs.is_some() && non_root && !ambient.has(cap::SYS_ADMIN);
    if sb.no_new_privileges || implied_nnp {
        b.push(
            Op::NoNewPrivs,
            format!("{} set no-new-privileges", Key::NoNewPrivileges),
            OnError::Fail,
        );
    }
    for p in programs.map(|p| p.0).unwrap_or_default() {
        b.push(Op::Seccomp(p), "install the seccomp filter (SystemCallFilter= and the keys that restrict system calls)".into(), OnError::Fail);
    }
    Ok(ChildContext::built(
        b,
        (identity, exec),
        notes,
        degraded.not_applied,
        cgroup,
    ))
}

impl fmt::Display for ChildContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for name in &self.names {
            writeln!(f, "{name}")?;
        }
        Ok(())
    }
}
