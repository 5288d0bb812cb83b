//! The context of a service: everything about how its processes run that
//! is not the command itself — the directories made for it, its umask,
//! resource limits, nice level and OOM score, where its output goes, how a
//! stop reaches its processes, its cgroup limits and its sandbox.
//!
//! This is the pure half (the init applies it: `init/src/sys/context.rs`).
//! A [`ServiceContext`] is built key by key with [`ServiceContext::set`],
//! which takes each value in systemd's syntax (`systemd.exec(5)`,
//! `systemd.resource-control(5)`) and returns a typed value or an error
//! that says what is wrong with it. A key given several times is set once
//! per assignment, in file order, and the assignments combine as systemd
//! combines them (lists add up; an empty value resets).
//!
//! | module | keys |
//! | --- | --- |
//! | [`keys`] | the table of keys, systemd and YAML names |
//! | [`dirs`] | `RuntimeDirectory=` … `ConfigurationDirectory=`, their modes |
//! | [`process`] | `UMask=`, `Nice=`, `OOMScoreAdjust=`, `StandardOutput=`, `StandardError=`, `KillMode=`, `OOMPolicy=`, `SendSIGHUP=`, `SendSIGKILL=`, `UnsetEnvironment=`, `PAMName=` |
//! | [`journal`] | `SyslogIdentifier=`, `SyslogLevel=`, `SyslogLevelPrefix=`, the journal stream's header; `LogLevelMax=`, `LogExtraFields=` |
//! | [`placement`] | `CPUAffinity=`, `NUMAPolicy=`, `NUMAMask=` |
//! | [`log_namespace`] | `LogNamespace=` |
//! | [`scheduling`] | `CPUSchedulingPolicy=`, `CPUSchedulingPriority=`, `CPUSchedulingResetOnFork=`, `IOSchedulingClass=`, `IOSchedulingPriority=` |
//! | [`input`] | `StandardInput=`, `StandardInputText=`, `StandardInputData=`, `TTYPath=`, `TTYReset=`, `TTYVHangup=`, `TTYVTDisallocate=` |
//! | [`limits`] | `LimitCPU=` … `LimitRTTIME=` |
//! | [`resources`] | `MemoryMax=`, `MemoryHigh=`, `CPUWeight=`, `CPUQuota=`, `TasksMax=`, `IOWeight=`, `Delegate=`, `IOAccounting=`, `MemoryAccounting=`, `TasksAccounting=` |
//! | [`slice`] | `Slice=` |
//! | [`devices`] | `DevicePolicy=`, `DeviceAllow=` |
//! | [`ipaccess`] | `IPAddressAllow=`, `IPAddressDeny=` |
//! | [`sandbox`], [`caps`], [`syscalls`] | the sandbox |
//! | [`apparmor`] | `AppArmorProfile=` |
//! | [`credentials`] | `LoadCredential=`, `SetCredential=` |
//! | [`binds`] | `BindPaths=`, `BindReadOnlyPaths=` |
//! | [`tmpfs`] | `TemporaryFileSystem=` |
//! | [`mounts`] | the mount namespace the sandbox keys ask for, as a plan |
//! | [`policy`] | `X-Sandbox=` (YAML `sandbox`): degrade as systemd, or fail |
//!
//! `X-SkipUnsupported=` (YAML `skip-unsupported`) lists keys that may be
//! skipped where the kernel cannot honour them; any other key that cannot
//! be honoured is an error that names it.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

pub mod apparmor;
pub mod binds;
pub mod caps;
pub mod clean;
pub mod credentials;
pub mod devices;
pub mod dirs;
pub mod errno;
pub mod input;
pub mod ipaccess;
pub mod journal;
pub mod keys;
pub mod limits;
pub mod log_namespace;
pub mod mounts;
pub mod placement;
pub mod policy;
pub mod process;
pub mod resources;
pub mod sandbox;
pub mod scheduling;
pub mod scope;
pub mod slice;
mod syscall_table;
pub mod syscalls;
pub mod tmpfs;
pub mod value;

