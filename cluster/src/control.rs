//! The local init's control socket, through the shared client
//! (`flotilla_client`): one connection per request, a connection kept for
//! many requests (the agent's: one connection, not one per change), and a
//! long-lived `subscribe` stream.

pub use flotilla_client::tokio::{
    request, request_all, stream, subscribe, Connection, Subscription,
};
use flotilla_units::protocol::SYSTEM_CONTROL_SOCKET;
use std::path::PathBuf;

/// The init's control socket as `initctl` resolves it (docs/contract.md §2); the system
/// socket when no rule applies (a non-root `clusterd` without
/// `$XDG_RUNTIME_DIR`: under the init, `$INIT_CONTROL` is always set).
pub fn default_control_path() -> PathBuf {
    flotilla_client::control_path(None).unwrap_or_else(|| PathBuf::from(SYSTEM_CONTROL_SOCKET))
}
