//! The tests of a container engine and of the Debian root, in one binary:
//! the application container (`container_app.rs`) and the Debian system
//! container (`container_podman.rs`) under podman, and flotilla's Debian
//! package installed into the cached Debian root (`debian_package.rs`).
//! Each holds [`flotilla_tests::heavy`] for its run: they run one after
//! another.

#[path = "container_app.rs"]
mod container_app;
#[path = "container_podman.rs"]
mod container_podman;
#[path = "debian_package.rs"]
mod debian_package;

// The harness of the modules (the init as PID 1), one copy for them all.
mod pid1_support;