pub use keys::Key;

use credentials::Credentials;
use dirs::{assign_dirs, parse_dir_mode, parse_preserve, DirKind, Directories};
use input::{Input, Tty};
use journal::Syslog;
use limits::{parse_rlimit, Rlimit, RlimitValue};
use process::{
    assign_unset, parse_kill_mode, parse_nice, parse_oom_policy, parse_oom_score_adjust,
    parse_output, parse_pam_name, parse_umask, KillMode, OomPolicy, Output,
};
use resources::{parse_cpu_quota, parse_memory, parse_tasks, parse_weight, Resources};
use sandbox::{
    assign_families, assign_namespaces, assign_paths, parse_proc_subset, parse_protect_home,
    parse_protect_proc, parse_protect_system, Sandbox,
};
use scheduling::{
    parse_cpu_policy, parse_cpu_priority, parse_io_class, parse_io_priority, Scheduling,
};
use value::{parse_bool, words};

/// Everything about how a service's processes run, beside the command.
/// The default is what a unit without any of these keys gets: nothing
/// changes from the init's own context.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct ServiceContext {
    /// The directories made before the service starts.
    #[serde(skip_serializing_if = "Directories::is_empty")]
    pub directories: Directories,
    /// `UMask=`; `None`: the init's (022 as PID 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub umask: Option<u32>,
    /// `Limit*=`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub limits: BTreeMap<Rlimit, RlimitValue>,
    /// `Nice=`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nice: Option<i32>,
    /// `OOMScoreAdjust=`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oom_score_adjust: Option<i32>,
    /// `StandardInput=`; `None`: `data` when there is data, else `null`
    /// ([`ServiceContext::input`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standard_input: Option<Input>,
    /// The bytes of `StandardInputText=` and `StandardInputData=`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub input_data: Vec<u8>,
    /// `TTYPath=`, `TTYReset=`, `TTYVHangup=`, `TTYVTDisallocate=`.
    #[serde(skip_serializing_if = "is_default")]
    pub tty: Tty,
    /// `StandardOutput=`; `None`: the unit's log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standard_output: Option<Output>,
    /// `StandardError=`; `None`: where stdout goes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standard_error: Option<Output>,
    /// `SyslogIdentifier=`, `SyslogLevel=`, `SyslogLevelPrefix=`: how
    /// the output looks in the journal.
    #[serde(skip_serializing_if = "is_default")]
    pub syslog: Syslog,
    /// `LogNamespace=`: the journald instance the output goes to; `None`:
    /// the system's journal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_namespace: Option<log_namespace::LogNamespace>,
    /// `KillMode=`.
    #[serde(skip_serializing_if = "is_default")]
    pub kill_mode: KillMode,
    /// `OOMPolicy=`.
    #[serde(skip_serializing_if = "is_default")]
    pub oom_policy: OomPolicy,
    /// `SendSIGHUP=`: a stop's signal is followed by `SIGHUP` (for shells
    /// and other programs that take it as the line's end).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub send_sighup: bool,
    /// `SendSIGKILL=no`: a stop that times out sends no `SIGKILL` (nor
    /// do the leftovers of a dead main process's group get one); the
    /// unit fails with `timeout` and what is left runs on. By default
    /// (`yes`, as systemd's) it is sent.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_sigkill: bool,
    /// `AppArmorProfile=`: the profile the processes change to at
    /// `execve`, where AppArmor is enabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apparmor_profile: Option<apparmor::AppArmorProfile>,
    /// `PAMName=`: with `User=`, the processes run inside a session of
    /// this PAM service (`flotilla-pam`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pam_name: Option<String>,
    /// `UnsetEnvironment=`: variables (`NAME`) or assignments
    /// (`NAME=value`) taken out of the environment last.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unset_environment: Vec<String>,
    /// The CPU and I/O scheduling.
    #[serde(skip_serializing_if = "is_default")]
    pub scheduling: Scheduling,
    /// The CPUs and NUMA nodes the processes run on and take memory from.
    #[serde(skip_serializing_if = "is_default")]
    pub placement: placement::Placement,
    /// `IgnoreSIGPIPE=no`: the processes start with `SIGPIPE` at its
    /// default (death); by default (`yes`, as systemd's) it is ignored.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub keep_sigpipe: bool,
    /// The cgroup limits.
    #[serde(skip_serializing_if = "Resources::is_empty")]
    pub resources: Resources,
    /// The sandbox.
    #[serde(skip_serializing_if = "is_default")]
    pub sandbox: Sandbox,
    /// `LoadCredential=`, `SetCredential=`.
    #[serde(skip_serializing_if = "Credentials::is_empty")]
    pub credentials: Credentials,
    /// `RemoveIPC=`: at stop, the System V IPC objects and POSIX message
    /// queues of the unit's user are removed (not root's).
    #[serde(rename = "remove-ipc", skip_serializing_if = "std::ops::Not::not")]
    pub remove_ipc: bool,
    /// `X-SkipUnsupported=`: keys that may be skipped (with a note) where
    /// the kernel cannot honour them.
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub skip_unsupported: BTreeSet<Key>,
    /// `X-Sandbox=` (YAML `sandbox`): what a setting that cannot be
    /// applied does; `None`: the init's config decides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox_policy: Option<policy::SandboxPolicy>,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

