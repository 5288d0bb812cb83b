//! `initctl`: the control client of flotilla's init.

fn main() {}
