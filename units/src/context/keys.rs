//! The keys of a service's context: one [`Key`] per systemd key, with its
//! systemd name and its YAML twin (docs/contract.md §3a: the systemd key in lower
//! kebab case), in one table.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::limits::Rlimit;

/// A context key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum Key {
    RuntimeDirectory,
    StateDirectory,
    CacheDirectory,
    LogsDirectory,
    ConfigurationDirectory,
    RuntimeDirectoryMode,
    StateDirectoryMode,
    CacheDirectoryMode,
    LogsDirectoryMode,
    ConfigurationDirectoryMode,
    RuntimeDirectoryPreserve,
    UMask,
    Nice,
    OomScoreAdjust,
    StandardInput,
    StandardInputText,
    StandardInputData,
    StandardOutput,
    StandardError,
    TtyPath,
    TtyReset,
    TtyVHangup,
    TtyVtDisallocate,
    KillMode,
    OomPolicy,
    /// `LimitCPU=` … `LimitRTTIME=`.
    Limit(Rlimit),
    MemoryMax,
    MemoryHigh,
    CpuWeight,
    CpuQuota,
    TasksMax,
    IoWeight,
    Delegate,
    Slice,
    IoAccounting,
    MemoryAccounting,
    TasksAccounting,
    DevicePolicy,
    DeviceAllow,
    IpAddressAllow,
    IpAddressDeny,
    NoNewPrivileges,
    CapabilityBoundingSet,
    AmbientCapabilities,
    PrivateTmp,
    PrivateDevices,
    PrivateNetwork,
    ProtectSystem,
    ProtectHome,
    ReadWritePaths,
    ReadOnlyPaths,
    InaccessiblePaths,
    BindPaths,
    BindReadOnlyPaths,
    ProtectKernelTunables,
    ProtectKernelModules,
    ProtectKernelLogs,
    ProtectControlGroups,
    ProtectHostname,
    ProtectClock,
    RestrictNamespaces,
    RestrictAddressFamilies,
    RestrictSuidSgid,
    LockPersonality,
    MemoryDenyWriteExecute,
    SystemCallFilter,
    SystemCallArchitectures,
    SystemCallErrorNumber,
    RestrictRealtime,
    PrivateMounts,
    ProtectProc,
    ProcSubset,
    IgnoreSigpipe,
    CpuSchedulingPolicy,
    CpuSchedulingPriority,
    CpuSchedulingResetOnFork,
    IoSchedulingClass,
    IoSchedulingPriority,
    CpuAffinity,
    NumaPolicy,
    NumaMask,
    UnsetEnvironment,
    SendSighup,
    SendSigkill,
    AppArmorProfile,
    PamName,
    SyslogIdentifier,
    SyslogLevel,
    SyslogLevelPrefix,
    LogLevelMax,
    LogExtraFields,
    LogNamespace,
    TemporaryFileSystem,
    NoExecPaths,
    ExecPaths,
    PrivateUsers,
    RemoveIpc,
    LoadCredential,
    LoadCredentialEncrypted,
    SetCredential,
    SetCredentialEncrypted,
    ImportCredential,
    /// flotilla's own key: the keys that may be skipped where the kernel
    /// cannot honour them.
    SkipUnsupported,
    /// flotilla's own key: `as-systemd` or `strict`, for settings the init
    /// lacks the privilege to apply.
    SandboxPolicy,
}

