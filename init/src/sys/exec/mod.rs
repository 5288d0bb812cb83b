//! A unit's exec context: prepared in the parent
//! (`context.rs`, with what this kernel and init can
//! do, `host.rs`) as a program of steps
//! (`steps.rs`) that the spawned child runs before
//! `execve` (`sandbox.rs`): identity and credentials,
//! user namespaces, seccomp, terminals and standard input, journald's
//! stream, and what a setting does where a privilege is missing
//! (`degrade.rs`). Its real-process tests are
//! `context_tests/`.
//!
//! What it does not know: how the child is started (`procs/` runs the
//! prepared steps), and the keys' syntax and rules (`flotilla_units::context`
//! parses them and plans the mounts). The mount calls and a unit's
//! directories are `fs/`'s and its cgroup is `cgroups/`'s: it uses them.

pub mod context;
#[cfg(test)]
mod context_tests;
pub mod credentials;
pub(in crate::sys) mod degrade;
pub(in crate::sys) mod host;
pub(in crate::sys) mod input_data;
pub mod journal;
pub(in crate::sys) mod kernel;
pub(in crate::sys) mod sandbox;
pub(in crate::sys) mod seccomp;
pub(in crate::sys) mod steps;
pub(in crate::sys) mod terminal;
pub(in crate::sys) mod userns;
