//! What a scope's `[Scope]` section takes (systemd.scope(5)): a scope
//! runs nothing the init starts, so of the service context only where
//! its cgroup goes and what it holds, and how its processes are stopped.
//! The same keys are the properties `StartTransientUnit` takes for a
//! scope (docs/dbus.md, "Scopes"), which flotilla-busd makes into the
//! lines of its file. Its runtime limit and stop timeout are the YAML
//! keys' twins (`keys/mod.rs`).

use super::Key;

/// Whether a scope's `[Scope]` takes the context key `key`.
pub fn takes(key: Key) -> bool {
    matches!(
        key,
        Key::Slice
            | Key::Delegate
            | Key::TasksMax
            | Key::IoAccounting
            | Key::MemoryAccounting
            | Key::TasksAccounting
            | Key::SendSighup
            | Key::SendSigkill
    )
}
