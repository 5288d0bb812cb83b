//! flotilla's D-Bus side (`flotilla-busd`): systemd's interface
//! `org.freedesktop.systemd1` served beside the init, outside PID 1
//! (`docs/dbus.md`). It answers on a peer-to-peer socket it is handed
//! (`/run/systemd/private`) and, when the system bus runs, under the name
//! `org.freedesktop.systemd1` there; every question and change goes to the
//! init over the control protocol (`flotilla-client`).

pub mod activation;
pub mod answer;
pub mod attach;
pub mod bus_names;
pub mod dict;
pub mod error;
pub mod escape;
pub mod exec_props;
pub mod fixed;
pub mod hub;
pub mod introspect;
pub mod jobs;
pub mod limits;
pub mod listed;
pub mod listen;
pub mod manager;
pub mod markers;
pub mod model;
pub mod mount_props;
pub mod mounted;
pub mod need_reload;
pub mod peers;
pub mod procs;
pub mod props;
pub mod queue;
pub mod server;
pub mod set_property;
pub mod transient;
pub mod unit_actions;
pub mod unit_files;
pub mod units_ops;
