//! The init's own resource limits: what a unit without a `Limit*=` of its
//! own and without a manager default (`system.conf`'s `DefaultLimit*=`)
//! inherits, shown as systemd shows its `DefaultLimit*` (docs/systemd-units.md,
//! "The manager's settings").

use flotilla_units::context::limits::{Rlimit, RlimitValue};
use std::collections::BTreeMap;

/// Every resource's soft and hard limit of the init now (one
/// `getrlimit(2)` each; a resource the kernel refuses is left out).
pub fn own_limits() -> BTreeMap<Rlimit, RlimitValue> {
    Rlimit::ALL
        .into_iter()
        .filter_map(|r| own_limit(r).map(|v| (r, v)))
        .collect()
}

/// The init's soft and hard limit of `r` now (`None` if the kernel
/// refuses the question).
pub fn own_limit(r: Rlimit) -> Option<RlimitValue> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit(2) writes the struct it is given.
    (unsafe { libc::getrlimit(r.number() as _, &mut lim) } == 0).then_some(RlimitValue {
        soft: lim.rlim_cur,
        hard: lim.rlim_max,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_resource_is_read_soft_at_most_hard() {
        let all = own_limits();
        assert_eq!(all.len(), Rlimit::ALL.len());
        for (r, v) in &all {
            assert!(v.soft <= v.hard, "{r:?}: {v:?}");
        }
        let mut nofile = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: as above.
        assert_eq!(
            unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut nofile) },
            0
        );
        assert_eq!(
            all.get(&Rlimit::Nofile).map(|v| v.soft),
            Some(nofile.rlim_cur)
        );
    }
}
