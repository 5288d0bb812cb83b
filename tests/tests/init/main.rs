//! The system tests of the local init in one binary: the real `init` in
//! supervisor mode in a temp dir, driven by the real `initctl` and its control
//! socket. Each module is one area (logs, services, sockets, templates …);
//! `chaos` is the soak that hits one such init at random
//! (`docs/chaos.md`).

mod accept;
mod binds;
mod changes;
#[path = "../chaos.rs"]
mod chaos;
mod control;
mod deps;
mod exec_dirs;
mod fdstore;
mod generators;
mod logs;
mod memory;
mod mounts;
mod pam;
mod paths;
mod providers;
mod pull;
mod reexec;
mod search_path;
mod service;
mod sockets;
mod templates;

mod transient;
mod triggers;
mod units;
