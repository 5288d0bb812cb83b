//! What a setting does where the init lacks the privilege to apply it, as
//! systemd's executor does in a container, under the sandbox policy
//! `as-systemd` (docs/service-context.md, "Where a privilege is
//! missing"): a resource limit is set as close as the init can
//! (systemd's `setrlimit_closest`), `Nice=` as close as `RLIMIT_NICE`
//! allows (`setpriority_closest`), a lowering `OOMScoreAdjust=` is
//! skipped, and a mount, network or UTS namespace that only restricts the
//! service is left out. Each is named ([`Degraded::not_applied`]); under
//! `strict` none of this runs and `context::prepare` refuses instead.

use std::sync::atomic::{AtomicBool, Ordering};

use flotilla_units::context::caps::CapSet;
use flotilla_units::context::limits::Rlimit;
use flotilla_units::context::policy::SandboxPolicy;
use flotilla_units::context::sandbox::MOUNT_KEYS;
use flotilla_units::context::{Key, ServiceContext};
use flotilla_units::protocol::NotApplied;

use crate::sys::host::Host;
use crate::sys::rlimits::own_limit;

/// The init's own policy, for units that do not say (config `sandbox`).
static STRICT: AtomicBool = AtomicBool::new(false);

/// Sets the init's policy (once, from its config).
pub fn set_default_policy(policy: SandboxPolicy) {
    STRICT.store(policy == SandboxPolicy::Strict, Ordering::Relaxed);
}

/// The policy that holds for `ctx`: its own, else the init's.
pub(in crate::sys) fn policy(ctx: &ServiceContext) -> SandboxPolicy {
    ctx.sandbox_policy
        .unwrap_or(if STRICT.load(Ordering::Relaxed) {
            SandboxPolicy::Strict
        } else {
            SandboxPolicy::AsSystemd
        })
}

/// What was left out or changed.
#[derive(Debug, Default)]
pub(in crate::sys) struct Degraded {
    pub(in crate::sys) not_applied: Vec<NotApplied>,
    /// No mount namespace: the mount keys' steps are left out.
    pub(in crate::sys) no_mount_ns: bool,
    /// No UTS namespace for `ProtectHostname=`.
    pub(in crate::sys) no_uts_ns: bool,
    /// The credentials go into a plain directory, not a file system of
    /// their own.
    pub(in crate::sys) plain_credentials: bool,
}

impl Degraded {
    fn note(&mut self, key: Key, reason: String) {
        self.not_applied.push(NotApplied {
            setting: key.systemd_name().to_owned(),
            reason,
        });
    }
}

/// The mount keys that open up what another key closed (a writable or
/// executable path inside a read-only or `noexec` tree) rather than
/// restrict. Every other mount key only restricts what the service sees:
/// systemd leaves their namespace out when it cannot make it (`ENOANO`
/// from `setup_namespace`), because none of them adds anything the
/// service needs.
const WIDENING_MOUNT_KEYS: [Key; 2] = [Key::ReadWritePaths, Key::ExecPaths];

/// The mount keys that add to what the service sees, for which systemd
/// insists on the namespace: never degraded, so that the start fails
/// naming them where the namespace cannot be made (`LogNamespace=`'s
/// journal sockets are the service's, not a restriction).
pub(in crate::sys) const ADDING_MOUNT_KEYS: [Key; 4] = [
    Key::BindPaths,
    Key::BindReadOnlyPaths,
    Key::TemporaryFileSystem,
    Key::LogNamespace,
];

/// Keys with a part outside the mount namespace (a system call filter, a
/// capability dropped) that still applies without it.
const PARTLY_MOUNTS: [Key; 4] = [
    Key::PrivateDevices,
    Key::ProtectKernelModules,
    Key::ProtectKernelLogs,
    Key::ProtectHostname,
];