/// Every key but the `Limit*` ones: the key, its systemd name (in the
/// `[Service]` section) and its YAML name.
const TABLE: [(Key, &str, &str); 103] = [
    (
        Key::RuntimeDirectory,
        "RuntimeDirectory",
        "runtime-directory",
    ),
    (Key::StateDirectory, "StateDirectory", "state-directory"),
    (Key::CacheDirectory, "CacheDirectory", "cache-directory"),
    (Key::LogsDirectory, "LogsDirectory", "logs-directory"),
    (
        Key::ConfigurationDirectory,
        "ConfigurationDirectory",
        "configuration-directory",
    ),
    (
        Key::RuntimeDirectoryMode,
        "RuntimeDirectoryMode",
        "runtime-directory-mode",
    ),
    (
        Key::StateDirectoryMode,
        "StateDirectoryMode",
        "state-directory-mode",
    ),
    (
        Key::CacheDirectoryMode,
        "CacheDirectoryMode",
        "cache-directory-mode",
    ),
    (
        Key::LogsDirectoryMode,
        "LogsDirectoryMode",
        "logs-directory-mode",
    ),
    (
        Key::ConfigurationDirectoryMode,
        "ConfigurationDirectoryMode",
        "configuration-directory-mode",
    ),
    (
        Key::RuntimeDirectoryPreserve,
        "RuntimeDirectoryPreserve",
        "runtime-directory-preserve",
    ),
    (Key::UMask, "UMask", "umask"),
    (Key::Nice, "Nice", "nice"),
    (Key::OomScoreAdjust, "OOMScoreAdjust", "oom-score-adjust"),
    (Key::StandardInput, "StandardInput", "standard-input"),
    (
        Key::StandardInputText,
        "StandardInputText",
        "standard-input-text",
    ),
    (
        Key::StandardInputData,
        "StandardInputData",
        "standard-input-data",
    ),
    (Key::StandardOutput, "StandardOutput", "standard-output"),
    (Key::StandardError, "StandardError", "standard-error"),
    (Key::TtyPath, "TTYPath", "tty-path"),
    (Key::TtyReset, "TTYReset", "tty-reset"),
    (Key::TtyVHangup, "TTYVHangup", "tty-vhangup"),
    (
        Key::TtyVtDisallocate,
        "TTYVTDisallocate",
        "tty-vt-disallocate",
    ),
    (Key::KillMode, "KillMode", "kill-mode"),
    (Key::OomPolicy, "OOMPolicy", "oom-policy"),
    (Key::MemoryMax, "MemoryMax", "memory-max"),
    (Key::MemoryHigh, "MemoryHigh", "memory-high"),
    (Key::CpuWeight, "CPUWeight", "cpu-weight"),
    (Key::CpuQuota, "CPUQuota", "cpu-quota"),
    (Key::TasksMax, "TasksMax", "tasks-max"),
    (Key::IoWeight, "IOWeight", "io-weight"),
    (Key::Delegate, "Delegate", "delegate"),
    (Key::Slice, "Slice", "slice"),
    (Key::IoAccounting, "IOAccounting", "io-accounting"),
    (
        Key::MemoryAccounting,
        "MemoryAccounting",
        "memory-accounting",
    ),
    (Key::TasksAccounting, "TasksAccounting", "tasks-accounting"),
    (Key::DevicePolicy, "DevicePolicy", "device-policy"),
    (Key::DeviceAllow, "DeviceAllow", "device-allow"),
    (Key::IpAddressAllow, "IPAddressAllow", "ip-address-allow"),
    (Key::IpAddressDeny, "IPAddressDeny", "ip-address-deny"),
    (Key::NoNewPrivileges, "NoNewPrivileges", "no-new-privileges"),
    (
        Key::CapabilityBoundingSet,
        "CapabilityBoundingSet",
        "capability-bounding-set",
    ),
    (
        Key::AmbientCapabilities,
        "AmbientCapabilities",
        "ambient-capabilities",
    ),
    (Key::PrivateTmp, "PrivateTmp", "private-tmp"),
    (Key::PrivateDevices, "PrivateDevices", "private-devices"),
    (Key::PrivateNetwork, "PrivateNetwork", "private-network"),
    (Key::ProtectSystem, "ProtectSystem", "protect-system"),
    (Key::ProtectHome, "ProtectHome", "protect-home"),
    (Key::ReadWritePaths, "ReadWritePaths", "read-write-paths"),
    (Key::ReadOnlyPaths, "ReadOnlyPaths", "read-only-paths"),
    (
        Key::InaccessiblePaths,
        "InaccessiblePaths",
        "inaccessible-paths",
    ),
    (Key::BindPaths, "BindPaths", "bind-paths"),
    (
        Key::BindReadOnlyPaths,
        "BindReadOnlyPaths",
        "bind-read-only-paths",
    ),
    (
        Key::ProtectKernelTunables,
        "ProtectKernelTunables",
        "protect-kernel-tunables",
    ),
    (
        Key::ProtectKernelModules,
        "ProtectKernelModules",
        "protect-kernel-modules",
    ),
    (
        Key::ProtectKernelLogs,
        "ProtectKernelLogs",
        "protect-kernel-logs",
    ),
    (
        Key::ProtectControlGroups,
        "ProtectControlGroups",
        "protect-control-groups",
    ),
    (Key::ProtectHostname, "ProtectHostname", "protect-hostname"),
    (Key::ProtectClock, "ProtectClock", "protect-clock"),
    (
        Key::RestrictNamespaces,
        "RestrictNamespaces",
        "restrict-namespaces",
    ),
    (
        Key::RestrictAddressFamilies,
        "RestrictAddressFamilies",
        "restrict-address-families",
    ),
    (
        Key::RestrictSuidSgid,
        "RestrictSUIDSGID",
        "restrict-suid-sgid",
    ),
    (Key::LockPersonality, "LockPersonality", "lock-personality"),
    (
        Key::MemoryDenyWriteExecute,
        "MemoryDenyWriteExecute",
        "memory-deny-write-execute",
    ),
    (
        Key::SystemCallFilter,
        "SystemCallFilter",
        "system-call-filter",
    ),
    (
        Key::SystemCallArchitectures,
        "SystemCallArchitectures",
        "system-call-architectures",
    ),
    (
        Key::SystemCallErrorNumber,
        "SystemCallErrorNumber",
        "system-call-error-number",
    ),
    (
        Key::RestrictRealtime,
        "RestrictRealtime",
        "restrict-realtime",
    ),
    (Key::PrivateMounts, "PrivateMounts", "private-mounts"),
    (Key::ProtectProc, "ProtectProc", "protect-proc"),
    (Key::ProcSubset, "ProcSubset", "proc-subset"),
    (Key::IgnoreSigpipe, "IgnoreSIGPIPE", "ignore-sigpipe"),
    (
        Key::TemporaryFileSystem,
        "TemporaryFileSystem",
        "temporary-file-system",
    ),
    (Key::NoExecPaths, "NoExecPaths", "no-exec-paths"),
    (Key::ExecPaths, "ExecPaths", "exec-paths"),
    (Key::PrivateUsers, "PrivateUsers", "private-users"),
    (Key::RemoveIpc, "RemoveIPC", "remove-ipc"),
    (Key::LoadCredential, "LoadCredential", "load-credential"),
    (
        Key::LoadCredentialEncrypted,
        "LoadCredentialEncrypted",
        "load-credential-encrypted",
    ),
    (Key::SetCredential, "SetCredential", "set-credential"),
    (
        Key::SetCredentialEncrypted,
        "SetCredentialEncrypted",
        "set-credential-encrypted",
    ),
    (
        Key::ImportCredential,
        "ImportCredential",
        "import-credential",
    ),
    (
        Key::CpuSchedulingPolicy,
        "CPUSchedulingPolicy",
        "cpu-scheduling-policy",
    ),
    (
        Key::CpuSchedulingPriority,
        "CPUSchedulingPriority",
        "cpu-scheduling-priority",
    ),
    (
        Key::CpuSchedulingResetOnFork,
        "CPUSchedulingResetOnFork",
        "cpu-scheduling-reset-on-fork",
    ),
    (
        Key::IoSchedulingClass,
        "IOSchedulingClass",
        "io-scheduling-class",
    ),
    (
        Key::IoSchedulingPriority,
        "IOSchedulingPriority",
        "io-scheduling-priority",
    ),
    (Key::CpuAffinity, "CPUAffinity", "cpu-affinity"),
    (Key::NumaPolicy, "NUMAPolicy", "numa-policy"),
    (Key::NumaMask, "NUMAMask", "numa-mask"),
    (
        Key::UnsetEnvironment,
        "UnsetEnvironment",
        "unset-environment",
    ),
    (Key::SendSighup, "SendSIGHUP", "send-sighup"),
    (Key::SendSigkill, "SendSIGKILL", "send-sigkill"),
    (Key::AppArmorProfile, "AppArmorProfile", "apparmor-profile"),
    (Key::PamName, "PAMName", "pam-name"),
    (
        Key::SyslogIdentifier,
        "SyslogIdentifier",
        "syslog-identifier",
    ),
    (Key::SyslogLevel, "SyslogLevel", "syslog-level"),
    (
        Key::SyslogLevelPrefix,
        "SyslogLevelPrefix",
        "syslog-level-prefix",
    ),
    (Key::LogLevelMax, "LogLevelMax", "log-level-max"),
    (Key::LogExtraFields, "LogExtraFields", "log-extra-fields"),
    (Key::LogNamespace, "LogNamespace", "log-namespace"),
    (
        Key::SkipUnsupported,
        "X-SkipUnsupported",
        "skip-unsupported",
    ),
    (Key::SandboxPolicy, "X-Sandbox", "sandbox"),
];

