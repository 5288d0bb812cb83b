//! The links of `/dev` that PID 1 makes after devtmpfs (docs/pid1.md,
//! "What PID 1 does at start").

use std::path::Path;

use crate::sys::Sys;

/// The links of `/dev` that programs expect and devtmpfs does not make,
/// as systemd's `dev_setup` makes them at boot: `/dev/fd` (bash's
/// process substitution, `<(…)`, opens `/dev/fd/63`), the three standard
/// streams and `/dev/core`.
pub const DEV_LINKS: [(&str, &str); 5] = [
    ("/dev/fd", "/proc/self/fd"),
    ("/dev/stdin", "/proc/self/fd/0"),
    ("/dev/stdout", "/proc/self/fd/1"),
    ("/dev/stderr", "/proc/self/fd/2"),
    ("/dev/core", "/proc/kcore"),
];

/// Makes the [`DEV_LINKS`] that are missing (a container's runtime has
/// made them already: they are left as they are); `/dev/core` only where
/// the kernel has `/proc/kcore`. Returns the console lines of failures.
pub(super) fn dev_links(sys: &dyn Sys) -> Vec<String> {
    let mut lines = Vec::new();
    let exists = |p: &Path| matches!(sys.file_mtime_us(p), Ok(Some(_)));
    for (link, target) in DEV_LINKS {
        let (link, target) = (Path::new(link), Path::new(target));
        if sys.read_link(link).is_ok() || exists(link) {
            continue;
        }
        if link == Path::new("/dev/core") && !exists(target) {
            continue;
        }
        if let Err(e) = sys.symlink(target, link) {
            lines.push(format!("init: {e}"));
        }
    }
    lines
}
