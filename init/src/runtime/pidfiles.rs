//! A forking daemon's main process on the init's side: its pidfile read
//! and the PID judged by `flotilla_units::pidfile`'s rule, as systemd's
//! `service_load_pid_file` (docs/systemd-units.md, "Pidfiles"), or, with
//! no pidfile, guessed from the unit's cgroup.

use super::Runtime;
use crate::sys::{Errno, Os, Sys, SysError};
use flotilla_units::graph::UnitId;
use flotilla_units::pidfile::{self, Refused};
use flotilla_units::planner::Role;
use std::path::Path;

impl<S: Sys> Runtime<S> {
    /// Reads unit `unit`'s pidfile at `path` and judges its PID. A stale
    /// one (a PID that is not running) is not the daemon, nor is another
    /// unit's process named by a file the unit's own user could have
    /// written (through a link it made, or a file it owns): the planner
    /// reads again until the file is rewritten or the start times out.
    pub(super) fn read_pidfile(&self, unit: UnitId, path: &Path) -> Result<i32, String> {
        let read = crate::pidfile::read_pidfile(&self.sys, path).map_err(|e| e.to_string())?;
        let pid = read.pid;
        let owner = self.planner.owner(pid).filter(|(u, _)| *u == unit);
        let cgroup = self
            .slots
            .get(unit)
            .and_then(|s| s.run.as_deref())
            .filter(|r| r.has_cgroup());
        // Without a cgroup only the processes the init started are known
        // to be the unit's.
        let of_unit = match cgroup {
            Some(run) => Some(owner.is_some() || self.sys.unit_pids(run).contains(&pid)),
            None => owner.is_some().then_some(true),
        };
        let gone = matches!(
            self.sys.kill(pid, 0),
            Err(SysError::Kill {
                errno: Os(Errno::ESRCH),
                ..
            })
        );
        let judged = pidfile::take(pidfile::Read {
            manager: pid == self.sys.getpid(),
            command: owner.is_some_and(|(_, r)| r != Role::Main),
            exists: !gone,
            of_unit,
            unsafe_chain: read.unsafe_step.is_some(),
            owned_by_manager: read.owner == self.sys.geteuid(),
        });
        match judged {
            Ok(()) => Ok(pid),
            Err(Refused::Gone) => Err(format!(
                "pidfile {}: PID {pid} is not running",
                path.display()
            )),
            Err(why @ Refused::UnsafeChain) => Err(format!(
                "pidfile {}: PID {pid} refused: {why} ({})",
                path.display(),
                read.unsafe_step.map(|u| u.to_string()).unwrap_or_default()
            )),
            Err(why) => Err(format!(
                "pidfile {}: PID {pid} refused: {why}",
                path.display()
            )),
        }
    }

    /// The main PID of a forking daemon without a pidfile, as systemd
    /// guesses it: the one process of the unit's cgroup whose parent is
    /// not in the cgroup (the daemon the start command left behind);
    /// `None` when the cgroup is empty (the start command left nothing).
    pub(super) fn guess_main_pid(&self, unit: UnitId) -> Result<Option<i32>, String> {
        let run = self.slots.get(unit).and_then(|s| s.run.as_deref());
        let Some(run) = run.filter(|r| r.has_cgroup()) else {
            return Err("no pidfile, and no cgroup to find the main process in".into());
        };
        let pids = self.sys.unit_pids(run);
        if pids.is_empty() {
            return Ok(None);
        }
        let parent = |pid: i32| {
            let stat = self
                .sys
                .read_file_limited(Path::new(&format!("/proc/{pid}/stat")), 4096)
                .ok()?;
            // After the command's name, which ends at the last `)`.
            let at = stat.iter().rposition(|&b| b == b')')?;
            let rest = std::str::from_utf8(stat.get(at + 1..)?).ok()?;
            rest.split_whitespace().nth(1)?.parse::<i32>().ok()
        };
        let mains: Vec<i32> = pids
            .iter()
            .copied()
            .filter(|&p| parent(p).is_some_and(|pp| !pids.contains(&pp)))
            .collect();
        match mains[..] {
            [pid] => Ok(Some(pid)),
            [] => Err("no process of the unit's cgroup has its parent outside it".into()),
            _ => Err(format!(
                "no pidfile, and {} processes in the unit's cgroup could be the main one",
                mains.len()
            )),
        }
    }
}