impl ServiceContext {
    /// Whether no key is set.
    pub fn is_empty(&self) -> bool {
        *self == ServiceContext::default()
    }

    /// Whether every key set is one a slice takes (`slice::takes`) or
    /// its place (`Slice=`): a slice unit's context.
    pub fn is_resource_control_only(&self) -> bool {
        Key::all()
            .filter(|k| *k != Key::Slice && !slice::takes(*k))
            .all(|k| !self.is_set(k))
    }

    /// Whether `key` may be skipped where the kernel cannot honour it.
    pub fn may_skip(&self, key: Key) -> bool {
        self.skip_unsupported.contains(&key)
    }

    /// Whether `key` is set to something other than its default (a copy
    /// of the context with the key reset differs).
    pub fn is_set(&self, key: Key) -> bool {
        let mut bare = self.clone();
        bare.reset(key);
        bare != *self
    }

    /// `key` back to its default (for a key left out).
    pub fn reset(&mut self, key: Key) {
        match key {
            Key::CapabilityBoundingSet => self.sandbox.capability_bounding_set = None,
            Key::AmbientCapabilities => self.sandbox.ambient_capabilities = None,
            // An empty `Delegate=` turns delegation on (with no controller).
            Key::Delegate => self.resources.delegate = None,
            // Every other key's empty value is its default.
            k => {
                let _ = self.set(k, "");
            }
        }
    }

    /// Whether a key of [`sandbox::MOUNT_KEYS`] is set: the unit's
    /// processes need a mount namespace of their own.
    pub fn needs_mount_namespace(&self) -> bool {
        sandbox::MOUNT_KEYS.iter().any(|&k| self.is_set(k))
    }

    /// Applies one assignment of `key` (one line of a unit file, or one
    /// YAML value) in systemd's syntax. An empty value resets the key to
    /// its default (lists are emptied; `CapabilityBoundingSet=` becomes
    /// the empty set, as in systemd). The error says what is wrong with
    /// the value, for the caller to prefix with the key and position;
    /// nothing changes on error.
    ///
    /// ```
    /// use flotilla_units::context::{Key, ServiceContext};
    /// use flotilla_units::context::sandbox::ProtectSystem;
    /// let mut c = ServiceContext::default();
    /// c.set(Key::ProtectSystem, "strict").unwrap();
    /// c.set(Key::from_systemd("LimitNOFILE").unwrap(), "65536").unwrap();
    /// assert_eq!(c.sandbox.protect_system, ProtectSystem::Strict);
    /// assert!(c.set(Key::Nice, "30").is_err());
    /// ```
    pub fn set(&mut self, key: Key, value: &str) -> Result<(), String> {
        let mut next = self.clone();
        next.apply(key, value)?;
        *self = next;
        Ok(())
    }

