//! The init's own resource limits: what a unit without a `Limit*=` of its
//! own and without a manager default (`system.conf`'s `DefaultLimit*=`)
//! inherits, shown as systemd shows its `DefaultLimit*` (docs/systemd-units.md,
//! "The manager's settings").

use flotilla_units::context::limits::{Rlimit, RlimitValue, INFINITY};
use std::collections::BTreeMap;
use std::ffi::c_int;

/// Every resource's soft and hard limit of the init now (one
/// `prlimit64(2)` each; a resource the kernel refuses is left out).
pub fn own_limits() -> BTreeMap<Rlimit, RlimitValue> {
    Rlimit::ALL
        .into_iter()
        .filter_map(|r| own_limit(r).map(|v| (r, v)))
        .collect()
}

/// The init's soft and hard limit of `r` now (`None` if the kernel
/// refuses the question).
pub fn own_limit(r: Rlimit) -> Option<RlimitValue> {
    let mut held = [0u64; 2];
    prlimit(r.number(), None, Some(&mut held)).ok()?;
    let [soft, hard] = held;
    Some(RlimitValue { soft, hard })
}

/// Sets this process's limit of `resource` to `soft` and `hard`, or, where
/// the kernel refuses that (`EPERM`), as close to them as it allows:
/// systemd's `setrlimit_closest`. Both are lowered to the hard limit the
/// process holds, so `LimitNOFILE=infinity` gets the most the kernel
/// gives (`containerd.service`'s start: no `RLIMIT_NOFILE` above
/// `fs.nr_open` is ever allowed, even with `CAP_SYS_RESOURCE`; the init
/// raises its own hard limit to `fs.nr_open` for that, see
/// [`raise_nofile`]). A hard limit already unbounded means the refusal has
/// another cause, which is kept. Only raw system calls: it runs in a
/// child between `fork` and `execve`.
pub(crate) fn set_closest(resource: u32, soft: u64, hard: u64) -> Result<(), c_int> {
    let want = [soft, hard];
    if prlimit(resource, Some(&want), None) == Ok(()) {
        return Ok(());
    }
    let refused = crate::sys::kernel::errno();
    let mut held = [0u64; 2];
    if refused != libc::EPERM || prlimit(resource, None, Some(&mut held)).is_err() {
        return Err(refused);
    }
    if held[1] == INFINITY {
        return Err(refused);
    }
    let fixed = [soft.min(held[1]), hard.min(held[1])];
    if fixed == held {
        return Ok(());
    }
    prlimit(resource, Some(&fixed), None)
}

/// `prlimit64(0, resource, new, old)`: this process's limit.
fn prlimit(resource: u32, new: Option<&[u64; 2]>, old: Option<&mut [u64; 2]>) -> Result<(), c_int> {
    let new = new.map_or(std::ptr::null(), |n| n.as_ptr());
    let old = old.map_or(std::ptr::null_mut(), |o| o.as_mut_ptr());
    // SAFETY: prlimit64(2) reads two u64 from `new` and writes two to
    // `old`, each when not null; both point at arrays of two.
    crate::sys::kernel::check(unsafe { libc::syscall(libc::SYS_prlimit64, 0, resource, new, old) })
        .map(drop)
}

/// Raises the init's own limit on open files, once at its start: the hard
/// limit to the kernel's most (`nr_open`, the text of
/// `/proc/sys/fs/nr_open`), as systemd does, where the init may
/// (`CAP_SYS_RESOURCE`), so that a unit's `LimitNOFILE=infinity` can be
/// given that much; the soft limit to the hard limit the init was
/// started with, since each unit holds a few descriptors of the init's.
/// The units inherit the soft limit, unchanged by the raise of the hard
/// one. Returns the soft limit now.
pub(crate) fn raise_nofile(nr_open: Option<u64>) -> Result<u64, c_int> {
    let resource = Rlimit::Nofile.number();
    let mut held = [0u64; 2];
    prlimit(resource, None, Some(&mut held))?;
    let [soft, hard] = held;
    let top = nr_open.unwrap_or(hard).max(hard);
    let want = [soft.max(hard), top];
    if want != held && prlimit(resource, Some(&want), None).is_err() {
        // No CAP_SYS_RESOURCE: the hard limit stays, the soft one rises.
        let soft_only = [want[0], hard];
        if soft_only != held {
            prlimit(resource, Some(&soft_only), None)?;
        }
    }
    Ok(want[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f` in a forked child (limits are per process; the test's own
    /// must not change) and returns whether it returned true.
    fn in_child(f: impl FnOnce() -> bool) -> bool {
        // SAFETY: the child makes raw system calls only, then _exit(2).
        match unsafe { libc::fork() } {
            0 => unsafe { libc::_exit(i32::from(!f())) },
            pid => {
                assert!(pid > 0, "fork");
                let mut status = 0;
                // SAFETY: waitpid(2) on our own child.
                assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
                libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
            }
        }
    }

    fn nofile() -> [u64; 2] {
        let mut held = [0; 2];
        assert_eq!(
            prlimit(Rlimit::Nofile.number(), None, Some(&mut held)),
            Ok(())
        );
        held
    }

    #[test]
    fn infinity_is_set_as_close_as_the_kernel_allows() {
        let n = Rlimit::Nofile.number();
        // No one may have more open files than fs.nr_open, unbounded
        // least of all: the child ends with the hard limit it held, or
        // (with CAP_SYS_RESOURCE) with the most the kernel gives.
        let held = nofile()[1];
        assert!(in_child(|| {
            set_closest(n, INFINITY, INFINITY).is_ok() && {
                let [soft, hard] = nofile();
                soft == hard && hard >= held && hard != INFINITY
            }
        }));
    }

    #[test]
    fn a_lower_limit_is_set_as_asked() {
        let n = Rlimit::Nofile.number();
        assert!(in_child(
            || set_closest(n, 64, 128).is_ok() && nofile() == [64, 128]
        ));
    }

    #[test]
    fn a_refusal_for_another_reason_is_kept() {
        // A soft limit above the hard one is EINVAL, not a matter of
        // privilege: nothing is set.
        let n = Rlimit::Nofile.number();
        let before = nofile();
        assert!(in_child(
            || set_closest(n, 100, 50) == Err(libc::EINVAL) && nofile() == before
        ));
    }

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
