//! The tests that need a PID namespace of their own, in one binary: the
//! real `init` as PID 1 of a fresh PID namespace, as a container runs it
//! (`pid1_namespace.rs`), its re-exec there (`pid1_reexec.rs`), and the
//! system's locale in its environment (`pid1_locale.rs`). Needs
//! root and util-linux's unshare.

#[path = "pid1_locale.rs"]
mod pid1_locale;
#[path = "pid1_namespace.rs"]
mod pid1_namespace;
#[path = "pid1_reexec.rs"]
mod pid1_reexec;

// The harness of the modules (the init as PID 1), one copy for them all.
mod pid1_support;
