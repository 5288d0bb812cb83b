//! The sandbox keys' values: `ProtectSystem=`, `ProtectHome=`, path lists
//! with their `-` prefix, `RestrictNamespaces=` and
//! `RestrictAddressFamilies=`, and the [`Sandbox`] that holds them with
//! the capability and system call keys.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::caps::CapSet;
use super::syscalls::{Deny, SyscallFilter};
use super::value::{inverted, parse_bool, words};
use super::Key;

/// `ProtectSystem=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProtectSystem {
    /// Nothing is made read-only.
    #[default]
    No,
    /// `/usr`, `/boot` and `/efi` are read-only.
    Yes,
    /// Those and `/etc`.
    Full,
    /// The whole file system hierarchy but `/dev`, `/proc`, `/sys` (and
    /// the home directories, left to `ProtectHome=`).
    Strict,
}

/// `ProtectHome=`: what happens to `/home`, `/root` and `/run/user`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProtectHome {
    /// Nothing.
    #[default]
    No,
    /// They are empty and inaccessible.
    Yes,
    /// They are read-only.
    ReadOnly,
    /// Each is an empty read-only tmpfs.
    Tmpfs,
}

/// `ProtectProc=`: who sees other users' processes in `/proc` (procfs's
/// `hidepid=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProtectProc {
    /// `/proc` as the init has it.
    #[default]
    Default,
    /// Other users' process directories are there but cannot be read.
    Noaccess,
    /// Other users' processes are not listed at all.
    Invisible,
    /// Only processes the unit may trace are listed.
    Ptraceable,
}

impl ProtectProc {
    /// procfs's `hidepid=` value.
    pub fn hidepid(self) -> Option<&'static str> {
        match self {
            ProtectProc::Default => None,
            ProtectProc::Noaccess => Some("noaccess"),
            ProtectProc::Invisible => Some("invisible"),
            ProtectProc::Ptraceable => Some("ptraceable"),
        }
    }
}

/// `ProtectProc=`: `default`, `noaccess`, `invisible` or `ptraceable`.
pub fn parse_protect_proc(value: &str) -> Result<ProtectProc, String> {
    match value.trim() {
        "default" => Ok(ProtectProc::Default),
        "noaccess" => Ok(ProtectProc::Noaccess),
        "invisible" => Ok(ProtectProc::Invisible),
        "ptraceable" => Ok(ProtectProc::Ptraceable),
        v => Err(format!(
            "`{v}` is not a ProtectProc= value (write default, noaccess, invisible or ptraceable)"
        )),
    }
}

/// `ProcSubset=`: `all` (false) or `pid` (true: only the process
/// directories, none of the kernel's files).
pub fn parse_proc_subset(value: &str) -> Result<bool, String> {
    match value.trim() {
        "all" => Ok(false),
        "pid" => Ok(true),
        v => Err(format!(
            "`{v}` is not a ProcSubset= value (write all or pid)"
        )),
    }
}

/// A path of `ReadWritePaths=`, `ReadOnlyPaths=` or `InaccessiblePaths=`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PathRule {
    /// Absolute and normal (no `.`, `..`, repeated or trailing `/`).
    pub path: PathBuf,
    /// Written with a leading `-`: a missing path is skipped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
}

/// One bind of `BindPaths=` or `BindReadOnlyPaths=` (read by
/// [`super::binds`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BindRule {
    /// The host's path, absolute and normal.
    pub source: PathBuf,
    /// Where the service sees it, absolute and normal.
    pub destination: PathBuf,
    /// Written with a leading `-`: a missing source is skipped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
    /// `norbind`: only the source's own mount, not those below it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_recursive: bool,
}

/// One tmpfs of `TemporaryFileSystem=` (read by [`super::tmpfs`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TmpfsRule {
    /// Absolute and normal.
    pub path: PathBuf,
    /// As written after the `:` (empty: none).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub options: String,
}

/// The namespace kinds of `RestrictNamespaces=` and their `CLONE_NEW*`
/// flags.
pub const NAMESPACES: [(&str, u64); 8] = [
    ("cgroup", 0x0200_0000),
    ("ipc", 0x0800_0000),
    ("net", 0x4000_0000),
    ("mnt", 0x0002_0000),
    ("pid", 0x2000_0000),
    ("user", 0x1000_0000),
    ("uts", 0x0400_0000),
    ("time", 0x0000_0080),
];

