//! What a trigger unit holds while it is up, kept in its slot
//! (`slots.rs`): a socket unit's sockets ([`Listening`], bound and watched
//! by `triggers.rs`) and a path unit's inotify instance ([`Watching`],
//! `watches.rs`), and how each is let go of; and a scope's processes
//! ([`Adopted`], `scopes.rs`), which are not the init's children. A
//! service's descriptor store ([`Store`], filled and emptied by
//! `fdstore.rs`) is kept in the slot too, across the unit's restarts.

use crate::sys::{Sys, Token};
use flotilla_units::fdstore::FdStore;
use flotilla_units::trigger::PathSpec;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

/// A socket unit's sockets, while it is up.
pub(super) struct Listening {
    /// Each socket and its token, in the order of the `Listen…=` lines.
    pub fds: Vec<(OwnedFd, Token)>,
    /// Each, as status shows it (`stream 127.0.0.1:80`).
    pub lines: Vec<String>,
    /// The service it hands them to.
    pub service: String,
    /// The socket unit's own name (a service's `Sockets=` names it).
    pub unit: String,
    /// The name of each in `LISTEN_FDNAMES`.
    pub name: String,
    /// Files removed when the unit stops (`RemoveOnStop=`).
    pub remove: Vec<PathBuf>,
    /// Whether the sockets are watched now.
    pub watched: bool,
    /// `Accept=yes`: the init accepts the connections (`accepts.rs`).
    pub accept: bool,
}

/// A path unit's watches, while it is up.
pub(super) struct Watching {
    /// The inotify instance.
    pub fd: OwnedFd,
    /// Its token in the loop.
    pub token: Token,
    /// What the unit watches.
    pub specs: Vec<PathSpec>,
    /// Each watch descriptor and what it watches.
    pub wds: Vec<(i32, PathBuf)>,
    /// Whether the instance is watched now.
    pub watched: bool,
}

impl Watching {
    /// Unwatches and closes the instance (its watches go with it); the
    /// token to give back.
    pub fn close(self, sys: &dyn Sys) -> Token {
        if self.watched {
            let _ = sys.unwatch(self.fd.as_raw_fd());
        }
        self.token
    }
}

/// A scope's processes, while it is up; also an `exit-type: cgroup`
/// service's cgroup, while it empties (`emptied.rs`).
pub(super) struct Adopted {
    /// What watches them.
    pub adoption: crate::sys::adopt::Adoption,
    /// Each watched descriptor and its token.
    pub fds: Vec<(std::os::fd::RawFd, Token)>,
    /// The first process given: the scope's main PID (signalled first at
    /// a stop); the scope's end is told by unit once none is left.
    pub leader: i32,
}

/// A stored descriptor, and its token while it is watched for hang-up.
pub(super) struct Held {
    pub fd: OwnedFd,
    pub token: Option<Token>,
}

/// A unit's store.
pub(super) type Store = FdStore<Held>;
