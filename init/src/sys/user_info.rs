//! A user as the system's user database gives it.

use std::path::PathBuf;

use super::Credentials;

/// A user as [`Sys::lookup_user`] resolves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    /// The user name (the number as text when the database has no entry).
    pub name: String,
    /// The UID.
    pub uid: u32,
    /// The primary GID (the UID when the database has no entry).
    pub gid: u32,
    /// Supplementary groups, the primary one included.
    pub groups: Vec<u32>,
    /// The home directory (`/` when unknown): a child's `HOME`.
    pub home: PathBuf,
    /// The login shell (`/bin/sh` when unknown): a child's `SHELL`.
    pub shell: PathBuf,
}

impl UserInfo {
    /// The credentials a unit with this `user` (and maybe a `group`
    /// overriding the primary GID) runs with.
    pub fn credentials(&self, group: Option<u32>) -> Credentials {
        Credentials {
            uid: Some(self.uid),
            gid: Some(group.unwrap_or(self.gid)),
            groups: Some(self.groups.clone()),
        }
    }
}
