//! `init`: flotilla's init, as PID 1 or as a foreground supervisor.

fn main() {}