    /// Applies one option of a unit file's `[Service]` section if `name`
    /// is a context key (its systemd name, or an older alias); `None`
    /// when it is not one.
    ///
    /// ```
    /// use flotilla_units::context::ServiceContext;
    /// let mut c = ServiceContext::default();
    /// assert_eq!(c.set_systemd("UMask", "0027"), Some(Ok(())));
    /// assert!(c.set_systemd("UMask", "0999").is_some_and(|r| r.is_err()));
    /// assert_eq!(c.set_systemd("ExecStart", "/bin/true"), None);
    /// ```
    pub fn set_systemd(&mut self, name: &str, value: &str) -> Option<Result<(), String>> {
        Key::from_systemd(name).map(|k| self.set(k, value))
    }

    /// The context the `[Service]` options of a unit file set, other
    /// options left aside; the first bad value is an error naming its key
    /// (`UMask=0999: …`). For tools and tests: the loader reports every
    /// problem with its position itself.
    pub fn from_service_options(
        options: &[crate::fleet::UnitOption],
    ) -> Result<ServiceContext, String> {
        let mut c = ServiceContext::default();
        for o in options.iter().filter(|o| o.section == "Service") {
            if let Some(Err(e)) = c.set_systemd(&o.name, &o.value) {
                return Err(format!("{}={}: {e}", o.name, o.value));
            }
        }
        Ok(c)
    }

