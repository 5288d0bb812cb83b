//! The cgroup v2 limits of `systemd.resource-control(5)` that flotilla
//! honours (`MemoryMax=`, `MemoryHigh=`, `CPUWeight=`, `CPUQuota=`,
//! `TasksMax=`, `IOWeight=`), their value syntax, and the text each puts in
//! its cgroup file; and the device list (`devices.rs`) and the address
//! lists (`ipaccess.rs`), which the cgroup carries as programs.

use serde::{Deserialize, Serialize};

use super::devices::Devices;
use super::ipaccess::IpAccess;
use super::value::{parse_bytes, parse_int_in, parse_permyriad};

/// A memory or task limit: an amount, a share of what the machine has, or
/// none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Amount {
    /// Bytes, or tasks.
    Absolute(u64),
    /// Parts per ten thousand of the machine's memory, or of its task limit.
    Share(u32),
    /// No limit (`infinity`).
    Infinity,
}

impl Amount {
    /// The cgroup file's text, given what the machine has (its memory in
    /// bytes, or its task limit): a number, or `max`.
    pub fn cgroup_value(self, machine: u64) -> String {
        match self {
            Amount::Absolute(n) => n.to_string(),
            Amount::Share(p) => {
                let n = u128::from(machine) * u128::from(p) / 10_000;
                u64::try_from(n).unwrap_or(u64::MAX).to_string()
            }
            Amount::Infinity => "max".to_string(),
        }
    }
}

/// The resource limits of one service's cgroup.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct Resources {
    /// `MemoryMax=` (`memory.max`): the hard ceiling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_max: Option<Amount>,
    /// `MemoryHigh=` (`memory.high`): above it, the cgroup is throttled
    /// and reclaimed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_high: Option<Amount>,
    /// `CPUWeight=` (`cpu.weight`), 1 to 10000.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_weight: Option<u32>,
    /// `CPUQuota=` (`cpu.max`): parts per ten thousand of one CPU
    /// (`20%` is 2000, `200%` two whole CPUs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_quota: Option<u32>,
    /// `TasksMax=` (`pids.max`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks_max: Option<Amount>,
    /// `IOWeight=` (`io.weight`), 1 to 10000.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_weight: Option<u32>,
    /// `DevicePolicy=`, `DeviceAllow=`: a device program on the cgroup.
    #[serde(skip_serializing_if = "is_default")]
    pub devices: Devices,
    /// `IPAddressAllow=`, `IPAddressDeny=`: packet programs on the cgroup.
    #[serde(skip_serializing_if = "is_default")]
    pub ip_access: IpAccess,
    /// `Delegate=`: the cgroup below the unit's is the unit's to manage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delegate: Option<Delegation>,
    /// `Slice=`: the slice the cgroup is in (`slice.rs`); none: the
    /// default, `system.slice`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slice: Option<String>,
    /// `IOAccounting=`, `MemoryAccounting=`, `TasksAccounting=`: the
    /// controllers (`io`, `memory`, `pids`) enabled for the unit's cgroup
    /// with no limit set, so that it is counted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub accounting: Vec<String>,
}

/// What `Delegate=` hands to the unit: its cgroup, owned by its user, with
/// controllers enabled for it to enable further down.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Delegation {
    /// `yes`: every controller the units' parent cgroup offers.
    All,
    /// The controllers named, by their cgroup v2 names (`cpuacct` is
    /// `cpu`, `blkio` is `io`); the names of programs (`devices`, `bpf-…`)
    /// enable nothing.
    Controllers(Vec<String>),
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// The period of `cpu.max`, as systemd's default `CPUQuotaPeriodSec=`.
pub const CPU_PERIOD_USEC: u64 = 100_000;

impl Resources {
    /// Whether no limit is set.
    pub fn is_empty(&self) -> bool {
        *self == Resources::default()
    }

