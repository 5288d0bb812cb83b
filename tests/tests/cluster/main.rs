//! The cluster system tests in one binary: a real etcd, real `clusterd`
//! and `init` processes, the fleet API over HTTP, `initctl cluster`, TLS in
//! a network namespace, the dashboard in a real browser, and the chaos soak.
//! `support` is their shared harness; each other module is one area.

mod support;

mod api;
mod batch;
mod chaos;
mod committer;
mod ctl;
mod durable;
mod dynamic;
mod failures;
mod faults;
mod fit;
mod fleetctl;
mod forward_tls;
mod functional;
mod install;
mod membership;
mod multi;
mod scheduling;
mod tls;
mod ui;
mod unit_actions;
