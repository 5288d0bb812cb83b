//! Which of a context's keys this machine can honour ([`Host`]): each
//! key is degraded as the unit's sandbox policy says (`degrade.rs`), left
//! out with a note when the unit may skip it, or refused naming it. The
//! same check says in advance what a start would not apply ([`predict`],
//! `init --check`).

use flotilla_units::context::policy::SandboxPolicy;
use flotilla_units::context::sandbox::MOUNT_KEYS;
use flotilla_units::context::syscalls::arches_native_only;
use flotilla_units::context::{Key, ServiceContext};
use flotilla_units::protocol::NotApplied;

use super::{ContextError, Host};
use crate::sys::degrade;

/// The keys that install a seccomp filter.
const SECCOMP_KEYS: [Key; 13] = [
    Key::SystemCallFilter,
    Key::SystemCallArchitectures,
    Key::RestrictAddressFamilies,
    Key::RestrictNamespaces,
    Key::RestrictSuidSgid,
    Key::LockPersonality,
    Key::MemoryDenyWriteExecute,
    Key::ProtectClock,
    Key::ProtectKernelModules,
    Key::ProtectKernelLogs,
    Key::ProtectHostname,
    Key::PrivateDevices,
    Key::RestrictRealtime,
];

/// Why `key`, which is set, cannot be honoured here, if it cannot.
fn unsupported(ctx: &ServiceContext, key: Key, host: &Host) -> Option<String> {
    let sb = &ctx.sandbox;
    if MOUNT_KEYS.contains(&key) {
        if !host.mount_ns {
            return Some("needs a private mount namespace, which this kernel lacks".into());
        }
        if !host.mount_api {
            return Some("needs the mount API of Linux 5.12 (open_tree, mount_setattr), which this kernel lacks".into());
        }
        if !host.sys_admin {
            return Some("needs a private mount namespace, which needs CAP_SYS_ADMIN (the init does not hold it)".into());
        }
    }
    if SECCOMP_KEYS.contains(&key) {
        if !cfg!(target_arch = "x86_64") {
            return Some("needs a seccomp filter, which flotilla builds for x86_64 only".into());
        }
        if !host.seccomp {
            return Some("needs seccomp filters, which this kernel lacks".into());
        }
    }
    match key {
        Key::SystemCallArchitectures => arches_native_only(&sb.system_call_architectures).err(),
        Key::PrivateNetwork if !host.net_ns => {
            Some("needs a network namespace, which this kernel lacks".into())
        }
        Key::PrivateNetwork if !host.sys_admin => Some(
            "needs a network namespace, which needs CAP_SYS_ADMIN (the init does not hold it)"
                .into(),
        ),
        Key::PrivateUsers if !host.user_ns => {
            Some("needs user namespaces, which this kernel lacks or has turned off (user.max_user_namespaces)".into())
        }
        Key::PrivateUsers if !host.setid => Some(
            "needs CAP_SETUID and CAP_SETGID to map the unit's IDs (the init does not hold them)"
                .into(),
        ),
        Key::ProtectHostname if !host.uts_ns => {
            Some("needs a UTS namespace, which this kernel lacks".into())
        }
        Key::ProtectHostname if !host.sys_admin => Some(
            "needs a UTS namespace, which needs CAP_SYS_ADMIN (the init does not hold it)".into(),
        ),
        Key::Nice if !host.sys_nice && ctx.nice.is_some_and(|n| n < 0) => Some(
            "needs CAP_SYS_NICE to lower the nice level below 0, which the init does not hold"
                .into(),
        ),
        Key::AmbientCapabilities if !host.ambient => {
            Some("needs ambient capabilities (Linux 4.3), which this kernel lacks".into())
        }
        Key::Limit(r) if !host.sys_resource => {
            let want = ctx.limits.get(&r).map_or(0, |v| v.hard);
            let have = degrade::hard_limit(r);
            (want > have).then(|| {
                format!("needs CAP_SYS_RESOURCE to raise the hard limit above the init's ({have}), which the init does not hold")
            })
        }
        Key::OomScoreAdjust if !host.sys_resource && ctx.oom_score_adjust.is_some_and(|a| a < 0) => {
            Some("needs CAP_SYS_RESOURCE to lower the OOM score below 0, which the init does not hold".into())
        }
        Key::LoadCredential | Key::SetCredential if !host.mount_api => Some(
            "needs the mount API of Linux 5.12 (fsmount, move_mount), which this kernel lacks"
                .into(),
        ),
        Key::LoadCredential | Key::SetCredential if !host.sys_admin => Some(
            "needs CAP_SYS_ADMIN to mount the credentials (the init does not hold it)".into(),
        ),
        Key::CapabilityBoundingSet if !host.setpcap => {
            Some("needs CAP_SETPCAP to drop capabilities (the init does not hold it)".into())
        }
        _ => None,
    }
}

/// What [`check_keys`] found.
pub(super) struct Checked {
    pub(super) strict: bool,
    pub(super) degraded: degrade::Degraded,
    pub(super) notes: Vec<String>,
}

/// Checks every key of `ctx` against `host`: degrades it as the policy
/// says (`degrade.rs`), leaves out what the unit allows to be skipped, and
/// refuses the rest.
pub(super) fn check_keys(ctx: &mut ServiceContext, host: &Host) -> Result<Checked, ContextError> {
    let mut notes = Vec::new();
    let strict = degrade::policy(ctx) == SandboxPolicy::Strict;
    // Most units set no context key: nothing to degrade or refuse. The
    // per-key test below copies the context once per key, which a start of
    // such a unit need not pay.
    if *ctx == ServiceContext::default() {
        return Ok(Checked {
            strict,
            degraded: degrade::Degraded::default(),
            notes,
        });
    }
    let degraded = if strict {
        degrade::Degraded::default()
    } else {
        degrade::degrade(ctx, host)
    };
    for key in Key::all() {
        // What this machine lacks first: `is_set` copies the context, and
        // most keys are supported here.
        let Some(why) = unsupported(ctx, key, host) else {
            continue;
        };
        if !ctx.is_set(key) {
            continue;
        }
        let left_out = (degraded.no_mount_ns
            && MOUNT_KEYS.contains(&key)
            && !degrade::ADDING_MOUNT_KEYS.contains(&key))
            || (degraded.no_uts_ns && key == Key::ProtectHostname)
            || (degraded.plain_credentials
                && matches!(key, Key::LoadCredential | Key::SetCredential));
        if !left_out {
            if !ctx.may_skip(key) {
                return Err(ContextError {
                    key: Some(key),
                    message: if strict {
                        format!("{why} (sandbox: strict)")
                    } else {
                        why
                    },
                });
            }
            notes.push(format!("{key} skipped: {why}"));
            ctx.reset(key);
        }
    }
    Ok(Checked {
        strict,
        degraded,
        notes,
    })
}

/// What a start of `ctx` would not apply on this machine, or why it would
/// fail, said in advance (`init --check`).
pub fn predict(ctx: &ServiceContext, host: &Host) -> Result<Vec<NotApplied>, ContextError> {
    let mut ctx = ctx.clone();
    let c = check_keys(&mut ctx, host)?;
    let mut all = c.degraded.not_applied;
    all.extend(c.notes.into_iter().map(|n| NotApplied {
        setting: n.split('=').next().unwrap_or("").to_owned(),
        reason: n,
    }));
    Ok(all)
}
