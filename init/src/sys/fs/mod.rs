//! Files and mounts: the mount calls and the mount namespace's steps of a
//! context (the new mount API, `PrivateDevices=`'s `/dev`), the
//! directories and files a unit's context makes and
//! `clean.rs` removes, the binder of `systemctl bind` (`bind_mount.rs`), a file read with its links
//! followed safely (`chase.rs`), path units' inotify
//! watches (`paths.rs`), the files that tell journald a
//! unit's settings, and the machine's facts `Condition…=` is checked
//! against (`conditions.rs`).
//!
//! What it does not know: cgroups, and which path a unit asks for (the
//! plans come from `flotilla_units`). Its mount and directory steps are
//! written in `exec/`'s program of steps (`steps.rs`); the cleaner it
//! starts is the init's own binary (`procs/`'s re-exec finds it).

pub mod bind_mount;
pub(in crate::sys) mod chase;
pub mod clean;
pub mod conditions;
pub mod dirs;
pub(in crate::sys) mod mount_api;
pub(in crate::sys) mod mount_steps;
pub mod paths;
pub(in crate::sys) mod private_dev;
pub mod unit_state;