/// Every flag of [`NAMESPACES`].
pub const ALL_NAMESPACES: u64 = 0x7e02_0080;

/// Address family names (`AF_INET`, …) and numbers (`linux/socket.h`).
const FAMILIES: [(&str, u16); 46] = [
    ("AF_UNIX", 1),
    ("AF_LOCAL", 1),
    ("AF_INET", 2),
    ("AF_AX25", 3),
    ("AF_IPX", 4),
    ("AF_APPLETALK", 5),
    ("AF_NETROM", 6),
    ("AF_BRIDGE", 7),
    ("AF_ATMPVC", 8),
    ("AF_X25", 9),
    ("AF_INET6", 10),
    ("AF_ROSE", 11),
    ("AF_DECnet", 12),
    ("AF_NETBEUI", 13),
    ("AF_SECURITY", 14),
    ("AF_KEY", 15),
    ("AF_NETLINK", 16),
    ("AF_PACKET", 17),
    ("AF_ASH", 18),
    ("AF_ECONET", 19),
    ("AF_ATMSVC", 20),
    ("AF_RDS", 21),
    ("AF_SNA", 22),
    ("AF_IRDA", 23),
    ("AF_PPPOX", 24),
    ("AF_WANPIPE", 25),
    ("AF_LLC", 26),
    ("AF_IB", 27),
    ("AF_MPLS", 28),
    ("AF_CAN", 29),
    ("AF_TIPC", 30),
    ("AF_BLUETOOTH", 31),
    ("AF_IUCV", 32),
    ("AF_RXRPC", 33),
    ("AF_ISDN", 34),
    ("AF_PHONET", 35),
    ("AF_IEEE802154", 36),
    ("AF_CAIF", 37),
    ("AF_ALG", 38),
    ("AF_NFC", 39),
    ("AF_VSOCK", 40),
    ("AF_KCM", 41),
    ("AF_QIPCRTR", 42),
    ("AF_SMC", 43),
    ("AF_XDP", 44),
    ("AF_MCTP", 45),
];

/// `RestrictAddressFamilies=`, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AddressFamilies {
    /// `true`: only `families` may be used; `false`: they may not.
    pub allow_list: bool,
    /// The family numbers.
    pub families: BTreeSet<u16>,
}

/// The sandbox of a service: what its processes may see and do.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct Sandbox {
    /// `NoNewPrivileges=`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_new_privileges: bool,
    /// `CapabilityBoundingSet=`; `None` leaves the bounding set alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capability_bounding_set: Option<CapSet>,
    /// `AmbientCapabilities=`; `None` raises none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ambient_capabilities: Option<CapSet>,
    /// `PrivateTmp=`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub private_tmp: bool,
    /// `PrivateDevices=`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub private_devices: bool,
    /// `PrivateNetwork=`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub private_network: bool,
    /// `ProtectSystem=`.
    #[serde(skip_serializing_if = "is_default")]
    pub protect_system: ProtectSystem,
    /// `ProtectHome=`.
    #[serde(skip_serializing_if = "is_default")]
    pub protect_home: ProtectHome,
    /// `ReadWritePaths=`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub read_write_paths: Vec<PathRule>,
    /// `ReadOnlyPaths=`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub read_only_paths: Vec<PathRule>,
    /// `InaccessiblePaths=`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inaccessible_paths: Vec<PathRule>,
    /// `BindPaths=`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bind_paths: Vec<BindRule>,
    /// `BindReadOnlyPaths=`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bind_read_only_paths: Vec<BindRule>,
    /// `TemporaryFileSystem=`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub temporary_file_systems: Vec<TmpfsRule>,
    /// `NoExecPaths=`: nothing below these paths can be executed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub no_exec_paths: Vec<PathRule>,
    /// `ExecPaths=`: these paths can be executed again below a
    /// `NoExecPaths=`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exec_paths: Vec<PathRule>,
    /// `PrivateUsers=`: a user namespace of its own, in which only root
    /// and the unit's user and group are mapped (to themselves).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub private_users: bool,
    /// `ProtectKernelTunables=`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub protect_kernel_tunables: bool,
    /// `ProtectKernelModules=`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub protect_kernel_modules: bool,
    /// `ProtectKernelLogs=`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub protect_kernel_logs: bool,
    /// `ProtectControlGroups=`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub protect_control_groups: bool,
    /// `ProtectHostname=`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub protect_hostname: bool,
    /// `ProtectClock=`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub protect_clock: bool,
    /// `RestrictNamespaces=`: the `CLONE_NEW*` flags still allowed; `None`:
    /// no restriction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restrict_namespaces: Option<u64>,
    /// `RestrictAddressFamilies=`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restrict_address_families: Option<AddressFamilies>,
    /// `RestrictSUIDSGID=`.
    #[serde(
        rename = "restrict-suid-sgid",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub restrict_suid_sgid: bool,
    /// `LockPersonality=`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lock_personality: bool,
    /// `MemoryDenyWriteExecute=`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub memory_deny_write_execute: bool,
    /// `RestrictRealtime=`: no realtime scheduling policy.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub restrict_realtime: bool,
    /// `PrivateMounts=`: a mount namespace of its own, the init's mounts
    /// propagating into it and none of its own out.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub private_mounts: bool,
    /// `ProtectProc=`.
    #[serde(skip_serializing_if = "is_default")]
    pub protect_proc: ProtectProc,
    /// `ProcSubset=pid`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub proc_subset_pid: bool,
    /// `SystemCallFilter=`.
    #[serde(skip_serializing_if = "SyscallFilter::is_empty")]
    pub system_call_filter: SyscallFilter,
    /// `SystemCallArchitectures=`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub system_call_architectures: Vec<String>,
    /// `SystemCallErrorNumber=`: what a filtered call gets; `None`: the
    /// process is killed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_call_error_number: Option<Deny>,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// The keys that need a private mount namespace: each is applied by
