//! A unit's restart, timeout, kill and user settings as systemd's
//! `Service` and `Kill` properties show them ([`Settings`]): in the status
//! of one unit, for `flotilla-busd`'s `Restart`, `KillSignal`, … (the
//! values `systemctl show -p KillSignal` prints; docs/dbus.md).

use crate::context::placement::{Affinity, NumaPolicy};
use crate::spec::{Signal, UnitSpec};
use crate::timespan::TIMESPAN_INFINITY;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The settings, each in systemd's form: times in microseconds (timeouts
/// that never fire are `u64::MAX`, systemd's `infinity`), signals by
/// number, names as its unit files write them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// `Restart`: `no`, `on-failure`, `always`, ….
    pub restart: String,
    /// `RestartUSec`: the first restart delay.
    pub restart_usec: u64,
    /// `TimeoutStartUSec`.
    pub timeout_start_usec: u64,
    /// `TimeoutStopUSec`.
    pub timeout_stop_usec: u64,
    /// `WatchdogUSec`: 0 without a watchdog.
    pub watchdog_usec: u64,
    /// `RuntimeMaxUSec`: `u64::MAX` (infinity) without a runtime limit.
    /// Absent from an older init's status: no limit.
    #[serde(default = "infinity")]
    pub runtime_max_usec: u64,
    /// `RuntimeRandomizedExtraUSec`.
    #[serde(default)]
    pub runtime_randomized_extra_usec: u64,
    /// `KillMode`: `control-group`, `mixed`, `process` or `none`.
    pub kill_mode: String,
    /// `KillSignal`.
    pub kill_signal: i32,
    /// `RestartKillSignal`: the signal of a stop that begins a restart,
    /// `KillSignal` when the unit names none (as systemd serves it).
    pub restart_kill_signal: i32,
    /// `SendSIGHUP`.
    pub send_sighup: bool,
    /// `SendSIGKILL` (true unless the unit says `SendSIGKILL=no`; an
    /// init that did not tell it always sent it).
    #[serde(default = "yes")]
    pub send_sigkill: bool,
    /// `RemainAfterExit`.
    pub remain_after_exit: bool,
    /// `User`: empty for root (the init's own user).
    pub user: String,
    /// `Group`.
    pub group: String,
    /// `DynamicUser`.
    pub dynamic_user: bool,
    /// `WorkingDirectory`: with a leading `-` when it may be missing.
    pub working_directory: String,
    /// `StandardInputData`: the bytes of `StandardInputText=` and
    /// `StandardInputData=`, in order (systemctl shows them in Base64).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub standard_input_data: Vec<u8>,
    /// `CPUAffinity`: the CPUs of `CPUAffinity=`, in systemd's `ay` (bit
    /// `n % 8` of byte `n / 8`); empty without the key and with `numa`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_affinity: Vec<u8>,
    /// `CPUAffinityFromNUMA`: `CPUAffinity=numa` (the CPUs of the NUMA
    /// mask's nodes, which flotilla-busd reads from sysfs).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cpu_affinity_from_numa: bool,
    /// `NUMAPolicy`: the policy's number (`MPOL_*`); -1, systemd's "none",
    /// without either NUMA key.
    #[serde(default = "no_policy", skip_serializing_if = "is_no_policy")]
    pub numa_policy: i32,
    /// `NUMAMask`: the nodes, in the `ay` form.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub numa_mask: Vec<u8>,
    /// `LogNamespace`: the journal namespace of `LogNamespace=`, empty
    /// for the system's journal.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub log_namespace: String,
}

impl Settings {
    /// The settings `spec` runs with.
    pub fn of(spec: &UnitSpec) -> Settings {
        let x = &spec.extras;
        let optional = x.working_directory_optional == Some(true);
        let working_directory = x.working_directory.as_ref().map_or_else(String::new, |d| {
            format!("{}{}", if optional { "-" } else { "" }, d.display())
        });
        let kill_signal = spec.kill_signal.0;
        let placement = &x.context.placement;
        Settings {
            restart: spec.restart.as_str().to_string(),
            restart_usec: usec(spec.restart_delay),
            timeout_start_usec: timeout_usec(spec.start_timeout),
            timeout_stop_usec: timeout_usec(spec.stop_timeout),
            watchdog_usec: spec.watchdog().map_or(0, usec),
            runtime_max_usec: spec.runtime_max().map_or(u64::MAX, |(max, _)| usec(max)),
            runtime_randomized_extra_usec: spec
                .extras
                .runtime_randomized_extra
                .map_or(0, timespan_usec),
            kill_mode: x.context.kill_mode.as_str().to_string(),
            kill_signal,
            restart_kill_signal: x.restart_kill_signal.map_or(kill_signal, |s: Signal| s.0),
            send_sighup: x.context.send_sighup,
            send_sigkill: !x.context.no_sigkill,
            remain_after_exit: spec.remain_after_exit.unwrap_or(false),
            user: x.user.clone().unwrap_or_default(),
            group: x.group.clone().unwrap_or_default(),
            dynamic_user: x.dynamic_user == Some(true),
            working_directory,
            standard_input_data: x.context.input_data.clone(),
            cpu_affinity: match &placement.cpu_affinity {
                Some(Affinity::Cpus(cpus)) => cpus.bytes().to_vec(),
                _ => Vec::new(),
            },
            cpu_affinity_from_numa: placement.cpu_affinity == Some(Affinity::Numa),
            numa_policy: placement.mem_policy().map_or(-1, NumaPolicy::number),
            numa_mask: placement
                .numa_mask
                .as_ref()
                .map_or_else(Vec::new, |m| m.bytes().to_vec()),
            log_namespace: x
                .context
                .log_namespace
                .as_ref()
                .map_or_else(String::new, |n| n.as_str().to_string()),
        }
    }
}

