//! Processes: starting one (`spawn/`, from a
//! [`SpawnRequest`](crate::sys::SpawnRequest) and its environment,
//! `env.rs`), the `clone3(2)` and `pidfd_open(2)` it rests
//! on, the init's own resource limits, memory policy and re-exec, a
//! child's CPUs and memory policy (`placement.rs`), and the helper programs
//! the init runs as its children (the generator runner, `flotilla-pam`'s
//! command line); users and groups looked up in the system's databases,
//! and the users' IPC objects removed when their last unit
//! stops.
//!
//! What it does not know: what a unit's context asks of the child (the
//! steps it runs before `execve` come ready-made from `exec/`, a
//! `ChildContext`), cgroups beyond the directory a child is born in, and
//! the loop.

pub(in crate::sys) mod clone3;
pub mod env;
pub mod generators;
pub mod ipc;
pub mod pam;
pub(in crate::sys) mod pidfd;
pub mod placement;
pub mod reexec;
pub mod rlimits;
pub(in crate::sys) mod spawn;
pub(in crate::sys) mod spawn_request;
pub(in crate::sys) mod users;
