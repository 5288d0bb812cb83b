//! The slices' cgroups: the directories between the init's cgroup and a
//! unit's (`system.slice`, `system-foo.slice`, …: `units/src/context/slice.rs`
//! says which), made when a unit below them starts and removed once
//! empty; and the controllers enabled in them for the units below,
//! counted per directory, so that one no running unit needs any more is
//! turned off again where the init turned it on (as systemd's slices
//! enable what their members need, and no more).
//!
//! The counts live here, in the init's one thread, not in the units'
//! runs: a run holds the list of controllers it counted, and gives it
//! back at its end ([`release`]). After a re-exec every running unit's
//! cgroup is made again (`unitrun.rs`), which counts it again.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use flotilla_units::context::resources::cgroup_name;
use flotilla_units::context::slice::slice_dirs;

/// Who needs one controller in one directory's `cgroup.subtree_control`.
#[derive(Debug, Default)]
struct Use {
    /// The running units below that need it.
    units: u32,
    /// The init turned it on (it was off before): it turns it off again.
    ours: bool,
}

thread_local! {
    static USES: RefCell<BTreeMap<(PathBuf, String), Use>> = RefCell::default();
}

/// The directories a unit's cgroup is below, from `base` down to its
/// parent: `base`, then each of `slice`'s (not made: [`make`]).
pub fn levels(base: &Path, slice: &str) -> Vec<PathBuf> {
    let mut out = vec![base.to_path_buf()];
    let mut dir = base.to_path_buf();
    for name in slice_dirs(slice) {
        dir.push(cgroup_name(&name));
        out.push(dir.clone());
    }
    out
}

/// Makes the directories of `levels` (those of `slice`) that are
/// missing, from the top down.
pub fn make(levels: &[PathBuf], slice: &str) -> Result<(), String> {
    for (dir, name) in levels.iter().skip(1).zip(slice_dirs(slice)) {
        match std::fs::create_dir(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("create the cgroup of {name}: {e}")),
        }
    }
    Ok(())
}

/// Counts one more unit needing `ctl` in `level`; `turned_on`: the init
/// has just enabled it there.
pub fn count(level: &Path, ctl: &str, turned_on: bool) {
    USES.with(|u| {
        let mut u = u.borrow_mut();
        let e = u.entry((level.to_path_buf(), ctl.to_string())).or_default();
        e.units += 1;
        e.ours |= turned_on;
    });
}

/// A unit's cgroup `dir`, below `base`, is gone (or going): counts its
/// `controllers` out of every level above it, removes the slices' empty
/// directories, deepest first, and turns off in each level what the
/// init turned on there and no unit needs any more. Nothing here fails
/// a stop: a directory still busy (the unit's processes still dying)
/// stays, and so does what is enabled above it, until the next unit's
/// end below it.
pub fn release(base: &Path, dir: &Path, controllers: &[&str]) {
    let levels: Vec<&Path> = dir
        .ancestors()
        .skip(1)
        .take_while(|l| l.starts_with(base))
        .collect();
    for level in levels {
        if level != base && std::fs::remove_dir(level).is_ok() {
            forget(level);
            continue;
        }
        for ctl in controllers {
            if uncount(level, ctl) {
                let _ = crate::sys::cgroup::write_control(level, &format!("-{ctl}"));
            }
        }
    }
}

/// Counts a unit out of `ctl` in `level`: whether it should be turned
/// off now (the init turned it on and no unit needs it).
fn uncount(level: &Path, ctl: &str) -> bool {
    USES.with(|u| {
        let mut u = u.borrow_mut();
        let key = (level.to_path_buf(), ctl.to_string());
        let Some(e) = u.get_mut(&key) else {
            return false;
        };
        e.units = e.units.saturating_sub(1);
        if e.units > 0 {
            return false;
        }
        let ours = e.ours;
        u.remove(&key);
        ours
    })
}

/// A removed directory's counts (its controllers went with it).
fn forget(level: &Path) {
    USES.with(|u| u.borrow_mut().retain(|(l, _), _| l != level));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_controller_is_turned_off_when_its_last_unit_goes_and_only_if_the_init_turned_it_on() {
        let level = Path::new("/nonexistent/cg/system.slice");
        count(level, "io", true);
        count(level, "io", false);
        count(level, "memory", false);
        assert!(!uncount(level, "io"), "one unit still needs it");
        assert!(
            uncount(level, "io"),
            "the last one went; the init turned it on"
        );
        assert!(!uncount(level, "memory"), "on before the init: left on");
        assert!(!uncount(level, "pids"), "never counted");
    }

    #[test]
    fn the_levels_of_a_slice_are_named_and_made_below_the_base() {
        let base = tempfile::tempdir().unwrap();
        let got = levels(base.path(), "system-foo-bar.slice");
        assert!(!got.iter().skip(1).any(|d| d.exists()), "only named");
        make(&got, "system-foo-bar.slice").unwrap();
        make(&got, "system-foo-bar.slice").unwrap();
        let want: Vec<PathBuf> = ["", "system.slice", "system.slice/system-foo.slice"]
            .iter()
            .map(|p| base.path().join(p))
            .chain(std::iter::once(
                base.path()
                    .join("system.slice/system-foo.slice/system-foo-bar.slice"),
            ))
            .map(|p| PathBuf::from(p.to_string_lossy().trim_end_matches('/')))
            .collect();
        assert_eq!(got, want);
        assert!(got.iter().all(|d| d.is_dir()));
        assert_eq!(levels(base.path(), "-.slice"), [base.path()]);
    }
}