fn usec(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

fn no_policy() -> i32 {
    -1
}

fn is_no_policy(n: &i32) -> bool {
    *n == -1
}

fn infinity() -> u64 {
    u64::MAX
}

fn yes() -> bool {
    true
}

/// A time span as given, systemd's infinity as `u64::MAX`.
fn timespan_usec(d: Duration) -> u64 {
    if d >= TIMESPAN_INFINITY {
        u64::MAX
    } else {
        usec(d)
    }
}

/// A timeout of zero or systemd's infinity never fires.
fn timeout_usec(d: Duration) -> u64 {
    if d.is_zero() || d >= TIMESPAN_INFINITY {
        u64::MAX
    } else {
        usec(d)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::context::Key;
    use crate::spec::{RestartPolicy, UnitType};

    #[test]
    fn systemds_forms() {
        let mut s = UnitSpec::new("svc", UnitType::ForegroundSupervised);
        s.restart = RestartPolicy::OnAbort;
        s.restart_delay = Duration::from_millis(100);
        s.start_timeout = Duration::ZERO;
        s.stop_timeout = Duration::from_secs(90);
        s.kill_signal = Signal(15);
        s.extras.working_directory = Some("/srv".into());
        s.extras.working_directory_optional = Some(true);
        let got = Settings::of(&s);
        assert_eq!(got.restart, "on-abort");
        assert_eq!(got.restart_usec, 100_000);
        assert_eq!(got.timeout_start_usec, u64::MAX);
        assert_eq!(got.timeout_stop_usec, 90_000_000);
        assert_eq!(got.watchdog_usec, 0);
        assert_eq!(got.runtime_max_usec, u64::MAX);
        assert_eq!(got.runtime_randomized_extra_usec, 0);
        assert_eq!(got.kill_mode, "control-group");
        // Without its own, a restart's stop sends the kill signal.
        assert_eq!((got.kill_signal, got.restart_kill_signal), (15, 15));
        assert_eq!(got.working_directory, "-/srv");
        assert_eq!(got.user, "");

        s.extras.restart_kill_signal = Some(Signal(2));
        s.stop_timeout = TIMESPAN_INFINITY;
        s.extras.runtime_max = Some(Duration::from_secs(5));
        s.extras.runtime_randomized_extra = Some(Duration::from_millis(1500));
        let got = Settings::of(&s);
        assert_eq!(got.runtime_max_usec, 5_000_000);
        assert_eq!(got.runtime_randomized_extra_usec, 1_500_000);
        assert_eq!(got.restart_kill_signal, 2);
        assert_eq!(got.timeout_stop_usec, u64::MAX);
        assert!(got.standard_input_data.is_empty());
        assert_eq!(got.log_namespace, "");
        // Not sent when empty, so an older busd reads the status as before.
        let text = serde_json::to_string(&got).unwrap();
        assert!(!text.contains("standard_input_data"), "{text}");
        // An older init's status has no runtime limit: none.
        let old = text
            .replace(",\"runtime_max_usec\":5000000", "")
            .replace(",\"runtime_randomized_extra_usec\":1500000", "");
        assert!(!old.contains("runtime"), "{old}");
        let read: Settings = serde_json::from_str(&old).unwrap();
        assert_eq!(
            (read.runtime_max_usec, read.runtime_randomized_extra_usec),
            (u64::MAX, 0)
        );

        // What `systemctl show -P StandardInputData` prints in Base64.
        s.extras.context.input_data = b"xxx\naaa\n".to_vec();
        let got = Settings::of(&s);
        assert_eq!(got.standard_input_data, b"xxx\naaa\n");
        let text = serde_json::to_string(&got).unwrap();
        assert_eq!(serde_json::from_str::<Settings>(&text).unwrap(), got);

        // `systemctl show -P LogNamespace`.
        s.extras.context.set(Key::LogNamespace, "foobar").unwrap();
        let got = Settings::of(&s);
        assert_eq!(got.log_namespace, "foobar");
        let text = serde_json::to_string(&got).unwrap();
        assert_eq!(serde_json::from_str::<Settings>(&text).unwrap(), got);
    }

    #[test]
    fn placement_as_systemds_properties() {
        let mut s = UnitSpec::new("svc", UnitType::ForegroundSupervised);
        let got = Settings::of(&s);
        assert_eq!((got.numa_policy, got.cpu_affinity.len()), (-1, 0));
        let text = serde_json::to_string(&got).unwrap();
        assert!(
            !text.contains("numa") && !text.contains("cpu_affinity"),
            "{text}"
        );
        assert_eq!(
            serde_json::from_str::<Settings>(&text).unwrap().numa_policy,
            -1
        );

        let c = &mut s.extras.context;
        for (k, v) in [("CPUAffinity", "0 9"), ("NUMAMask", "0")] {
            c.set_systemd(k, v).unwrap().unwrap();
        }
        let got = Settings::of(&s);
        // A mask alone is the preferred policy (1).
        assert_eq!(got.numa_policy, 1);
        assert_eq!((got.cpu_affinity, got.numa_mask), (vec![1, 2], vec![1]));
        let c = &mut s.extras.context;
        for (k, v) in [("CPUAffinity", "numa"), ("NUMAPolicy", "interleave")] {
            c.set_systemd(k, v).unwrap().unwrap();
        }
        let got = Settings::of(&s);
        assert_eq!(got.numa_policy, 3);
        assert!(got.cpu_affinity_from_numa && got.cpu_affinity.is_empty());
        let text = serde_json::to_string(&got).unwrap();
        assert_eq!(serde_json::from_str::<Settings>(&text).unwrap(), got);
    }
}