/// mounts in the unit's own namespace (a sandbox key that also filters
/// system calls or drops capabilities has that part apply without it).
pub const MOUNT_KEYS: [Key; 21] = [
    Key::PrivateTmp,
    Key::PrivateDevices,
    Key::ProtectSystem,
    Key::ProtectHome,
    Key::ReadWritePaths,
    Key::ReadOnlyPaths,
    Key::InaccessiblePaths,
    Key::BindPaths,
    Key::BindReadOnlyPaths,
    Key::TemporaryFileSystem,
    Key::NoExecPaths,
    Key::ExecPaths,
    Key::ProtectKernelTunables,
    Key::ProtectKernelModules,
    Key::ProtectKernelLogs,
    Key::ProtectControlGroups,
    Key::ProtectHostname,
    Key::PrivateMounts,
    Key::ProtectProc,
    Key::ProcSubset,
    Key::LogNamespace,
];

/// `ProtectSystem=`: a boolean, `full` or `strict`.
pub fn parse_protect_system(value: &str) -> Result<ProtectSystem, String> {
    match value.trim() {
        "full" => Ok(ProtectSystem::Full),
        "strict" => Ok(ProtectSystem::Strict),
        v => match parse_bool(v) {
            Ok(true) => Ok(ProtectSystem::Yes),
            Ok(false) => Ok(ProtectSystem::No),
            Err(_) => Err(format!(
                "`{v}` is not a ProtectSystem= value (write yes, no, full or strict)"
            )),
        },
    }
}

/// `ProtectHome=`: a boolean, `read-only` or `tmpfs`.
pub fn parse_protect_home(value: &str) -> Result<ProtectHome, String> {
    match value.trim() {
        "read-only" => Ok(ProtectHome::ReadOnly),
        "tmpfs" => Ok(ProtectHome::Tmpfs),
        v => match parse_bool(v) {
            Ok(true) => Ok(ProtectHome::Yes),
            Ok(false) => Ok(ProtectHome::No),
            Err(_) => Err(format!(
                "`{v}` is not a ProtectHome= value (write yes, no, read-only or tmpfs)"
            )),
        },
    }
}

/// One path of a path list: `-` (a missing path is skipped) and `+`
/// (relative to the unit's root directory, which is `/` here) prefixes,
/// then an absolute path, normalised.
pub fn parse_path_rule(word: &str) -> Result<PathRule, String> {
    let (optional, rest) = match word.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, word),
    };
    let rest = rest.strip_prefix('+').unwrap_or(rest);
    Ok(PathRule {
        path: normal_absolute(rest)?,
        optional,
    })
}

