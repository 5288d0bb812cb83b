//! cgroup v2's freezer on the init's side (`systemctl freeze`/`thaw`,
//! `units/src/freezer.rs` for the states): `1` or `0` written to a
//! cgroup's `cgroup.freeze`, and its `cgroup.events` watched with inotify
//! (`adopt::watch_events`, as a scope's emptiness) until the kernel says
//! `frozen 1` or `frozen 0`: freezing takes as long as the cgroup's tasks
//! take to reach a point where they can stop, never polled.
//!
//! A slice's directory (`slices.rs`) is frozen the same way: the kernel
//! freezes everything below it.

use std::path::{Path, PathBuf};

use flotilla_units::context::resources::cgroup_name;
use flotilla_units::context::slice::slice_dirs;

use crate::sys::adopt::{self, Adoption};

/// Whether the cgroup `dir` has a freezer (`cgroup.freeze`: cgroup v2 on
/// Linux 5.2 or later; never the root of a hierarchy).
pub fn supported(dir: &Path) -> bool {
    dir.join("cgroup.freeze").exists()
}

/// Writes `frozen` to `dir`'s `cgroup.freeze`, and returns the watch of
/// its `cgroup.events` (made first, so that the kernel's word is not
/// missed). The error says why, naming the file.
pub fn freeze(dir: &Path, frozen: bool) -> Result<Adoption, String> {
    let file = dir.join("cgroup.freeze");
    if !file.exists() {
        return Err(format!(
            "{}: no cgroup v2 freezer there (cgroup.freeze)",
            dir.display()
        ));
    }
    let watch = adopt::watch_events(dir.join("cgroup.events"))?;
    std::fs::write(&file, if frozen { "1" } else { "0" })
        .map_err(|e| format!("write {} to {}: {e}", u8::from(frozen), file.display()))?;
    Ok(watch)
}

/// The directory of `slice` below the units' cgroups `base`, if it exists
/// (a unit below it runs, or ran and left it busy).
pub fn slice_dir(base: &Path, slice: &str) -> Option<PathBuf> {
    let dirs = slice_dirs(slice);
    if dirs.is_empty() {
        return None;
    }
    let mut dir = base.to_path_buf();
    for d in dirs {
        dir.push(cgroup_name(&d));
    }
    dir.join("cgroup.procs").exists().then_some(dir)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    /// The host's cgroup2 where a child cgroup can be made in the init's
    /// (this test's) own: a new cgroup there, removed at the end.
    struct Scratch(PathBuf);

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::write(self.0.join("cgroup.freeze"), "0");
            let _ = std::fs::write(self.0.join("cgroup.kill"), "1");
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while std::fs::remove_dir(&self.0).is_err() && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }

    fn scratch() -> Scratch {
        let base = match crate::sys::cgroup::Cgroups::discover() {
            Ok(c) => c.base().to_path_buf(),
            Err(e) => panic!("the freezer test needs a writable cgroup2: {e}"),
        };
        let dir = base.join(format!("flotilla-freezer-test-{}", std::process::id()));
        std::fs::create_dir(&dir).unwrap();
        Scratch(dir)
    }

    fn wait_readable(a: &Adoption) {
        let [fd] = a.fds()[..] else {
            panic!("one inotify instance: {:?}", a.fds());
        };
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        assert_eq!(unsafe { libc::poll(&mut pfd, 1, 10_000) }, 1, "no event");
    }

    /// A real cgroup with a process in it: frozen, the kernel's word
    /// heard through the watch, then thawed.
    #[test]
    fn a_cgroup_is_frozen_and_thawed_and_the_kernel_says_so() {
        let _g = crate::sys::tests::process_lock();
        let s = scratch();
        assert!(supported(&s.0), "{} has no cgroup.freeze", s.0.display());
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        std::fs::write(s.0.join("cgroup.procs"), child.id().to_string()).unwrap();

        let mut a = freeze(&s.0, true).unwrap();
        // The kernel may say it before the first look.
        if !adopt::frozen(&mut a) {
            wait_readable(&a);
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while !adopt::frozen(&mut a) {
                assert!(std::time::Instant::now() < deadline, "never frozen");
                wait_readable(&a);
            }
        }
        let events = std::fs::read_to_string(s.0.join("cgroup.events")).unwrap();
        assert!(events.contains("frozen 1"), "{events}");

        let mut a = freeze(&s.0, false).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while adopt::frozen(&mut a) {
            assert!(std::time::Instant::now() < deadline, "never thawed");
            wait_readable(&a);
        }
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn without_cgroup_freeze_the_error_says_so() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!supported(dir.path()));
        let e = freeze(dir.path(), true).unwrap_err();
        assert!(e.contains("no cgroup v2 freezer"), "{e}");
    }

    #[test]
    fn a_slice_has_a_directory_only_while_it_exists() {
        let base = tempfile::tempdir().unwrap();
        assert_eq!(slice_dir(base.path(), "bar.slice"), None);
        assert_eq!(slice_dir(base.path(), "-.slice"), None);
        let dir = base.path().join("system.slice/system-foo.slice");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("cgroup.procs"), "").unwrap();
        assert_eq!(slice_dir(base.path(), "system-foo.slice"), Some(dir));
    }
}
