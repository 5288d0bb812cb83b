//! Where the control socket is: the one rule the init and its clients
//! share (docs/contract.md §2).

/// The control socket of a system init (root, or PID 1).
pub const SYSTEM_CONTROL_SOCKET: &str = "/run/init/control.sock";

/// Where the control socket is when no flag or config names it (docs/contract.md §2):
/// `$INIT_CONTROL` (`init_control`), else [`SYSTEM_CONTROL_SOCKET`] for
/// the system (`system`: the effective user is root, or the init is PID 1),
/// else `init/control.sock` under `$XDG_RUNTIME_DIR` (`xdg_runtime_dir`).
/// Empty values count as unset. `None` when no rule applies. The init and
/// its clients resolve it with this one function, so a user's `init` and
/// `initctl` meet without configuration.
pub fn control_socket_path(
    init_control: Option<&std::ffi::OsStr>,
    system: bool,
    xdg_runtime_dir: Option<&std::ffi::OsStr>,
) -> Option<std::path::PathBuf> {
    if let Some(path) = init_control.filter(|v| !v.is_empty()) {
        return Some(path.into());
    }
    if system {
        return Some(SYSTEM_CONTROL_SOCKET.into());
    }
    xdg_runtime_dir
        .filter(|v| !v.is_empty())
        .map(|dir| std::path::Path::new(dir).join("init/control.sock"))
}

/// The control socket of a non-root PID 1 (a container run with `--user
/// UID`, with or without a passwd entry) that has no `$XDG_RUNTIME_DIR`,
/// and what its `initctl` looks for (docs/contract.md §2):
/// [`SYSTEM_CONTROL_SOCKET`] when `/run/init` is usable (`run_usable`: the
/// init could make it; its clients find the socket there), else
/// `/tmp/flotilla-UID/control.sock`.
pub fn unprivileged_control_socket(uid: u32, run_usable: bool) -> std::path::PathBuf {
    if run_usable {
        SYSTEM_CONTROL_SOCKET.into()
    } else {
        format!("/tmp/flotilla-{uid}/control.sock").into()
    }
}
