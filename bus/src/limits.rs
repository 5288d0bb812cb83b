//! The resource limits as systemd's properties: a unit's `LimitNOFILE`
//! (hard) and `LimitNOFILESoft` (soft), and the manager's
//! `DefaultLimitNOFILE` and `DefaultLimitNOFILESoft`, for each of the 16
//! resources (`org.freedesktop.systemd1(5)`), from what the init reports
//! (`UnitStatus::limits`, `SystemStatus::default_limits`).

use crate::dict::Props;
use flotilla_units::context::limits::{Rlimit, RlimitValue};
use std::collections::BTreeMap;
use zbus::zvariant::Value;

/// Each resource's property names: the unit's hard and soft, the
/// manager's hard and soft.
const NAMES: [(Rlimit, [&str; 4]); 16] = [
    (
        Rlimit::Cpu,
        [
            "LimitCPU",
            "LimitCPUSoft",
            "DefaultLimitCPU",
            "DefaultLimitCPUSoft",
        ],
    ),
    (
        Rlimit::Fsize,
        [
            "LimitFSIZE",
            "LimitFSIZESoft",
            "DefaultLimitFSIZE",
            "DefaultLimitFSIZESoft",
        ],
    ),
    (
        Rlimit::Data,
        [
            "LimitDATA",
            "LimitDATASoft",
            "DefaultLimitDATA",
            "DefaultLimitDATASoft",
        ],
    ),
    (
        Rlimit::Stack,
        [
            "LimitSTACK",
            "LimitSTACKSoft",
            "DefaultLimitSTACK",
            "DefaultLimitSTACKSoft",
        ],
    ),
    (
        Rlimit::Core,
        [
            "LimitCORE",
            "LimitCORESoft",
            "DefaultLimitCORE",
            "DefaultLimitCORESoft",
        ],
    ),
    (
        Rlimit::Rss,
        [
            "LimitRSS",
            "LimitRSSSoft",
            "DefaultLimitRSS",
            "DefaultLimitRSSSoft",
        ],
    ),
    (
        Rlimit::Nproc,
        [
            "LimitNPROC",
            "LimitNPROCSoft",
            "DefaultLimitNPROC",
            "DefaultLimitNPROCSoft",
        ],
    ),
    (
        Rlimit::Nofile,
        [
            "LimitNOFILE",
            "LimitNOFILESoft",
            "DefaultLimitNOFILE",
            "DefaultLimitNOFILESoft",
        ],
    ),
    (
        Rlimit::Memlock,
        [
            "LimitMEMLOCK",
            "LimitMEMLOCKSoft",
            "DefaultLimitMEMLOCK",
            "DefaultLimitMEMLOCKSoft",
        ],
    ),
    (
        Rlimit::As,
        [
            "LimitAS",
            "LimitASSoft",
            "DefaultLimitAS",
            "DefaultLimitASSoft",
        ],
    ),
    (
        Rlimit::Locks,
        [
            "LimitLOCKS",
            "LimitLOCKSSoft",
            "DefaultLimitLOCKS",
            "DefaultLimitLOCKSSoft",
        ],
    ),
    (
        Rlimit::Sigpending,
        [
            "LimitSIGPENDING",
            "LimitSIGPENDINGSoft",
            "DefaultLimitSIGPENDING",
            "DefaultLimitSIGPENDINGSoft",
        ],
    ),
    (
        Rlimit::Msgqueue,
        [
            "LimitMSGQUEUE",
            "LimitMSGQUEUESoft",
            "DefaultLimitMSGQUEUE",
            "DefaultLimitMSGQUEUESoft",
        ],
    ),
    (
        Rlimit::Nice,
        [
            "LimitNICE",
            "LimitNICESoft",
            "DefaultLimitNICE",
            "DefaultLimitNICESoft",
        ],
    ),
    (
        Rlimit::Rtprio,
        [
            "LimitRTPRIO",
            "LimitRTPRIOSoft",
            "DefaultLimitRTPRIO",
            "DefaultLimitRTPRIOSoft",
        ],
    ),
    (
        Rlimit::Rttime,
        [
            "LimitRTTIME",
            "LimitRTTIMESoft",
            "DefaultLimitRTTIME",
            "DefaultLimitRTTIMESoft",
        ],
    ),
];

/// Whether `name` is one of the manager's `DefaultLimit*` properties
/// (answered from the init's status).
pub fn is_default_limit(name: &str) -> bool {
    NAMES.iter().any(|(_, n)| n[2] == name || n[3] == name)
}

/// A unit's `Limit*` properties (`manager`: false) or the manager's
/// `DefaultLimit*` (true), hard then soft, in the resources' order; a
/// resource the init did not report is left out.
pub fn props(limits: &BTreeMap<Rlimit, RlimitValue>, manager: bool) -> Props {
    let mut out = Vec::new();
    for (r, [unit_hard, unit_soft, default_hard, default_soft]) in NAMES {
        let (hard, soft) = if manager {
            (default_hard, default_soft)
        } else {
            (unit_hard, unit_soft)
        };
        if let Some(v) = limits.get(&r) {
            out.push((hard, Value::from(v.hard)));
            out.push((soft, Value::from(v.soft)));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_resource_has_systemds_names() {
        let order: Vec<Rlimit> = NAMES.iter().map(|(r, _)| *r).collect();
        assert_eq!(order, Rlimit::ALL);
        for (r, names) in &NAMES {
            assert_eq!(names[0], r.key());
            assert_eq!(names[1], format!("{}Soft", r.key()));
            assert_eq!(names[2], format!("Default{}", r.key()));
            assert_eq!(names[3], format!("Default{}Soft", r.key()));
        }
    }

    #[test]
    fn hard_then_soft_for_the_reported_resources() {
        let mut limits = BTreeMap::new();
        limits.insert(
            Rlimit::Nofile,
            RlimitValue {
                soft: 10000,
                hard: 16384,
            },
        );
        limits.insert(
            Rlimit::Core,
            RlimitValue {
                soft: 0,
                hard: u64::MAX,
            },
        );
        let shown = |p: Props| -> Vec<(&str, u64)> {
            p.into_iter()
                .map(|(n, v)| (n, u64::try_from(v).unwrap()))
                .collect()
        };
        assert_eq!(
            shown(props(&limits, true)),
            [
                ("DefaultLimitCORE", u64::MAX),
                ("DefaultLimitCORESoft", 0),
                ("DefaultLimitNOFILE", 16384),
                ("DefaultLimitNOFILESoft", 10000),
            ]
        );
        assert_eq!(
            shown(props(&limits, false)).get(2),
            Some(&("LimitNOFILE", 16384))
        );
        assert!(is_default_limit("DefaultLimitNOFILESoft"));
        assert!(!is_default_limit("LimitNOFILESoft") && !is_default_limit("LogLevel"));
    }
}
