//! The cleaner (`systemctl clean`, docs/dbus.md "Cleaning a unit"): the
//! init's own binary run as `init --clean PATH…`, a child of the init,
//! which removes each path with everything below it and exits. A child of
//! its own, as a removal walks a tree of unbounded size on a disk: the
//! init's loop never waits for it, and hears its exit as any child's
//! (`runtime/cleaning.rs`). Which paths a clean names is
//! `flotilla_units::context::clean`.

use crate::sys::{Pid, Sys};
use std::path::Path;

/// The first argument that makes the init a cleaner.
pub const RUN_FLAG: &str = "--clean";

/// The cleaner's exit status when a path could not be removed.
pub const FAILED: u8 = 1;

/// Starts the cleaner for `paths`, its output on the init's console.
pub fn spawn(sys: &dyn Sys, paths: &[std::path::PathBuf]) -> Result<Pid, String> {
    let args = paths
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    crate::sys::reexec::spawn_helper(sys, RUN_FLAG, args, "clean")
}

/// The cleaner's body: removes every path given (absolute ones only), a
/// missing one being no error; a symbolic link is removed, never
/// followed. Returns its exit status: 0, or [`FAILED`] after trying every
/// path when one could not be removed (each failure on standard error).
pub fn main(paths: &[String]) -> u8 {
    let mut status = 0;
    for p in paths {
        if let Err(e) = remove(Path::new(p)) {
            eprintln!("init: clean: cannot remove {p}: {e}");
            status = FAILED;
        }
    }
    status
}

/// Removes `path` and what is below it.
pub fn remove(path: &Path) -> std::io::Result<()> {
    if !path.is_absolute() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not an absolute path",
        ));
    }
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let r = if meta.is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    };
    match r {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn removes_trees_files_and_links_never_their_targets() {
        let tmp = std::env::temp_dir().join(format!("flotilla-clean-{}", std::process::id()));
        let tree = tmp.join("tree");
        let kept = tmp.join("kept");
        std::fs::create_dir_all(tree.join("a/b")).unwrap();
        std::fs::write(tree.join("a/b/f"), b"x").unwrap();
        std::fs::create_dir_all(&kept).unwrap();
        std::fs::write(kept.join("f"), b"x").unwrap();
        let link = tmp.join("link");
        std::os::unix::fs::symlink(&kept, &link).unwrap();
        let file = tmp.join("file");
        std::fs::write(&file, b"x").unwrap();
        let missing = tmp.join("missing");
        let args: Vec<String> = [&tree, &link, &file, &missing]
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(main(&args), 0);
        assert!(!tree.exists() && !file.exists());
        assert!(std::fs::symlink_metadata(&link).is_err());
        assert!(kept.join("f").exists(), "a link's target is kept");
        assert_eq!(main(&["relative".to_string()]), FAILED);
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
