//! flotilla's init as a library: the binary `init` (`src/main.rs`) is the
//! event loop; the pieces it drives live here.
//!
//! - [`sys`]: every system call the init makes, behind the [`sys::Sys`]
//!   trait, with the real implementation and a recording fake;
//! - [`outpipe`]: a unit's stdout or stderr, captured through a pipe and
//!   split into lines;
//! - [`logbuf`]: the bounded per-unit log in memory, and how far the log
//!   writer has it;
//! - [`ratelimit`]: a unit's output rate limit;
//! - [`notify`]: the per-unit `sd_notify` socket and its message parser;
//! - [`pidfile`]: reading and validating a daemon's pidfile;
//! - [`unitdir`]: reading a units directory;
//! - [`udev_db`]: udev's database, the devices the init makes units of;
//! - [`loader`]: the unit loader, a child of the init that reads them;
//! - [`pathstamp`]: what a read of the search path saw, and whether it
//!   changed since;
//! - [`control`]: the control socket's connections and framing;
//! - [`runtime`]: the event loop;
//! - [`pid1`]: PID 1's own duties;
//! - [`args`]: flags, resolved into settings;
//! - [`settings`]: what the init runs with;
//! - [`cmd`]: the command after `--`, a unit of the set.
#![warn(missing_docs)]

pub mod loader;
pub mod logbuf;
pub mod logwriter;
pub mod notify;
pub mod outpipe;
pub mod pathstamp;
pub mod pidfile;
pub mod ratelimit;
pub mod settings;
pub mod sys;
pub mod systemd_bus;
pub mod udev_db;
pub mod unitdir;

pub mod args;
pub mod cmd;
pub mod control;
pub mod pid1;
pub mod runtime;
pub mod shape;
