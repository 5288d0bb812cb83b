//! A process moved into a unit's cgroup, or a cgroup below it, for
//! systemd's `AttachProcessesToUnit` (`runtime/attach.rs` decides who may):
//! its PID written to that cgroup's `cgroup.procs`. The cgroup below is
//! not made here: as under systemd, it is the delegated unit's own
//! manager's, which makes it before it asks (a cgroup the init made there
//! would be root's, in a subtree the unit's user owns).

use std::io::Write;

use crate::sys::unitrun::UnitRun;
use crate::sys::Pid;

/// Moves `pid` into the run's cgroup, or `sub` below it. The error says
/// what the kernel said, naming the file.
pub fn attach(run: &UnitRun, sub: Option<&str>, pid: Pid) -> Result<(), String> {
    let cg = run
        .cgroup()
        .ok_or_else(|| "the unit has no cgroup of its own".to_string())?;
    let dir = match sub {
        Some(s) => cg.dir().join(s),
        None => cg.dir().to_path_buf(),
    };
    let procs = dir.join("cgroup.procs");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&procs)
        .and_then(|mut f| f.write_all(pid.to_string().as_bytes()))
        .map_err(|e| format!("write {pid} to {}: {e}", procs.display()))
}
