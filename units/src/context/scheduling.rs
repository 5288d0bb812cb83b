//! How the kernel schedules a service's processes beyond `Nice=`:
//! `CPUSchedulingPolicy=`, `CPUSchedulingPriority=`,
//! `CPUSchedulingResetOnFork=`, `IOSchedulingClass=` and
//! `IOSchedulingPriority=` (systemd.exec(5)). The numbers are Linux's ABI
//! (`sched.h`, `ioprio.h`), given here so that the init only passes them on.

use serde::{Deserialize, Serialize};

use super::value::parse_int_in;

/// A CPU scheduling policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CpuPolicy {
    /// `SCHED_OTHER`, the default.
    Other,
    /// `SCHED_BATCH`: CPU-bound work, never preferred on wake-up.
    Batch,
    /// `SCHED_IDLE`: runs only when nothing else wants the CPU.
    Idle,
    /// `SCHED_FIFO`: real time, first in first out.
    Fifo,
    /// `SCHED_RR`: real time, round robin.
    Rr,
}

impl CpuPolicy {
    /// The policy's number for `sched_setscheduler(2)`.
    pub fn number(self) -> i32 {
        match self {
            CpuPolicy::Other => 0,
            CpuPolicy::Fifo => 1,
            CpuPolicy::Rr => 2,
            CpuPolicy::Batch => 3,
            CpuPolicy::Idle => 5,
        }
    }

    /// Whether it is a real-time policy (one with priorities 1 to 99).
    pub fn realtime(self) -> bool {
        matches!(self, CpuPolicy::Fifo | CpuPolicy::Rr)
    }
}

/// An I/O scheduling class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IoClass {
    /// `none`: the kernel's default, derived from the nice level.
    None,
    /// `realtime`: served first.
    Realtime,
    /// `best-effort`: the usual class, with priorities 0 to 7.
    BestEffort,
    /// `idle`: served when no other class has work.
    Idle,
}

impl IoClass {
    fn number(self) -> i32 {
        match self {
            IoClass::None => 0,
            IoClass::Realtime => 1,
            IoClass::BestEffort => 2,
            IoClass::Idle => 3,
        }
    }
}

/// The scheduling keys of a service; the default changes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct Scheduling {
    /// `CPUSchedulingPolicy=`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_policy: Option<CpuPolicy>,
    /// `CPUSchedulingPriority=`: 0 to 99.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_priority: Option<u8>,
    /// `CPUSchedulingResetOnFork=`: children go back to `SCHED_OTHER`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cpu_reset_on_fork: bool,
    /// `IOSchedulingClass=`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_class: Option<IoClass>,
    /// `IOSchedulingPriority=`: 0 (highest) to 7.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_priority: Option<u8>,
}

/// What `sched_setscheduler(2)` is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuScheduling {
    /// The policy's number, with `SCHED_RESET_ON_FORK` added if asked.
    pub policy: i32,
    /// The static priority: 1 to 99 for a real-time policy, else 0.
    pub priority: i32,
}

/// `SCHED_RESET_ON_FORK`.
const RESET_ON_FORK: i32 = 0x4000_0000;

impl Scheduling {
    /// The CPU scheduling to set, if any key asked for one. As systemd
    /// does, a priority is brought into the policy's range: 1 to 99 for a
    /// real-time policy (1 when none is given), 0 for the others.
    pub fn cpu(&self) -> Option<CpuScheduling> {
        if self.cpu_policy.is_none() && self.cpu_priority.is_none() && !self.cpu_reset_on_fork {
            return None;
        }
        let policy = self.cpu_policy.unwrap_or(CpuPolicy::Other);
        let priority = if policy.realtime() {
            i32::from(self.cpu_priority.unwrap_or(1).clamp(1, 99))
        } else {
            0
        };
        let reset = if self.cpu_reset_on_fork {
            RESET_ON_FORK
        } else {
            0
        };
        Some(CpuScheduling {
            policy: policy.number() | reset,
            priority,
        })
    }

    /// The value for `ioprio_set(2)`, if either I/O key is given: the
    /// class in the top bits and the priority (4 unless given; 0 for the
    /// `idle` and `none` classes, which have none). A priority alone is
    /// one of the `best-effort` class, as in systemd.
    pub fn ioprio(&self) -> Option<i32> {
        if self.io_class.is_none() && self.io_priority.is_none() {
            return None;
        }
        let class = self.io_class.unwrap_or(IoClass::BestEffort);
        let priority = match class {
            IoClass::Realtime | IoClass::BestEffort => i32::from(self.io_priority.unwrap_or(4)),
            IoClass::Idle | IoClass::None => 0,
        };
        Some(class.number() << 13 | priority)
    }
}

