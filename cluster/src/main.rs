//! `clusterd`: fleet-compatible cluster agent, engine and API over etcd.

fn main() {}