    /// The controllers the limits need (`memory`, `cpu`, `pids`, `io`),
    /// each with the key that needs it first.
    pub fn controllers(&self) -> Vec<(&'static str, &'static str)> {
        let mut out = Vec::new();
        if self.memory_max.is_some() {
            out.push(("memory", "MemoryMax"));
        } else if self.memory_high.is_some() {
            out.push(("memory", "MemoryHigh"));
        }
        if self.cpu_weight.is_some() {
            out.push(("cpu", "CPUWeight"));
        } else if self.cpu_quota.is_some() {
            out.push(("cpu", "CPUQuota"));
        }
        if self.tasks_max.is_some() {
            out.push(("pids", "TasksMax"));
        }
        if self.io_weight.is_some() {
            out.push(("io", "IOWeight"));
        }
        for (ctl, key) in ACCOUNTING {
            if self.accounting.iter().any(|a| a == ctl) && !out.iter().any(|&(o, _)| o == ctl) {
                out.push((ctl, key));
            }
        }
        if let Some(Delegation::Controllers(list)) = &self.delegate {
            for c in list {
                if let Some(&ctl) = V2_CONTROLLERS.iter().find(|&&v| v == c) {
                    if !out.iter().any(|&(o, _)| o == ctl) {
                        out.push((ctl, "Delegate"));
                    }
                }
            }
        }
        out
    }

    /// The files to write and their text, with the key each comes from,
    /// given the machine's memory in bytes and its task limit.
    pub fn cgroup_files(
        &self,
        memory: u64,
        tasks: u64,
    ) -> Vec<(&'static str, String, &'static str)> {
        let mut out = Vec::new();
        if let Some(a) = self.memory_high {
            out.push(("memory.high", a.cgroup_value(memory), "MemoryHigh"));
        }
        if let Some(a) = self.memory_max {
            out.push(("memory.max", a.cgroup_value(memory), "MemoryMax"));
        }
        if let Some(w) = self.cpu_weight {
            out.push(("cpu.weight", w.to_string(), "CPUWeight"));
        }
        if let Some(q) = self.cpu_quota {
            // At least 1 ms per period: the kernel refuses less.
            let quota = (u64::from(q) * CPU_PERIOD_USEC / 10_000).max(1_000);
            out.push(("cpu.max", format!("{quota} {CPU_PERIOD_USEC}"), "CPUQuota"));
        }
        if let Some(a) = self.tasks_max {
            out.push(("pids.max", a.cgroup_value(tasks), "TasksMax"));
        }
        if let Some(w) = self.io_weight {
            out.push(("io.weight", format!("default {w}"), "IOWeight"));
        }
        out
    }
}

/// The `…Accounting=` keys that enable a controller, with its name.
pub const ACCOUNTING: [(&str, &str); 3] = [
    ("io", "IOAccounting"),
    ("memory", "MemoryAccounting"),
    ("pids", "TasksAccounting"),
];

/// `IOAccounting=` and its twins (`key` names which): a boolean; `yes`
/// counts the controller in, `no` or empty takes it out.
pub fn assign_accounting(
    accounting: &mut Vec<String>,
    key: &str,
    value: &str,
) -> Result<(), String> {
    let Some(&(ctl, _)) = ACCOUNTING.iter().find(|(_, k)| *k == key) else {
        return Err(format!("{key}: not an accounting key"));
    };
    let on = !value.is_empty() && super::value::parse_bool(value)?;
    accounting.retain(|a| a != ctl);
    if on {
        accounting.push(ctl.to_string());
        accounting.sort();
    }
    Ok(())
}

/// The controllers whose files a cgroup directory's name could shadow.
const CONTROLLERS: [&str; 14] = [
    "blkio",
    "cpu",
    "cpuacct",
    "cpuset",
    "devices",
    "freezer",
    "hugetlb",
    "io",
    "memory",
    "misc",
    "net_cls",
    "net_prio",
    "perf_event",
    "pids",
];

/// The name of a unit's cgroup directory: the unit name, with `_` put in
/// front where it could be taken for one of the kernel's files
/// (`cgroup.procs`, `memory.max`, `tasks`, …), could hide (`.x`), or
/// could be taken for an escaped name (`_x`), or is the init's own leaf
/// (`init.scope`). As systemd escapes them.
pub fn cgroup_name(unit: &str) -> String {
    let prefix = unit.split('.').next().unwrap_or("");
    let reserved = unit.starts_with('_')
        || unit.starts_with('.')
        || unit.is_empty()
        || matches!(
            unit,
            "notify_on_release" | "release_agent" | "tasks" | "init.scope"
        )
        || (unit.contains('.') && (prefix == "cgroup" || CONTROLLERS.contains(&prefix)));
    if reserved {
        format!("_{unit}")
    } else {
        unit.to_string()
    }
}