/// `CPUSchedulingPolicy=`.
pub fn parse_cpu_policy(value: &str) -> Result<CpuPolicy, String> {
    match value.trim() {
        "other" => Ok(CpuPolicy::Other),
        "batch" => Ok(CpuPolicy::Batch),
        "idle" => Ok(CpuPolicy::Idle),
        "fifo" => Ok(CpuPolicy::Fifo),
        "rr" => Ok(CpuPolicy::Rr),
        t => Err(format!(
            "`{t}` is not a scheduling policy (write other, batch, idle, fifo or rr)"
        )),
    }
}

/// `CPUSchedulingPriority=`: 0 to 99 (systemd's range for every policy;
/// the policy's own range is applied by [`Scheduling::cpu`]).
pub fn parse_cpu_priority(value: &str) -> Result<u8, String> {
    parse_int_in(value, 0, 99, "a CPU scheduling priority").map(|n| n as u8)
}

/// `IOSchedulingClass=`: a name, or its number 0 to 3.
pub fn parse_io_class(value: &str) -> Result<IoClass, String> {
    match value.trim() {
        "none" | "0" => Ok(IoClass::None),
        "realtime" | "1" => Ok(IoClass::Realtime),
        "best-effort" | "2" => Ok(IoClass::BestEffort),
        "idle" | "3" => Ok(IoClass::Idle),
        t => Err(format!(
            "`{t}` is not an I/O scheduling class (write realtime, best-effort, idle or none)"
        )),
    }
}

/// `IOSchedulingPriority=`: 0 (highest) to 7.
pub fn parse_io_priority(value: &str) -> Result<u8, String> {
    parse_int_in(value, 0, 7, "an I/O scheduling priority").map(|n| n as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_asked_sets_nothing() {
        assert_eq!(Scheduling::default().cpu(), None);
        assert_eq!(Scheduling::default().ioprio(), None);
    }

    #[test]
    fn cpu_priorities_are_brought_into_the_policys_range() {
        let s = |policy, priority| Scheduling {
            cpu_policy: policy,
            cpu_priority: priority,
            ..Scheduling::default()
        };
        let fifo = s(Some(CpuPolicy::Fifo), None).cpu().unwrap();
        assert_eq!((fifo.policy, fifo.priority), (1, 1));
        let rr = s(Some(CpuPolicy::Rr), Some(50)).cpu().unwrap();
        assert_eq!((rr.policy, rr.priority), (2, 50));
        let fifo0 = s(Some(CpuPolicy::Fifo), Some(0)).cpu().unwrap();
        assert_eq!(fifo0.priority, 1);
        let idle = s(Some(CpuPolicy::Idle), Some(50)).cpu().unwrap();
        assert_eq!((idle.policy, idle.priority), (5, 0));
        // A priority alone keeps SCHED_OTHER, whose one priority is 0.
        let other = s(None, Some(20)).cpu().unwrap();
        assert_eq!((other.policy, other.priority), (0, 0));
        let reset = Scheduling {
            cpu_policy: Some(CpuPolicy::Batch),
            cpu_reset_on_fork: true,
            ..Scheduling::default()
        };
        assert_eq!(reset.cpu().unwrap().policy, 3 | RESET_ON_FORK);
    }

    #[test]
    fn io_classes_and_priorities() {
        let s = |class, priority| Scheduling {
            io_class: class,
            io_priority: priority,
            ..Scheduling::default()
        };
        assert_eq!(s(Some(IoClass::Idle), None).ioprio(), Some(3 << 13));
        assert_eq!(s(Some(IoClass::Idle), Some(7)).ioprio(), Some(3 << 13));
        assert_eq!(s(Some(IoClass::Realtime), None).ioprio(), Some(1 << 13 | 4));
        assert_eq!(s(None, Some(7)).ioprio(), Some(2 << 13 | 7));
        assert_eq!(s(Some(IoClass::None), None).ioprio(), Some(0));
    }

    #[test]
    fn bad_values_say_what_is_allowed() {
        assert_eq!(
            parse_cpu_policy("deadline").unwrap_err(),
            "`deadline` is not a scheduling policy (write other, batch, idle, fifo or rr)"
        );
        assert_eq!(
            parse_cpu_priority("100").unwrap_err(),
            "100 is out of range (a CPU scheduling priority is from 0 to 99)"
        );
        assert_eq!(
            parse_io_class("4").unwrap_err(),
            "`4` is not an I/O scheduling class (write realtime, best-effort, idle or none)"
        );
        assert_eq!(
            parse_io_priority("8").unwrap_err(),
            "8 is out of range (an I/O scheduling priority is from 0 to 7)"
        );
        assert_eq!(parse_io_class("best-effort"), Ok(IoClass::BestEffort));
        assert_eq!(parse_io_class("3"), Ok(IoClass::Idle));
    }
}
