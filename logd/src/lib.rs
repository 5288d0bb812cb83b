//! `flotilla-logd`, the log writer: it takes the units' lines from the
//! init over the control socket and appends them to the init's log
//! directory, so that PID 1 never waits on a disk (issue 17,
//! `docs/design.md`).
//!
//! - [`channel`]: the connection to the init, and the signals that ask
//!   the writer to stop;
//! - [`writer`]: the loop: pull a batch, write it, acknowledge it, back off
//!   when the directory cannot be written;
//! - [`store`]: the files: appending, rotating, finding where an earlier
//!   writer left off;
//! - [`format`]: a file's lines (also read by `initctl logs`);
//! - [`args`]: the flags.
#![warn(missing_docs)]

pub mod args;
pub mod channel;
pub mod format;
pub mod store;
pub mod writer;
