//! Why a request of the planner is refused: an unknown target, a unit
//! that cannot be reloaded or restarted.

/// Why the target is not known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTarget(pub String);

/// Why a unit cannot be reloaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReloadError {
    /// No such unit.
    UnknownUnit(String),
    /// It is not running (or already reloading).
    NotRunning(String),
    /// It has no `exec-reload`.
    NoReloadCommand(String),
}

/// Why a unit cannot be restarted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestartError {
    /// No such unit.
    UnknownUnit(String),
    /// The current target does not require it.
    NotRequired(String),
    /// The system is shutting down.
    ShuttingDown,
}