    fn apply(&mut self, key: Key, value: &str) -> Result<(), String> {
        let empty = value.trim().is_empty();
        let sb = &mut self.sandbox;
        // A boolean key: an empty value is `no`.
        let flag = |v: &str| if empty { Ok(false) } else { parse_bool(v) };
        match key {
            Key::RuntimeDirectory => assign_dirs(&mut self.directories.runtime, value)?,
            Key::StateDirectory => assign_dirs(&mut self.directories.state, value)?,
            Key::CacheDirectory => assign_dirs(&mut self.directories.cache, value)?,
            Key::LogsDirectory => assign_dirs(&mut self.directories.logs, value)?,
            Key::ConfigurationDirectory => assign_dirs(&mut self.directories.configuration, value)?,
            Key::RuntimeDirectoryMode => self.set_dir_mode(DirKind::Runtime, value)?,
            Key::StateDirectoryMode => self.set_dir_mode(DirKind::State, value)?,
            Key::CacheDirectoryMode => self.set_dir_mode(DirKind::Cache, value)?,
            Key::LogsDirectoryMode => self.set_dir_mode(DirKind::Logs, value)?,
            Key::ConfigurationDirectoryMode => self.set_dir_mode(DirKind::Configuration, value)?,
            Key::RuntimeDirectoryPreserve => {
                self.directories.runtime_preserve = or_default(empty, value, parse_preserve)?
            }
            Key::UMask => self.umask = optional(empty, value, parse_umask)?,
            Key::Nice => self.nice = optional(empty, value, parse_nice)?,
            Key::OomScoreAdjust => {
                self.oom_score_adjust = optional(empty, value, parse_oom_score_adjust)?
            }
            Key::StandardInput => self.standard_input = optional(empty, value, input::parse_input)?,
            Key::StandardInputText => input::add_text(&mut self.input_data, value)?,
            Key::StandardInputData => input::add_data(&mut self.input_data, value)?,
            Key::TtyPath => self.tty.path = optional(empty, value, input::parse_tty_path)?,
            Key::TtyReset => self.tty.reset = input::parse_flag(value)?,
            Key::TtyVHangup => self.tty.vhangup = input::parse_flag(value)?,
            Key::TtyVtDisallocate => self.tty.vt_disallocate = input::parse_flag(value)?,
            Key::StandardOutput => self.standard_output = optional(empty, value, parse_output)?,
            Key::StandardError => self.standard_error = optional(empty, value, parse_output)?,
            Key::KillMode => self.kill_mode = or_default(empty, value, parse_kill_mode)?,
            Key::OomPolicy => self.oom_policy = or_default(empty, value, parse_oom_policy)?,
            Key::IgnoreSigpipe => self.keep_sigpipe = !empty && !parse_bool(value)?,
            Key::SendSighup => self.send_sighup = flag(value)?,
            Key::SendSigkill => self.no_sigkill = !empty && !parse_bool(value)?,
            Key::AppArmorProfile => {
                self.apparmor_profile = optional(empty, value, apparmor::parse_apparmor_profile)?
            }
            Key::PamName => self.pam_name = optional(empty, value, parse_pam_name)?,
            Key::SyslogIdentifier => {
                self.syslog.identifier = optional(empty, value, journal::parse_identifier)?
            }
            Key::SyslogLevel => self.syslog.level = optional(empty, value, journal::parse_level)?,
            Key::SyslogLevelPrefix => {
                self.syslog.level_prefix = optional(empty, value, parse_bool)?
            }
            Key::LogLevelMax => {
                self.syslog.level_max = optional(empty, value, journal::parse_level_max)?
            }
            Key::LogExtraFields => {
                journal::assign_extra_fields(&mut self.syslog.extra_fields, value)?
            }
            Key::LogNamespace => {
                self.log_namespace = optional(empty, value, log_namespace::LogNamespace::parse)?
            }
            Key::UnsetEnvironment => assign_unset(&mut self.unset_environment, value)?,
            Key::CpuSchedulingPolicy => {
                self.scheduling.cpu_policy = optional(empty, value, parse_cpu_policy)?
            }
            Key::CpuSchedulingPriority => {
                self.scheduling.cpu_priority = optional(empty, value, parse_cpu_priority)?
            }
            Key::CpuSchedulingResetOnFork => self.scheduling.cpu_reset_on_fork = flag(value)?,
            Key::IoSchedulingClass => {
                self.scheduling.io_class = optional(empty, value, parse_io_class)?
            }
            Key::IoSchedulingPriority => {
                self.scheduling.io_priority = optional(empty, value, parse_io_priority)?
            }
            Key::CpuAffinity => {
                placement::assign_affinity(&mut self.placement.cpu_affinity, value)?
            }
            Key::NumaPolicy => {
                self.placement.numa_policy = optional(empty, value, placement::parse_numa_policy)?
            }
            Key::NumaMask => placement::assign_mask(&mut self.placement.numa_mask, value)?,
            Key::Limit(r) => {
                if empty {
                    self.limits.remove(&r);
                } else {
                    self.limits.insert(r, parse_rlimit(r, value)?);
                }
            }
            Key::MemoryMax => self.resources.memory_max = optional(empty, value, parse_memory)?,
            Key::MemoryHigh => self.resources.memory_high = optional(empty, value, parse_memory)?,
            Key::CpuWeight => self.resources.cpu_weight = optional(empty, value, parse_weight)?,
            Key::CpuQuota => self.resources.cpu_quota = optional(empty, value, parse_cpu_quota)?,
            Key::TasksMax => self.resources.tasks_max = optional(empty, value, parse_tasks)?,
            Key::IoWeight => self.resources.io_weight = optional(empty, value, parse_weight)?,
            Key::Delegate => resources::assign_delegate(&mut self.resources.delegate, value)?,
            Key::Slice => self.resources.slice = optional(empty, value, slice::parse_slice)?,
            Key::IoAccounting | Key::MemoryAccounting | Key::TasksAccounting => {
                resources::assign_accounting(
                    &mut self.resources.accounting,
                    key.systemd_name(),
                    value,
                )?
            }
            Key::DevicePolicy => {
                self.resources.devices.policy = or_default(empty, value, devices::parse_policy)?
            }
            Key::DeviceAllow => devices::assign_allow(&mut self.resources.devices.allow, value)?,
            Key::IpAddressAllow => ipaccess::assign(&mut self.resources.ip_access.allow, value)?,
            Key::IpAddressDeny => ipaccess::assign(&mut self.resources.ip_access.deny, value)?,
            Key::NoNewPrivileges => sb.no_new_privileges = flag(value)?,
            Key::CapabilityBoundingSet => caps::assign(&mut sb.capability_bounding_set, value)?,
            Key::AmbientCapabilities => caps::assign(&mut sb.ambient_capabilities, value)?,
            Key::PrivateTmp => {
                // systemd 257's `disconnected` (a tmpfs not shared with the
                // host) is what flotilla always does.
                sb.private_tmp = value.trim() == "disconnected" || flag(value)?
            }
            Key::PrivateDevices => sb.private_devices = flag(value)?,
            Key::PrivateNetwork => sb.private_network = flag(value)?,
            Key::ProtectSystem => {
                sb.protect_system = or_default(empty, value, parse_protect_system)?
            }
            Key::ProtectHome => sb.protect_home = or_default(empty, value, parse_protect_home)?,
            Key::ReadWritePaths => assign_paths(&mut sb.read_write_paths, value)?,
            Key::ReadOnlyPaths => assign_paths(&mut sb.read_only_paths, value)?,
            Key::InaccessiblePaths => assign_paths(&mut sb.inaccessible_paths, value)?,
            Key::BindPaths => binds::assign(&mut sb.bind_paths, value)?,
            Key::BindReadOnlyPaths => binds::assign(&mut sb.bind_read_only_paths, value)?,
            Key::TemporaryFileSystem => tmpfs::assign(&mut sb.temporary_file_systems, value)?,
            Key::NoExecPaths => assign_paths(&mut sb.no_exec_paths, value)?,
            Key::ExecPaths => assign_paths(&mut sb.exec_paths, value)?,
            Key::PrivateUsers => sb.private_users = flag(value)?,
            Key::RemoveIpc => self.remove_ipc = flag(value)?,
            Key::LoadCredential => credentials::assign_load(&mut self.credentials.load, value)?,
            Key::SetCredential => credentials::assign_set(&mut self.credentials.set, value)?,
            Key::LoadCredentialEncrypted | Key::SetCredentialEncrypted if !empty => {
                credentials::refuse_encrypted()?
            }
            Key::ImportCredential => {
                credentials::assign_import(&mut self.credentials.import, value)?
            }
            Key::LoadCredentialEncrypted | Key::SetCredentialEncrypted => {}
            Key::ProtectKernelTunables => sb.protect_kernel_tunables = flag(value)?,
            Key::ProtectKernelModules => sb.protect_kernel_modules = flag(value)?,
            Key::ProtectKernelLogs => sb.protect_kernel_logs = flag(value)?,
            Key::ProtectControlGroups => sb.protect_control_groups = flag(value)?,
            Key::ProtectHostname => sb.protect_hostname = flag(value)?,
            Key::ProtectClock => sb.protect_clock = flag(value)?,
            Key::RestrictNamespaces => assign_namespaces(&mut sb.restrict_namespaces, value)?,
            Key::RestrictAddressFamilies => {
                assign_families(&mut sb.restrict_address_families, value)?
            }
            Key::RestrictSuidSgid => sb.restrict_suid_sgid = flag(value)?,
            Key::LockPersonality => sb.lock_personality = flag(value)?,
            Key::MemoryDenyWriteExecute => sb.memory_deny_write_execute = flag(value)?,
            Key::RestrictRealtime => sb.restrict_realtime = flag(value)?,
            Key::PrivateMounts => sb.private_mounts = flag(value)?,
            Key::ProtectProc => sb.protect_proc = or_default(empty, value, parse_protect_proc)?,
            Key::ProcSubset => sb.proc_subset_pid = !empty && parse_proc_subset(value)?,
            Key::SystemCallFilter => sb.system_call_filter.assign(value)?,
            Key::SystemCallArchitectures => {
                syscalls::assign_arches(&mut sb.system_call_architectures, value)?
            }
            Key::SystemCallErrorNumber => {
                sb.system_call_error_number = optional(empty, value, syscalls::parse_deny)?
            }
            Key::SandboxPolicy => {
                self.sandbox_policy = if empty {
                    None
                } else {
                    Some(policy::SandboxPolicy::parse(value)?)
                }
            }
            Key::SkipUnsupported => {
                if empty {
                    self.skip_unsupported.clear();
                }
                for w in words(value)? {
                    let k = Key::from_name(&w)
                        .ok_or_else(|| format!("`{w}` is not a key of the service context"))?;
                    self.skip_unsupported.insert(k);
                }
            }
        }
        Ok(())
    }

