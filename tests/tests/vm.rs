//! The qemu tests but `debian_boot` (which runs beside the whole suite), in
//! one binary: the busybox image's boot (`vm_boot.rs`), the cgroup limits
//! and the sandbox in a VM (`vm_context.rs`), and systemd's own tests in
//! the Debian image (`systemd_tests/`). Each VM test holds
//! [`flotilla_tests::heavy`] for its run: they boot one after another.

#[path = "systemd_tests/main.rs"]
mod systemd_tests;
#[path = "vm_boot.rs"]
mod vm_boot;
#[path = "vm_context.rs"]
mod vm_context;

// The harnesses of the modules (the init as PID 1; a Debian VM), one
// copy for them all.
mod debian_support;
mod pid1_support;