/// Degrades `ctx` for `host` (the policy is `as-systemd`).
pub(in crate::sys) fn degrade(ctx: &mut ServiceContext, host: &Host) -> Degraded {
    let mut d = Degraded::default();
    if !host.sys_resource {
        for (r, v) in ctx.limits.iter_mut() {
            let held = hard_limit(*r);
            if v.hard > held {
                let soft = v.soft.min(held);
                d.note(
                    Key::Limit(*r),
                    format!(
                        "{}={} set to {}:{}, the closest the init can: raising the hard limit above the init's ({held}) needs CAP_SYS_RESOURCE, which the init does not hold",
                        r.key(),
                        show(v.soft, v.hard),
                        show1(soft),
                        show1(held)
                    ),
                );
                v.soft = soft;
                v.hard = held;
            }
        }
        if let Some(adj) = ctx.oom_score_adjust.filter(|&a| a < own_oom_score_adj()) {
            d.note(
                Key::OomScoreAdjust,
                format!("OOMScoreAdjust={adj} skipped: lowering the OOM score adjustment needs CAP_SYS_RESOURCE, which the init does not hold (systemd assumes containerized execution)"),
            );
            ctx.oom_score_adjust = None;
        }
    }
    if let Some(want) = ctx.sandbox.ambient_capabilities {
        let lacking = CapSet(want.0 & !host.permitted.0);
        if lacking != CapSet::EMPTY {
            let kept = CapSet(want.0 & host.permitted.0);
            d.note(
                Key::AmbientCapabilities,
                format!(
                    "{} not applied: the init does not hold them (they are not in its permitted set), so no process it starts can; {}",
                    lacking.names().join(" "),
                    if kept == CapSet::EMPTY {
                        "the service runs without ambient capabilities".to_string()
                    } else {
                        format!("{} kept", kept.names().join(" "))
                    }
                ),
            );
            ctx.sandbox.ambient_capabilities = (kept != CapSet::EMPTY).then_some(kept);
        }
    }
    if let Some(n) = ctx.nice {
        let current = own_nice();
        if !host.sys_nice && n < current {
            let limit = nice_limit();
            let best = current.min(limit).max(n);
            if best == current {
                d.note(Key::Nice, format!("Nice={n} not applied, the nice level stays {current}: a lower one needs CAP_SYS_NICE or RLIMIT_NICE, which the init does not hold"));
                ctx.nice = None;
            } else {
                d.note(Key::Nice, format!("Nice={n} set to {best}, the closest RLIMIT_NICE allows without CAP_SYS_NICE"));
                ctx.nice = Some(best);
            }
        }
    }
    if !host.sys_admin {
        if host.mount_ns && host.mount_api {
            for key in MOUNT_KEYS {
                if WIDENING_MOUNT_KEYS.contains(&key)
                    || ADDING_MOUNT_KEYS.contains(&key)
                    || !ctx.is_set(key)
                {
                    continue;
                }
                d.no_mount_ns = true;
                let what = if key == Key::ProtectHostname {
                    "applied in part: its mounts and its UTS namespace left out (its system call filter kept)"
                } else if PARTLY_MOUNTS.contains(&key) {
                    "applied in part: its mounts left out (its system call filter and capabilities kept)"
                } else {
                    "not applied"
                };
                d.note(key, format!("{what}: a private mount namespace needs CAP_SYS_ADMIN, which the init does not hold; skipped as systemd skips a sandbox that only restricts"));
            }
        }
        if !ctx.credentials.is_empty() {
            d.plain_credentials = true;
            d.note(ctx.credentials.key(), "applied in part: the credentials are in a plain directory, not a read-only file system of their own: mounting one needs CAP_SYS_ADMIN, which the init does not hold; systemd falls back so".into());
        }
        if ctx.sandbox.private_network {
            d.note(Key::PrivateNetwork, "not applied: a network namespace needs CAP_SYS_ADMIN, which the init does not hold; the service shares the init's network, as systemd proceeds".into());
            ctx.sandbox.private_network = false;
        }
        if ctx.sandbox.protect_hostname && host.uts_ns {
            d.no_uts_ns = true;
            if !d.not_applied.iter().any(|n| n.setting == "ProtectHostname") {
                d.note(Key::ProtectHostname, "applied in part: a UTS namespace needs CAP_SYS_ADMIN, which the init does not hold (its system call filter kept)".into());
            }
        }
    }
    d
}

/// `soft:hard`, or one number when they are equal.
fn show(soft: u64, hard: u64) -> String {
    if soft == hard {
        show1(soft)
    } else {
        format!("{}:{}", show1(soft), show1(hard))
    }
}

fn show1(v: u64) -> String {
    if v == u64::MAX {
        "infinity".into()
    } else {
        v.to_string()
    }
}

/// The init's own hard limit of `resource` (infinity if unknown).
pub(in crate::sys) fn hard_limit(resource: Rlimit) -> u64 {
    own_limit(resource).map_or(u64::MAX, |v| v.hard)
}

/// The init's nice level (its children start with it).
fn own_nice() -> i32 {
    // SAFETY: getpriority(2) touches no memory. -1 is also a valid
    // answer; an error leaves 0, the usual level.
    let n = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    n.clamp(-20, 19)
}

/// The lowest nice level `RLIMIT_NICE` allows (systemd's
/// `rlimit_to_nice`).
fn nice_limit() -> i32 {
    let cur = own_limit(Rlimit::Nice).map_or(0, |v| v.soft);
    match cur {
        0 | 1 => 19,
        c if c >= 40 => -20,
        c => 20 - c as i32,
    }
}

/// The init's own OOM score adjustment: a child may go down to it
/// without `CAP_SYS_RESOURCE` (the kernel's `oom_score_adj_min`), not
/// lower; 0 if unknown.
fn own_oom_score_adj() -> i32 {
    std::fs::read_to_string("/proc/self/oom_score_adj")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
        .min(0)
}
