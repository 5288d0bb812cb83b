//! clusterd's library: fleet-compatible scheduling, the etcd registry, the
//! fleet API v1 and the agent that hands units to the local init.
//!
//! Pure parts (no I/O, table-tested): [`unitfile`], [`glob`],
//! [`requirements`], [`scheduler`], [`keys`], [`model`], [`validate`].

pub mod agent;
pub mod api;
pub mod config;
pub mod control;
pub mod engine;
pub mod glob;
pub mod keys;
pub mod model;
pub mod registry;
pub mod requirements;
pub mod scheduler;
pub mod unitfile;
pub mod validate;
