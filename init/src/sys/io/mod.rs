//! Sockets and descriptors: the event queue the loop waits on
//! (`events.rs`: epoll and the signals it handles; what each signal asks
//! of the loop, a pure table, in `signals.rs`), the
//! wall clock's watch, the control and notify sockets
//! (`sockets.rs`), socket units' sockets and FIFOs
//! (`listen.rs`), a `recvmsg` with credentials and
//! descriptors (`fdpass.rs`), whether two descriptors
//! are one file (`kcmp.rs`), memory files, and udevd's netlink group
//! (`uevents.rs`).
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
pub mod signals;
pub mod sockets;
pub mod uevents;