/// Older systemd names that still work, and the key each stands for.
const ALIASES: [(&str, Key); 3] = [
    ("ReadWriteDirectories", Key::ReadWritePaths),
    ("ReadOnlyDirectories", Key::ReadOnlyPaths),
    ("InaccessibleDirectories", Key::InaccessiblePaths),
];

/// The YAML names of the `Limit*` keys, in [`Rlimit::ALL`] order.
const LIMIT_YAML: [&str; 16] = [
    "limit-cpu",
    "limit-fsize",
    "limit-data",
    "limit-stack",
    "limit-core",
    "limit-rss",
    "limit-nproc",
    "limit-nofile",
    "limit-memlock",
    "limit-as",
    "limit-locks",
    "limit-sigpending",
    "limit-msgqueue",
    "limit-nice",
    "limit-rtprio",
    "limit-rttime",
];

impl Key {
    /// Every key, in table order, then the `Limit*` keys.
    pub fn all() -> impl Iterator<Item = Key> {
        TABLE
            .iter()
            .map(|&(k, _, _)| k)
            .chain(Rlimit::ALL.iter().map(|&r| Key::Limit(r)))
    }

    /// The systemd name: `ProtectSystem`.
    pub fn systemd_name(self) -> &'static str {
        match self {
            Key::Limit(r) => r.key(),
            k => TABLE
                .iter()
                .find(|(t, _, _)| *t == k)
                .map_or("", |&(_, s, _)| s),
        }
    }

    /// The YAML name: `protect-system`.
    pub fn yaml_name(self) -> &'static str {
        match self {
            Key::Limit(r) => LIMIT_YAML.get(r.number() as usize).copied().unwrap_or(""),
            k => TABLE
                .iter()
                .find(|(t, _, _)| *t == k)
                .map_or("", |&(_, _, y)| y),
        }
    }

    /// The key of a systemd name (`ProtectSystem`, or an older alias such
    /// as `ReadOnlyDirectories`).
    pub fn from_systemd(name: &str) -> Option<Key> {
        TABLE
            .iter()
            .find(|(_, s, _)| *s == name)
            .map(|&(k, _, _)| k)
            .or_else(|| ALIASES.iter().find(|(a, _)| *a == name).map(|&(_, k)| k))
            .or_else(|| {
                Rlimit::ALL
                    .iter()
                    .find(|r| r.key() == name)
                    .map(|&r| Key::Limit(r))
            })
    }

    /// The key of a YAML name (`protect-system`).
    pub fn from_yaml(name: &str) -> Option<Key> {
        Key::all().find(|k| k.yaml_name() == name)
    }

    /// The key of either name.
    pub fn from_name(name: &str) -> Option<Key> {
        Key::from_systemd(name).or_else(|| Key::from_yaml(name))
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}=", self.systemd_name())
    }
}

