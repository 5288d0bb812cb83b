//! flotilla's pure model.
//!
//! This crate is the brain of flotilla and does no process or socket I/O. It
//! holds:
//!
//! - [`spec`]: the validated model of one unit ([`spec::UnitSpec`]);
//! - [`context`]: a service's context (directories, limits, output, cgroup
//!   limits, sandbox) and the systemd value syntax of its keys;
//! - [`exits`]: sets of exit statuses (`SuccessExitStatus=`,
//!   `RestartPreventExitStatus=`);
//! - [`keys`]: the table of a unit's keys, which every way of giving a unit
//!   (YAML, systemd INI, transient units) reads and checks through;
//! - [`load`]: reading YAML unit files into that model, with `FILE:LINE:COL`
//!   diagnostics ([`diag`]);
//! - [`trigger`]: the settings of the trigger units (`timer`, `socket`,
//!   `path`), read in systemd's syntax;
//! - systemd's value syntax, which the YAML loader and the translator share:
//!   [`timespan`], [`calendar`] and [`tz`] (and [`timer`], a `.timer`'s next
//!   elapse), [`condition`], [`unit_name`], [`escape`], [`specifier`],
//!   [`exec`], [`fleet`] (`[X-Fleet]` values, fleet's booleans,
//!   [`fleet::UnitOption`]) and [`detect_virt`];
//! - [`udev`]: udev's database and its netlink messages, and the `.device`
//!   units a device becomes;
//! - [`graph`]: the target graph, the required set of a target, cycles;
//! - [`planner`]: the state model and the deterministic planner
//!   `(graph, target, observed facts, time) -> (states, actions)`;
//! - [`protocol`]: the types of the init's control protocol.
//! - [`fleet_api`]: the JSON shapes of fleet's API v1 (clusterd and its clients).
//!
//! It knows nothing of systemd's file formats or search paths: reading INI
//! unit files, drop-ins, the unit search path, `[Install]` and presets, and
//! translating a unit file into a [`spec::UnitSpec`], is the `flotilla-systemd`
//! crate's, which depends on this one (never the other way; docs/design.md).
//!
//! Time enters as arguments ([`time::Instant`] is a plain number of
//! nanoseconds on the caller's monotonic clock), never from a clock read here.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod account;
pub mod attach;
pub mod c_words;
pub mod calendar;
pub mod chase;
mod civil;
pub mod cli;
pub mod collect;
pub mod condition;
pub mod config;
pub mod context;
pub mod detect_virt;
pub mod diag;
pub mod duration;
pub mod dynamic_user;
pub mod escape;
pub mod exec;
pub mod exits;
pub mod fdstore;
pub mod fleet;
pub mod fleet_api;
pub mod freezer;
pub mod graph;
pub mod keys;
pub mod load;
pub mod locale;
pub mod loglevel;
pub mod manager_env;
pub mod mask;
pub mod mountinfo;
pub mod notify_access;
pub mod pidfile;
pub mod planner;
pub mod protocol;
pub mod signal;
pub mod snapshot;
pub mod spec;
pub mod specifier;
pub mod state;
pub mod sysv;
pub mod targets;
pub mod time;
pub mod timer;
pub mod timespan;
pub mod transient_lease;
pub mod trigger;
pub mod tz;
pub mod udev;
pub mod unit_messages;
pub mod unit_name;
pub mod unit_type;
