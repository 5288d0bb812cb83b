//! Sockets and descriptors: the event queue the loop waits on
//! (`events.rs`: epoll and the signals it handles; what each signal asks
//! of the loop, a pure table, in `signals.rs`), the
//! wall clock's watch, the control and notify sockets
//! (`sockets.rs`), socket units' sockets and FIFOs
//! (`listen.rs`), a `recvmsg` with credentials and
//! descriptors (`fdpass.rs`), whether two descriptors
//! are one file (`kcmp.rs`), memory files, udevd's netlink group
//! (`uevents.rs`), and the write to standard output that never waits
//! (`nowait.rs`).
//!
//! What it does not know: what the bytes on those descriptors mean (the
//! control protocol, notify messages and output lines are parsed above
//! `sys/`), and processes.

pub(in crate::sys) mod clock;
pub mod events;
pub mod fdpass;
pub mod kcmp;
pub mod listen;
pub(crate) mod memfd;
pub(in crate::sys) mod nowait;
pub mod signals;
pub mod sockets;
pub mod uevents;
