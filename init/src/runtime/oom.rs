//! The kernel's OOM killer taking a unit's process (docs/service-context.md,
//! "Out of memory"). The init does not watch for it: a process it reaps
//! killed by `SIGKILL` may be the OOM killer's, so then (and only then) it
//! reads the cgroup's `memory.events` counter, as systemd looks before it
//! handles such an exit, and tells the planner before the exit, which
//! applies `OOMPolicy=`.

use super::Runtime;
use crate::sys::{Pid, Sys};
use flotilla_units::graph::UnitId;
use flotilla_units::planner::Fact;

impl<S: Sys> Runtime<S> {
    /// `pid` was reaped killed by `SIGKILL`: for its unit (for a process
    /// reaped as the units' subreaper, whose unit the init no longer
    /// knows: every running unit with a memory limit), the OOM kills its
    /// cgroup counts since the last look, each unit with one noted and
    /// told to the planner. A unit's own process that its cgroup does not
    /// count was killed still in the init's memory if the init's cgroup
    /// counts a new kill (`Sys::init_oom_kills`): the same OOM kill.
    pub(super) fn check_oom(&mut self, pid: Pid) {
        // Read at every such reap, so that a kill counted there is news
        // once only, whoever it was.
        let in_init = self.sys.init_oom_kills();
        let (units, own): (Vec<UnitId>, bool) = match self.planner.owner(pid) {
            Some((unit, _)) => (vec![unit], true),
            None => {
                let graph = self.planner.graph();
                let limited = self
                    .slots
                    .all()
                    .filter(|s| s.run.is_some())
                    .map(|s| s.unit)
                    .filter(|&u| {
                        graph.get(u).is_some_and(|n| {
                            let r = &n.spec.extras.context.resources;
                            r.memory_max.is_some() || r.memory_high.is_some()
                        })
                    })
                    .collect();
                (limited, false)
            }
        };
        for unit in units {
            let Some(run) = self.slots.get(unit).and_then(|s| s.run.as_deref()) else {
                continue;
            };
            let mut kills = self.sys.unit_oom_kills(run);
            if kills == 0 && own && in_init > 0 {
                kills = 1;
            }
            if kills == 0 {
                continue;
            }
            let what = if kills == 1 {
                "a process".to_string()
            } else {
                format!("{kills} processes")
            };
            self.unit_note(
                unit,
                &format!(
                    "the kernel's OOM killer killed {what} of the unit (memory.events: oom_kill)"
                ),
            );
            self.fact(Fact::OomKilled { unit });
        }
    }
}
