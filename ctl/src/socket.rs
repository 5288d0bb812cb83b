//! Where the init's control socket is (SPEC §2).
//!
//! `--control PATH`, else `$INIT_CONTROL`, else `/run/init/control.sock` when
//! the effective user is root, else `$XDG_RUNTIME_DIR/init/control.sock`. The
//! init resolves its default the same way, so a user's `init` and `initctl`
//! meet without configuration. Empty variables count as unset.
//!
//! [`resolve`] is pure: the caller passes the flag, the environment and the
//! effective user in, so that every branch is tested.

use std::ffi::OsString;
use std::path::PathBuf;

/// The system socket, used when running as root.
pub const SYSTEM_SOCKET: &str = "/run/init/control.sock";

/// Where the socket is looked for, given the `--control` flag, the values
/// of `$INIT_CONTROL` and `$XDG_RUNTIME_DIR`, and whether the effective user
/// is root. `None` when no rule applies (not root, no runtime directory).
pub fn resolve(
    flag: Option<PathBuf>,
    init_control: Option<OsString>,
    euid_is_root: bool,
    xdg_runtime_dir: Option<OsString>,
) -> Option<PathBuf> {
    if let Some(path) = flag {
        return Some(path);
    }
    if let Some(path) = init_control.filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(path));
    }
    if euid_is_root {
        return Some(PathBuf::from(SYSTEM_SOCKET));
    }
    xdg_runtime_dir
        .filter(|v| !v.is_empty())
        .map(|dir| PathBuf::from(dir).join("init").join("control.sock"))
}

/// [`resolve`] with this process's environment and effective user.
pub fn from_env(flag: Option<PathBuf>) -> Option<PathBuf> {
    resolve(
        flag,
        std::env::var_os("INIT_CONTROL"),
        euid_is_root(),
        std::env::var_os("XDG_RUNTIME_DIR"),
    )
}

/// Whether the effective user is root.
fn euid_is_root() -> bool {
    // SAFETY: geteuid(2) has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(s: &str) -> Option<OsString> {
        Some(OsString::from(s))
    }

    #[test]
    fn flag_wins_over_everything() {
        let p = resolve(
            Some("/tmp/c.sock".into()),
            os("/env.sock"),
            true,
            os("/run/user/1"),
        );
        assert_eq!(p, Some(PathBuf::from("/tmp/c.sock")));
    }

    #[test]
    fn environment_wins_over_defaults() {
        assert_eq!(
            resolve(None, os("/env.sock"), true, None),
            Some("/env.sock".into())
        );
        assert_eq!(
            resolve(None, os("/env.sock"), false, os("/run/user/1")),
            Some("/env.sock".into())
        );
    }

    #[test]
    fn root_uses_the_system_socket() {
        assert_eq!(
            resolve(None, None, true, os("/run/user/0")),
            Some(SYSTEM_SOCKET.into())
        );
        assert_eq!(
            resolve(None, os(""), true, None),
            Some(SYSTEM_SOCKET.into())
        );
    }

    #[test]
    fn users_use_their_runtime_dir() {
        assert_eq!(
            resolve(None, None, false, os("/run/user/1000")),
            Some("/run/user/1000/init/control.sock".into())
        );
        assert_eq!(resolve(None, None, false, None), None);
        assert_eq!(resolve(None, os(""), false, os("")), None);
    }
}
