//! The tests of Debian's own unit files and daemons on this machine, in
//! one binary: the loader over the whole of `/lib/systemd/system`
//! (`debian_corpus.rs`), Debian's daemons from their unit files in
//! namespaces of their own (`debian_daemons.rs`), and nginx enabled as
//! Debian enables it (`debian_enablement.rs`). Needs root and the packages
//! scripts/test installs.

#[path = "debian_corpus.rs"]
mod debian_corpus;
#[path = "debian_daemons.rs"]
mod debian_daemons;
#[path = "debian_enablement.rs"]
mod debian_enablement;