    /// Where standard input comes from: `StandardInput=`, else `data`
    /// when `StandardInputText=` or `StandardInputData=` gave some (as
    /// systemd defaults it), else `null`.
    pub fn input(&self) -> Input {
        match &self.standard_input {
            Some(i) => i.clone(),
            None if !self.input_data.is_empty() => Input::Data,
            None => Input::Null,
        }
    }

    /// Whether standard output is what standard input is
    /// ([`input::output_follows_input`]).
    pub fn output_follows_input(&self) -> bool {
        input::output_follows_input(&self.input(), self.standard_output.as_ref())
    }

    /// Whether standard error is what standard input is: it follows
    /// standard output (unset or `inherit`), which follows the input.
    pub fn error_follows_input(&self) -> bool {
        matches!(self.standard_error, None | Some(Output::Inherit)) && self.output_follows_input()
    }

    /// The streams the terminal of `TTYPath=` is opened onto, in the
    /// unit's process: standard input for `StandardInput=tty…` (with how
    /// it is taken), and an output that follows it or is `tty` (which
    /// without `TTYPath=` or a terminal input is the init's console, as
    /// inherited). `None`: no stream is a terminal of the unit's.
    pub fn tty_streams(&self) -> Option<(Option<input::TtyMode>, [bool; 3])> {
        let mode = match self.input() {
            Input::Tty(m) => Some(m),
            _ => None,
        };
        let own_tty = mode.is_some() || self.tty.path.is_some();
        let out = match &self.standard_output {
            Some(Output::Tty) => own_tty,
            _ => mode.is_some() && self.output_follows_input(),
        };
        let err = match &self.standard_error {
            None | Some(Output::Inherit) => out,
            Some(Output::Tty) => own_tty,
            Some(_) => false,
        };
        (mode.is_some() || out || err).then_some((mode, [mode.is_some(), out, err]))
    }

    /// Whether a process of the unit works on a terminal (its input, or
    /// an output of `tty`, or a `TTYPath=` given): it gets `$TERM`
    /// ([`Tty::default_term`]) unless its environment sets one.
    pub fn uses_tty(&self) -> bool {
        self.tty.path.is_some()
            || matches!(self.input(), Input::Tty(_))
            || [&self.standard_output, &self.standard_error]
                .into_iter()
                .any(|o| o == &Some(Output::Tty))
    }

    fn set_dir_mode(&mut self, kind: DirKind, value: &str) -> Result<(), String> {
        let set = self.directories.get_mut(kind);
        set.mode = if value.trim().is_empty() {
            dirs::DirSet::default().mode
        } else {
            parse_dir_mode(value)?
        };
        Ok(())
    }
}

/// An optional key: empty means unset.
fn optional<T>(
    empty: bool,
    value: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Option<T>, String> {
    if empty {
        Ok(None)
    } else {
        parse(value).map(Some)
    }
}

/// A key with a default: empty means the default.
fn or_default<T: Default>(
    empty: bool,
    value: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<T, String> {
    if empty {
        Ok(T::default())
    } else {
        parse(value)
    }
}

#[cfg(test)]
mod tests;
