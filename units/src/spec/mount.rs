//! What a mount unit mounts, as its file says it (systemd's `[Mount]`
//! section: docs/systemd-units.md, "Mount units").

use serde::{Deserialize, Serialize};

/// A mount unit's place and what it mounts there. The init watches the
/// mount table for the place (its unit is active while something is
/// mounted there, whoever mounted it); the bus side shows these, or the
/// table's entry while the place is mounted, as systemd does.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MountParams {
    /// `Where=`: the mount point, absolute.
    pub place: String,
    /// `What=`: the source (a device, a remote export, `tmpfs`).
    pub what: String,
    /// `Type=`, empty when the file gives none.
    pub fstype: String,
    /// `Options=`, comma-separated, empty when the file gives none.
    pub options: String,
}