/// `path` if absolute, without `.` and `..`, with repeated and trailing
/// slashes removed.
pub fn normal_absolute(path: &str) -> Result<PathBuf, String> {
    if !path.starts_with('/') {
        return Err(format!("`{path}` is not an absolute path"));
    }
    let mut out = PathBuf::from("/");
    for c in Path::new(path).components() {
        match c {
            Component::RootDir | Component::CurDir => {}
            Component::Normal(n) => out.push(n),
            Component::ParentDir | Component::Prefix(_) => {
                return Err(format!("`{path}` contains `..`"));
            }
        }
    }
    Ok(out)
}

/// Adds the paths of one assignment to a path list (an empty value clears
/// it).
pub fn assign_paths(list: &mut Vec<PathRule>, value: &str) -> Result<(), String> {
    assign_words(list, value, parse_path_rule)
}

/// Adds the words of one assignment to a list, each read by `parse` and
/// added once (an empty value clears it).
pub fn assign_words<T: PartialEq>(
    list: &mut Vec<T>,
    value: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<(), String> {
    if value.trim().is_empty() {
        list.clear();
        return Ok(());
    }
    for w in words(value)? {
        let rule = parse(&w)?;
        if !list.contains(&rule) {
            list.push(rule);
        }
    }
    Ok(())
}

/// `RestrictNamespaces=`: applies one assignment to the allowed set
/// (`None`: unrestricted). A boolean restricts every kind (`yes`) or none
/// (`no`); a list allows the kinds it names, or with `~` every kind but
/// those. As in systemd, the first list sets the allowed kinds, a later
/// plain list adds to them and a later `~` list removes from them; an
/// empty value lifts the restriction.
pub fn assign_namespaces(current: &mut Option<u64>, value: &str) -> Result<(), String> {
    let t = value.trim();
    if t.is_empty() {
        *current = None;
        return Ok(());
    }
    if let Ok(b) = parse_bool(t) {
        *current = if b { Some(0) } else { None };
        return Ok(());
    }
    let (invert, rest) = inverted(t);
    let mut flags = 0;
    for w in words(rest)? {
        let (_, f) = NAMESPACES.iter().find(|(n, _)| *n == w).ok_or_else(|| {
            format!("`{w}` is not a namespace kind (write cgroup, ipc, net, mnt, pid, user, uts or time)")
        })?;
        flags |= f;
    }
    *current = Some(match (*current, invert) {
        (None, false) => flags,
        (None, true) => ALL_NAMESPACES & !flags,
        (Some(cur), false) => cur | flags,
        (Some(cur), true) => cur & !flags,
    });
    Ok(())
}

/// An address family by name (`AF_INET`).
pub fn parse_family(word: &str) -> Result<u16, String> {
    FAMILIES
        .iter()
        .find(|(n, _)| *n == word)
        .map(|&(_, f)| f)
        .ok_or_else(|| {
            format!("`{word}` is not an address family (write e.g. AF_UNIX, AF_INET, AF_INET6)")
        })
}

/// `RestrictAddressFamilies=`: applies one assignment. `none` allows no
/// family at all; the first list decides whether the families are allowed
/// (plain) or denied (`~`); later lines of the same kind add to the list,
/// of the other kind take out of it; an empty value lifts the restriction.
pub fn assign_families(current: &mut Option<AddressFamilies>, value: &str) -> Result<(), String> {
    let t = value.trim();
    if t.is_empty() {
        *current = None;
        return Ok(());
    }
    if t == "none" {
        *current = Some(AddressFamilies {
            allow_list: true,
            families: BTreeSet::new(),
        });
        return Ok(());
    }
    let (invert, rest) = inverted(t);
    let mut listed = Vec::new();
    for w in words(rest)? {
        listed.push(parse_family(&w)?);
    }
    let set = current.get_or_insert_with(|| AddressFamilies {
        allow_list: !invert,
        families: BTreeSet::new(),
    });
    for f in listed {
        if set.allow_list != invert {
            set.families.insert(f);
        } else {
            set.families.remove(&f);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protect_system_and_home() {
        assert_eq!(parse_protect_system("strict"), Ok(ProtectSystem::Strict));
        assert_eq!(parse_protect_system("full"), Ok(ProtectSystem::Full));
        assert_eq!(parse_protect_system("yes"), Ok(ProtectSystem::Yes));
        assert_eq!(parse_protect_system("false"), Ok(ProtectSystem::No));
        assert_eq!(
            parse_protect_system("very").unwrap_err(),
            "`very` is not a ProtectSystem= value (write yes, no, full or strict)"
        );
        assert_eq!(parse_protect_home("read-only"), Ok(ProtectHome::ReadOnly));
        assert_eq!(parse_protect_home("tmpfs"), Ok(ProtectHome::Tmpfs));
        assert_eq!(parse_protect_home("1"), Ok(ProtectHome::Yes));
        assert_eq!(
            parse_protect_home("hidden").unwrap_err(),
            "`hidden` is not a ProtectHome= value (write yes, no, read-only or tmpfs)"
        );
    }

    #[test]
    fn paths_with_prefixes() {
        let mut l = Vec::new();
        assign_paths(&mut l, "-/var/lib/foo//  /run/x/./y +/etc").unwrap();
        assert_eq!(
            l,
            [
                PathRule {
                    path: "/var/lib/foo".into(),
                    optional: true
                },
                PathRule {
                    path: "/run/x/y".into(),
                    optional: false
                },
                PathRule {
                    path: "/etc".into(),
                    optional: false
                },
            ]
        );
        assert_eq!(
            assign_paths(&mut l, "var/lib").unwrap_err(),
            "`var/lib` is not an absolute path"
        );
        assert_eq!(
            assign_paths(&mut l, "/a/../b").unwrap_err(),
            "`/a/../b` contains `..`"
        );
        assign_paths(&mut l, "").unwrap();
        assert!(l.is_empty());
        assert_eq!(normal_absolute("/").unwrap(), PathBuf::from("/"));
    }

    #[test]
    fn namespaces_combine_as_systemd_does() {
        let mut n = None;
        assign_namespaces(&mut n, "yes").unwrap();
        assert_eq!(n, Some(0));
        assign_namespaces(&mut n, "no").unwrap();
        assert_eq!(n, None);
        assign_namespaces(&mut n, "net mnt").unwrap();
        assert_eq!(n, Some(0x4002_0000));
        assign_namespaces(&mut n, "~net").unwrap();
        assert_eq!(n, Some(0x0002_0000));
        let mut m = None;
        assign_namespaces(&mut m, "~user").unwrap();
        assert_eq!(m, Some(ALL_NAMESPACES & !0x1000_0000));
        assert_eq!(
            assign_namespaces(&mut m, "net mount").unwrap_err(),
            "`mount` is not a namespace kind (write cgroup, ipc, net, mnt, pid, user, uts or time)"
        );
        assign_namespaces(&mut m, "").unwrap();
        assert_eq!(m, None);
        assert_eq!(NAMESPACES.iter().fold(0, |a, (_, f)| a | f), ALL_NAMESPACES);
    }

    #[test]
    fn address_families_combine_as_systemd_does() {
        let mut f = None;
        assign_families(&mut f, "AF_UNIX AF_INET AF_INET6").unwrap();
        assign_families(&mut f, "~AF_INET6").unwrap();
        let a = f.clone().unwrap();
        assert!(a.allow_list);
        assert_eq!(a.families.into_iter().collect::<Vec<_>>(), [1, 2]);
        assign_families(&mut f, "none").unwrap();
        assert_eq!(f.as_ref().unwrap().families.len(), 0);
        let mut d = None;
        assign_families(&mut d, "~AF_PACKET AF_NETLINK").unwrap();
        assert!(!d.as_ref().unwrap().allow_list);
        assign_families(&mut d, "AF_NETLINK").unwrap();
        assert_eq!(
            d.as_ref()
                .unwrap()
                .families
                .iter()
                .copied()
                .collect::<Vec<_>>(),
            [17]
        );
        assert_eq!(
            assign_families(&mut d, "AF_CARRIER_PIGEON").unwrap_err(),
            "`AF_CARRIER_PIGEON` is not an address family (write e.g. AF_UNIX, AF_INET, AF_INET6)"
        );
        assign_families(&mut d, " ").unwrap();
        assert_eq!(d, None);
    }
}