/// The controllers of cgroup v2 a delegation can enable.
pub const V2_CONTROLLERS: [&str; 8] = [
    "cpu", "cpuset", "io", "memory", "pids", "hugetlb", "rdma", "misc",
];

/// `Delegate=`: a boolean, or the controllers to delegate (systemd's
/// names: those of cgroup v2, `cpuacct`, `blkio`, and the programs
/// `devices` and `bpf-…`, which a delegated cgroup may attach itself).
/// An empty value or `no` is no delegation; lists given one after the
/// other add up, as in systemd.
pub fn assign_delegate(delegate: &mut Option<Delegation>, value: &str) -> Result<(), String> {
    const PROGRAMS: [&str; 6] = [
        "devices",
        "bpf-firewall",
        "bpf-devices",
        "bpf-foreign",
        "bpf-socket-bind",
        "bpf-restrict-network-interfaces",
    ];
    if value.trim().is_empty() {
        // systemd's reading: delegation on, the list of controllers reset
        // (what `systemd-run -p Delegate=` sends as an empty
        // `DelegateControllers`).
        *delegate = Some(Delegation::Controllers(Vec::new()));
        return Ok(());
    }
    if let Ok(b) = super::value::parse_bool(value) {
        *delegate = b.then_some(Delegation::All);
        return Ok(());
    }
    let mut list = match delegate {
        Some(Delegation::Controllers(l)) => l.clone(),
        _ => Vec::new(),
    };
    for word in value.split_whitespace() {
        let name = match word {
            "cpuacct" => "cpu",
            "blkio" => "io",
            w if V2_CONTROLLERS.contains(&w) || PROGRAMS.contains(&w) => w,
            w => {
                return Err(format!(
                    "`{w}` is not a controller (yes, no, or of: {}, cpuacct, blkio, {})",
                    V2_CONTROLLERS.join(", "),
                    PROGRAMS.join(", ")
                ))
            }
        };
        if !list.iter().any(|c| c == name) {
            list.push(name.to_string());
        }
    }
    *delegate = Some(Delegation::Controllers(list));
    Ok(())
}

/// `MemoryMax=`, `MemoryHigh=`: bytes (with `K`, `M`, `G`, `T` …), a
/// percentage of the machine's memory, or `infinity`.
pub fn parse_memory(value: &str) -> Result<Amount, String> {
    let t = value.trim();
    if t == "infinity" {
        return Ok(Amount::Infinity);
    }
    if let Some(p) = parse_permyriad(t) {
        let p = p?;
        return if p <= 10_000 {
            Ok(Amount::Share(p))
        } else {
            Err(format!("`{t}` is more than 100% of the memory"))
        };
    }
    parse_bytes(t).map(Amount::Absolute)
}

/// `TasksMax=`: a number of tasks (1 or more), a percentage of the
/// system's limit, or `infinity`.
pub fn parse_tasks(value: &str) -> Result<Amount, String> {
    let t = value.trim();
    if t == "infinity" {
        return Ok(Amount::Infinity);
    }
    if let Some(p) = parse_permyriad(t) {
        let p = p?;
        return if (1..=10_000).contains(&p) {
            Ok(Amount::Share(p))
        } else {
            Err(format!("`{t}` is not between 0.01% and 100%"))
        };
    }
    match t.parse::<u64>() {
        Ok(n) if n > 0 => Ok(Amount::Absolute(n)),
        _ => Err(format!(
            "`{t}` is not a task limit (write a number of 1 or more, a percentage or `infinity`)"
        )),
    }
}

/// `CPUWeight=`, `IOWeight=`: 1 to 10000.
pub fn parse_weight(value: &str) -> Result<u32, String> {
    if value.trim() == "idle" {
        return Err("`idle` is not supported (write a weight from 1 to 10000)".to_string());
    }
    parse_int_in(value, 1, 10_000, "a weight").map(|n| n as u32)
}

