//! The binder (`systemctl bind`, systemd's `BindMountUnit`, docs/dbus.md
//! "Binding a path into a running unit"): the init's own binary run as
//! `init --bind-mount PID SOURCE DESTINATION FLAGS`, a child of the init,
//! which binds a path of the host into the mount namespace of process
//! `PID` (a unit's main process) and exits. A process of its own because
//! `setns(2)` into another mount namespace moves the whole caller: the
//! init never leaves its own, and hears the binder's end as any child's
//! (`runtime/binding.rs`). Which binds are refused is
//! `flotilla_units::context::binds`.
//!
//! How: the source's tree is copied where the init sees it
//! (`open_tree(OPEN_TREE_CLONE | AT_RECURSIVE)`, made read-only on the
//! copy when asked), then the binder enters the unit's namespace and
//! attaches the copy at the destination (`move_mount`), after making a
//! missing mount point when asked (`mkdir`) as a unit's own binds make
//! theirs (`mount_api::attach_tree`). No propagation directory is needed,
//! as systemd 252's `/run/systemd/propagate` is: the new mount API moves a
//! detached tree into any namespace the caller has entered.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::sys::mount_api::{attach_tree, clone_tree};
use crate::sys::mount_steps::parents;
use crate::sys::{Pid, Sys};

/// The first argument that makes the init a binder.
pub const RUN_FLAG: &str = "--bind-mount";

/// The binder's exit status when its arguments are not its own (any other
/// failure exits with the `errno` of the call that failed).
pub const USAGE: u8 = 255;

/// A bind to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// The process whose mount namespace gets the bind.
    pub pid: Pid,
    /// The host's path.
    pub source: PathBuf,
    /// Where the process sees it.
    pub destination: PathBuf,
    /// Read-only, with everything below it.
    pub read_only: bool,
    /// Make a missing destination first.
    pub mkdir: bool,
}

impl Job {
    /// The binder's arguments after [`RUN_FLAG`].
    fn args(&self) -> Vec<String> {
        let flags = match (self.read_only, self.mkdir) {
            (false, false) => "-",
            (true, false) => "ro",
            (false, true) => "mkdir",
            (true, true) => "ro,mkdir",
        };
        vec![
            self.pid.to_string(),
            self.source.to_string_lossy().into_owned(),
            self.destination.to_string_lossy().into_owned(),
            flags.to_string(),
        ]
    }

    /// The job of the binder's arguments after [`RUN_FLAG`].
    pub fn parse(args: &[String]) -> Option<Job> {
        let [pid, source, destination, flags] = args else {
            return None;
        };
        let flags: Vec<&str> = flags.split(',').collect();
        Some(Job {
            pid: pid.parse().ok().filter(|&p: &Pid| p > 0)?,
            source: PathBuf::from(source),
            destination: PathBuf::from(destination),
            read_only: flags.contains(&"ro"),
            mkdir: flags.contains(&"mkdir"),
        })
    }
}

/// Whether process `pid` is in the init's own mount namespace (or gone:
/// then there is no namespace of its own to bind into either).
pub fn shares_init_namespace(pid: Pid) -> bool {
    let theirs = std::fs::read_link(format!("/proc/{pid}/ns/mnt"));
    let ours = std::fs::read_link("/proc/self/ns/mnt");
    match (theirs, ours) {
        (Ok(t), Ok(o)) => t == o,
        _ => true,
    }
}

/// Starts the binder for `job`, its output on the init's console.
pub fn spawn(sys: &dyn Sys, job: &Job) -> Result<Pid, String> {
    crate::sys::reexec::spawn_helper(sys, RUN_FLAG, job.args(), "bind")
}

/// What the binder's exit status `code` says, for the client.
pub fn failure(code: i32) -> String {
    if code == i32::from(USAGE) {
        return "the binder was started with bad arguments".into();
    }
    std::io::Error::from_raw_os_error(code).to_string()
}

/// The binder's body: 0 once the bind is made, else the `errno` of the
/// call that failed (or [`USAGE`]), the failure on standard error.
pub fn main(args: &[String]) -> u8 {
    let Some(job) = Job::parse(args) else {
        eprintln!("init: {RUN_FLAG} PID SOURCE DESTINATION ro,mkdir|-");
        return USAGE;
    };
    match bind(&job) {
        Ok(()) => 0,
        Err((what, e)) => {
            eprintln!(
                "init: bind {} on {} in the mount namespace of {}: {what}: {}",
                job.source.display(),
                job.destination.display(),
                job.pid,
                std::io::Error::from_raw_os_error(e)
            );
            u8::try_from(e).unwrap_or(USAGE)
        }
    }
}

fn cpath(p: &Path) -> Result<CString, (&'static str, i32)> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| ("a path", libc::EINVAL))
}

/// The bind itself, in this (single-threaded) process.
fn bind(job: &Job) -> Result<(), (&'static str, i32)> {
    let errno = || {
        std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    };
    let ns_path = cpath(Path::new(&format!("/proc/{}/ns/mnt", job.pid)))?;
    let source = cpath(&job.source)?;
    let destination = cpath(&job.destination)?;
    let mount_point = if job.mkdir {
        Some(parents(&job.destination, Path::new("/")).map_err(|_| ("a path", libc::EINVAL))?)
    } else {
        None
    };
    // SAFETY: plain system calls on C strings that live to the end; the
    // descriptors are closed by the process's exit.
    unsafe {
        let ns = libc::open(ns_path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if ns < 0 {
            return Err(("open the unit's mount namespace", errno()));
        }
        let tree = clone_tree(&source, true).map_err(|e| ("copy the source", e))?;
        if libc::setns(ns, libc::CLONE_NEWNS) < 0 {
            return Err(("enter the unit's mount namespace", errno()));
        }
        attach_tree(tree, &destination, job.read_only, mount_point.as_deref())
            .map_err(|e| ("mount", e))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_job_round_trips_through_its_arguments() {
        for (read_only, mkdir) in [(false, false), (true, false), (false, true), (true, true)] {
            let job = Job {
                pid: 42,
                source: "/run/testservice-49-runtime".into(),
                destination: "/tmp/testfile_runtime".into(),
                read_only,
                mkdir,
            };
            assert_eq!(Job::parse(&job.args()), Some(job));
        }
        assert_eq!(
            Job::parse(&["0".into(), "/a".into(), "/b".into(), "-".into()]),
            None
        );
        assert_eq!(Job::parse(&["1".into()]), None);
        assert!(shares_init_namespace(std::process::id() as Pid));
        assert_eq!(
            failure(libc::ENOENT),
            "No such file or directory (os error 2)"
        );
    }
}
