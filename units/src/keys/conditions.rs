//! The keys of conditions and assertions: each systemd `Condition…=` and
//! `Assert…=` of `[Unit]` (the kinds of
//! [`crate::condition::CONDITION_KINDS`]) and its YAML twin
//! (`condition-path-exists`, `assert-path-exists`), read in systemd's
//! syntax (`|` triggering, `!` negated) by
//! [`crate::condition::parse_value`]. They apply to every type.

use super::{Key, Slot, ALL};

macro_rules! cond {
    ($yaml:literal, $sd:literal, $kind:literal, $assert:literal) => {
        Key {
            name: $yaml,
            systemd: &[("Unit", $sd)],
            applies_to: ALL,
            slot: |s| Slot::Condition(&mut s.extras.conditions, $kind, $assert),
        }
    };
}

/// Every condition key, then every assertion key, in the order of
/// [`crate::condition::CONDITION_KINDS`].
pub const CONDITION_KEYS: [Key; 66] = [
    cond!(
        "condition-path-exists",
        "ConditionPathExists",
        "PathExists",
        false
    ),
    cond!(
        "condition-path-exists-glob",
        "ConditionPathExistsGlob",
        "PathExistsGlob",
        false
    ),
    cond!(
        "condition-path-is-directory",
        "ConditionPathIsDirectory",
        "PathIsDirectory",
        false
    ),
    cond!(
        "condition-path-is-symbolic-link",
        "ConditionPathIsSymbolicLink",
        "PathIsSymbolicLink",
        false
    ),
    cond!(
        "condition-path-is-mount-point",
        "ConditionPathIsMountPoint",
        "PathIsMountPoint",
        false
    ),
    cond!(
        "condition-path-is-read-write",
        "ConditionPathIsReadWrite",
        "PathIsReadWrite",
        false
    ),
    cond!(
        "condition-path-is-encrypted",
        "ConditionPathIsEncrypted",
        "PathIsEncrypted",
        false
    ),
    cond!(
        "condition-directory-not-empty",
        "ConditionDirectoryNotEmpty",
        "DirectoryNotEmpty",
        false
    ),
    cond!(
        "condition-file-not-empty",
        "ConditionFileNotEmpty",
        "FileNotEmpty",
        false
    ),
    cond!(
        "condition-file-is-executable",
        "ConditionFileIsExecutable",
        "FileIsExecutable",
        false
    ),
    cond!(
        "condition-virtualization",
        "ConditionVirtualization",
        "Virtualization",
        false
    ),
    cond!(
        "condition-kernel-command-line",
        "ConditionKernelCommandLine",
        "KernelCommandLine",
        false
    ),
    cond!(
        "condition-kernel-version",
        "ConditionKernelVersion",
        "KernelVersion",
        false
    ),
    cond!(
        "condition-architecture",
        "ConditionArchitecture",
        "Architecture",
        false
    ),
    cond!("condition-firmware", "ConditionFirmware", "Firmware", false),
    cond!("condition-host", "ConditionHost", "Host", false),
    cond!(
        "condition-capability",
        "ConditionCapability",
        "Capability",
        false
    ),
    cond!("condition-ac-power", "ConditionACPower", "ACPower", false),
    cond!(
        "condition-needs-update",
        "ConditionNeedsUpdate",
        "NeedsUpdate",
        false
    ),
    cond!(
        "condition-first-boot",
        "ConditionFirstBoot",
        "FirstBoot",
        false
    ),
    cond!("condition-security", "ConditionSecurity", "Security", false),
    cond!(
        "condition-environment",
        "ConditionEnvironment",
        "Environment",
        false
    ),
    cond!("condition-user", "ConditionUser", "User", false),
    cond!("condition-group", "ConditionGroup", "Group", false),
    cond!(
        "condition-control-group-controller",
        "ConditionControlGroupController",
        "ControlGroupController",
        false
    ),
    cond!(
        "condition-credential",
        "ConditionCredential",
        "Credential",
        false
    ),
    cond!(
        "condition-os-release",
        "ConditionOSRelease",
        "OSRelease",
        false
    ),
    cond!("condition-memory", "ConditionMemory", "Memory", false),
    cond!("condition-cpus", "ConditionCPUs", "CPUs", false),
    cond!(
        "condition-cpu-feature",
        "ConditionCPUFeature",
        "CPUFeature",
        false
    ),
    cond!(
        "condition-memory-pressure",
        "ConditionMemoryPressure",
        "MemoryPressure",
        false
    ),
    cond!(
        "condition-cpu-pressure",
        "ConditionCPUPressure",
        "CPUPressure",
        false
    ),
    cond!(
        "condition-io-pressure",
        "ConditionIOPressure",
        "IOPressure",
        false
    ),
    cond!("assert-path-exists", "AssertPathExists", "PathExists", true),
    cond!(
        "assert-path-exists-glob",
        "AssertPathExistsGlob",
        "PathExistsGlob",
        true
    ),
    cond!(
        "assert-path-is-directory",
        "AssertPathIsDirectory",
        "PathIsDirectory",
        true
    ),
    cond!(
        "assert-path-is-symbolic-link",
        "AssertPathIsSymbolicLink",
        "PathIsSymbolicLink",
        true
    ),
    cond!(
        "assert-path-is-mount-point",
        "AssertPathIsMountPoint",
        "PathIsMountPoint",
        true
    ),
    cond!(
        "assert-path-is-read-write",
        "AssertPathIsReadWrite",
        "PathIsReadWrite",
        true
    ),
    cond!(
        "assert-path-is-encrypted",
        "AssertPathIsEncrypted",
        "PathIsEncrypted",
        true
    ),
    cond!(
        "assert-directory-not-empty",
        "AssertDirectoryNotEmpty",
        "DirectoryNotEmpty",
        true
    ),
    cond!(
        "assert-file-not-empty",
        "AssertFileNotEmpty",
        "FileNotEmpty",
        true
    ),
    cond!(
        "assert-file-is-executable",
        "AssertFileIsExecutable",
        "FileIsExecutable",
        true
    ),
    cond!(
        "assert-virtualization",
        "AssertVirtualization",
        "Virtualization",
        true
    ),
    cond!(
        "assert-kernel-command-line",
        "AssertKernelCommandLine",
        "KernelCommandLine",
        true
    ),
    cond!(
        "assert-kernel-version",
        "AssertKernelVersion",
        "KernelVersion",
        true
    ),
    cond!(
        "assert-architecture",
        "AssertArchitecture",
        "Architecture",
        true
    ),
    cond!("assert-firmware", "AssertFirmware", "Firmware", true),
    cond!("assert-host", "AssertHost", "Host", true),
    cond!("assert-capability", "AssertCapability", "Capability", true),
    cond!("assert-ac-power", "AssertACPower", "ACPower", true),
    cond!(
        "assert-needs-update",
        "AssertNeedsUpdate",
        "NeedsUpdate",
        true
    ),
    cond!("assert-first-boot", "AssertFirstBoot", "FirstBoot", true),
    cond!("assert-security", "AssertSecurity", "Security", true),
    cond!(
        "assert-environment",
        "AssertEnvironment",
        "Environment",
        true
    ),
    cond!("assert-user", "AssertUser", "User", true),
    cond!("assert-group", "AssertGroup", "Group", true),
    cond!(
        "assert-control-group-controller",
        "AssertControlGroupController",
        "ControlGroupController",
        true
    ),
    cond!("assert-credential", "AssertCredential", "Credential", true),
    cond!("assert-os-release", "AssertOSRelease", "OSRelease", true),
    cond!("assert-memory", "AssertMemory", "Memory", true),
    cond!("assert-cpus", "AssertCPUs", "CPUs", true),
    cond!("assert-cpu-feature", "AssertCPUFeature", "CPUFeature", true),
    cond!(
        "assert-memory-pressure",
        "AssertMemoryPressure",
        "MemoryPressure",
        true
    ),
    cond!(
        "assert-cpu-pressure",
        "AssertCPUPressure",
        "CPUPressure",
        true
    ),
    cond!("assert-io-pressure", "AssertIOPressure", "IOPressure", true),
];
