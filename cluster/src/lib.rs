//! clusterd's library: fleet-compatible scheduling, the etcd registry, the
//! fleet API v1 and the agent that hands units to the local init.
//!
//! Pure parts (no I/O, table-tested): [`glob`], [`requirements`],
//! [`scheduler`], [`keys`], [`model`], [`validate`]. Unit files (names,
//! parsing, canonical text and hash, specifiers, `[X-Fleet]` values) are
//! `flotilla_systemd`'s and `flotilla_units`'s, the workspace's one
//! implementation; the
//! `unitfile` module pins what clusterd relies on from it in tests.

pub mod agent;
pub mod api;
pub mod app;
pub mod batch;
pub mod claim;
pub mod commit;
pub mod config;
pub mod control;
pub mod engine;
pub mod forward;
pub mod glob;
pub mod host;
pub mod keys;
pub mod lease;
pub mod listen;
pub mod live;
pub mod logs_api;
pub mod model;
pub mod purge;
pub mod registry;
pub mod requirements;
pub mod respond;
pub mod scheduler;
pub mod serve;
pub mod stored;
pub mod ui;
mod unitfile;
pub mod validate;
pub mod view;
pub mod write;