impl Serialize for Key {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.yaml_name())
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        let name = String::deserialize(d)?;
        Key::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("`{name}` is not a context key")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_has_both_names_and_they_round_trip() {
        let all: Vec<Key> = Key::all().collect();
        assert_eq!(all.len(), 103 + 16);
        for k in all {
            assert!(
                !k.systemd_name().is_empty() && !k.yaml_name().is_empty(),
                "{k:?}"
            );
            assert_eq!(Key::from_systemd(k.systemd_name()), Some(k));
            assert_eq!(Key::from_yaml(k.yaml_name()), Some(k));
            // The YAML name is the systemd one in lower kebab case.
            let flat: String = k.systemd_name().trim_start_matches("X-").to_lowercase();
            assert_eq!(k.yaml_name().replace('-', ""), flat, "{k:?}");
        }
    }

    #[test]
    fn names_aliases_and_display() {
        assert_eq!(
            Key::from_systemd("LimitNOFILE"),
            Some(Key::Limit(Rlimit::Nofile))
        );
        assert_eq!(
            Key::from_yaml("limit-nofile"),
            Some(Key::Limit(Rlimit::Nofile))
        );
        assert_eq!(
            Key::from_systemd("ReadOnlyDirectories"),
            Some(Key::ReadOnlyPaths)
        );
        assert_eq!(
            Key::from_name("oom-score-adjust"),
            Some(Key::OomScoreAdjust)
        );
        assert_eq!(Key::from_name("ExecStart"), None);
        assert_eq!(Key::ProtectSystem.to_string(), "ProtectSystem=");
        let json = serde_json::to_string(&Key::CpuQuota).unwrap();
        assert_eq!(json, r#""cpu-quota""#);
        assert_eq!(serde_json::from_str::<Key>(&json).unwrap(), Key::CpuQuota);
        assert!(serde_json::from_str::<Key>(r#""bogus""#).is_err());
    }
}
