//! cgroup v2 and what rides on it: the init's cgroup and one per unit with
//! its limits, kill and usage (`cgroup.rs`), the slices
//! between them, the eBPF programs a unit's cgroup carries (device and IP
//! filters), the freezer, a process moved into a unit
//! (`attach.rs`) and a scope's processes watched
//! (`adopt.rs`).
//!
//! What it does not know: how a process is started (a child is born in
//! its cgroup by `procs/`), the units' rules (`flotilla_units::freezer`,
//! `flotilla_units::attach`), and the loop.

pub mod adopt;
pub mod attach;
pub(in crate::sys) mod bpf;
pub mod cgroup;
pub(in crate::sys) mod devices;
pub mod freezer;
pub(in crate::sys) mod ipfilter;
pub(in crate::sys) mod slices;