/// `CPUQuota=`: a percentage of one CPU above 0 (`20%`, `150%`).
pub fn parse_cpu_quota(value: &str) -> Result<u32, String> {
    let t = value.trim();
    match parse_permyriad(t) {
        Some(Ok(0)) => Err(format!("`{t}`: a CPU quota must be above 0%")),
        Some(r) => r,
        None => Err(format!(
            "`{t}` is not a percentage (write e.g. 20% or 150%)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_values() {
        assert_eq!(parse_memory("512M"), Ok(Amount::Absolute(512 << 20)));
        assert_eq!(parse_memory("20%"), Ok(Amount::Share(2000)));
        assert_eq!(parse_memory("infinity"), Ok(Amount::Infinity));
        assert_eq!(parse_memory("0"), Ok(Amount::Absolute(0)));
        assert_eq!(
            parse_memory("150%").unwrap_err(),
            "`150%` is more than 100% of the memory"
        );
        assert!(parse_memory("lots").is_err());
        assert_eq!(
            Amount::Share(2500).cgroup_value(8 << 30),
            (2u64 << 30).to_string()
        );
        assert_eq!(Amount::Infinity.cgroup_value(1), "max");
    }

    #[test]
    fn tasks_weights_and_quota() {
        assert_eq!(parse_tasks("512"), Ok(Amount::Absolute(512)));
        assert_eq!(parse_tasks("15%"), Ok(Amount::Share(1500)));
        assert_eq!(
            parse_tasks("0").unwrap_err(),
            "`0` is not a task limit (write a number of 1 or more, a percentage or `infinity`)"
        );
        assert_eq!(parse_weight("100"), Ok(100));
        assert_eq!(
            parse_weight("0").unwrap_err(),
            "0 is out of range (a weight is from 1 to 10000)"
        );
        assert!(parse_weight("idle")
            .unwrap_err()
            .starts_with("`idle` is not supported"));
        assert_eq!(parse_cpu_quota("20%"), Ok(2000));
        assert_eq!(parse_cpu_quota("150%"), Ok(15000));
        assert_eq!(
            parse_cpu_quota("0%").unwrap_err(),
            "`0%`: a CPU quota must be above 0%"
        );
        assert_eq!(
            parse_cpu_quota("20").unwrap_err(),
            "`20` is not a percentage (write e.g. 20% or 150%)"
        );
    }

    #[test]
    fn cgroup_names_are_escaped_where_needed() {
        assert_eq!(cgroup_name("redis-server.service"), "redis-server.service");
        assert_eq!(cgroup_name("web"), "web");
        assert_eq!(cgroup_name("cgroup.procs"), "_cgroup.procs");
        assert_eq!(cgroup_name("memory.max"), "_memory.max");
        assert_eq!(cgroup_name("tasks"), "_tasks");
        assert_eq!(cgroup_name("_x"), "__x");
        assert_eq!(cgroup_name(".hidden"), "_.hidden");
        assert_eq!(cgroup_name("init.scope"), "_init.scope");
        assert_eq!(cgroup_name("memory"), "memory");
    }

    #[test]
    fn cgroup_files() {
        let r = Resources {
            memory_max: Some(Amount::Absolute(64 << 20)),
            memory_high: Some(Amount::Share(5000)),
            cpu_weight: Some(50),
            cpu_quota: Some(2000),
            tasks_max: Some(Amount::Share(1000)),
            io_weight: Some(200),
            ..Resources::default()
        };
        assert_eq!(
            r.cgroup_files(1 << 30, 4_194_304),
            [
                ("memory.high", (512u64 << 20).to_string(), "MemoryHigh"),
                ("memory.max", (64u64 << 20).to_string(), "MemoryMax"),
                ("cpu.weight", "50".to_string(), "CPUWeight"),
                ("cpu.max", "20000 100000".to_string(), "CPUQuota"),
                ("pids.max", "419430".to_string(), "TasksMax"),
                ("io.weight", "default 200".to_string(), "IOWeight"),
            ]
        );
        assert_eq!(
            r.controllers(),
            [
                ("memory", "MemoryMax"),
                ("cpu", "CPUWeight"),
                ("pids", "TasksMax"),
                ("io", "IOWeight")
            ]
        );
        let tiny = Resources {
            cpu_quota: Some(1),
            ..Resources::default()
        };
        assert_eq!(tiny.cgroup_files(0, 0)[0].1, "1000 100000");
        assert!(Resources::default().is_empty());
    }
}
