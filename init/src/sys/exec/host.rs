//! What this kernel and this init can do for a unit's context ([`Host`]),
//! looked at once at start: [`crate::sys::context::prepare`] checks every key
//! against it.

use std::path::Path;

use flotilla_units::context::caps::{cap, CapSet};

/// What this kernel and this init can do, looked at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// Seccomp filters (`CONFIG_SECCOMP_FILTER`).
    pub seccomp: bool,
    /// `open_tree`, `move_mount`, `fsopen` and `mount_setattr` (Linux 5.12).
    pub mount_api: bool,
    /// Mount, network and UTS namespaces.
    pub mount_ns: bool,
    /// Network namespaces.
    pub net_ns: bool,
    /// UTS namespaces.
    pub uts_ns: bool,
    /// User namespaces (and `user.max_user_namespaces` above 0).
    pub user_ns: bool,
    /// The init holds `CAP_SETUID` and `CAP_SETGID` (another process's
    /// user namespace maps).
    pub setid: bool,
    /// Ambient capabilities (Linux 4.3).
    pub ambient: bool,
    /// The init holds `CAP_SYS_ADMIN` (mounts, namespaces).
    pub sys_admin: bool,
    /// The init holds `CAP_SETPCAP` (the bounding set).
    pub setpcap: bool,
    /// The init holds `CAP_SYS_RESOURCE` (a hard limit above its own).
    pub sys_resource: bool,
    /// The init holds `CAP_SYS_NICE` (a nice level below its own).
    pub sys_nice: bool,
    /// The highest capability number this kernel knows.
    pub cap_last_cap: u32,
    /// AppArmor is enabled on the machine (`AppArmorProfile=` is applied).
    pub apparmor: bool,
    /// The init's permitted capabilities: what a unit's ambient set can
    /// hold at most.
    pub permitted: CapSet,
}

impl Host {
    /// Looks at this kernel and this process.
    pub fn probe() -> Host {
        // SAFETY: prctl(2) and syscall(2) with arguments that touch no
        // memory (NULL pointers make the calls fail with EFAULT or EBADF
        // where the call exists, ENOSYS where it does not).
        let (seccomp, mount_api, ambient) = unsafe {
            let seccomp = libc::prctl(libc::PR_GET_SECCOMP) >= 0 && {
                let r = libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER as libc::c_ulong,
                    0 as libc::c_ulong,
                );
                r < 0 && nix::errno::Errno::last_raw() == libc::EFAULT
            };
            let exists = |nr: libc::c_long| {
                libc::syscall(nr, -1, std::ptr::null::<u8>(), 0, 0, 0) < 0
                    && nix::errno::Errno::last_raw() != libc::ENOSYS
            };
            let mount_api = exists(libc::SYS_mount_setattr)
                && exists(libc::SYS_open_tree)
                && exists(libc::SYS_move_mount)
                && exists(libc::SYS_fsopen);
            // PR_CAP_AMBIENT_IS_SET (1) of capability 0: EINVAL before 4.3.
            let ambient = libc::prctl(
                47,
                1 as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
            ) >= 0;
            (seccomp, mount_api, ambient)
        };
        let ns = |n: &str| Path::new("/proc/self/ns").join(n).exists();
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let caps = |field: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
                .unwrap_or(0)
        };
        let eff = caps("CapEff:");
        let cap_last_cap = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(40);
        Host {
            seccomp,
            mount_api,
            mount_ns: ns("mnt"),
            net_ns: ns("net"),
            uts_ns: ns("uts"),
            user_ns: ns("user")
                && std::fs::read_to_string("/proc/sys/user/max_user_namespaces")
                    .ok()
                    .and_then(|s| s.trim().parse::<u64>().ok())
                    .is_none_or(|n| n > 0),
            setid: CapSet(eff).has(6) && CapSet(eff).has(7),
            ambient,
            sys_admin: CapSet(eff).has(cap::SYS_ADMIN),
            setpcap: CapSet(eff).has(8),
            sys_resource: CapSet(eff).has(24),
            sys_nice: CapSet(eff).has(23),
            cap_last_cap,
            permitted: CapSet(caps("CapPrm:")),
            apparmor: flotilla_units::context::apparmor::enabled(
                std::fs::read_to_string("/sys/module/apparmor/parameters/enabled")
                    .ok()
                    .as_deref(),
            ),
        }
    }
}
