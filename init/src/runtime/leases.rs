//! Leases on transient sets (`transient-lease`,
//! [`flotilla_units::transient_lease`]): the init stops a set's covered
//! units at the lease's `stop_at` and kills what is left of them at its
//! `kill_at`, on its own, so that a client holding the set that dies or
//! freezes (`clusterd`: docs/cluster.md "A cut longer than the TTL: the
//! fence") cannot leave them running past what it promised elsewhere. The instants join the loop's
//! other deadlines ([`Runtime::turn`]): no thread, no periodic tick.
//!
//! The stop takes the units out of the set, exactly as a
//! `transient-patch` removing them would, so the client finds them gone
//! when it lists the set again. A lease is carried across a re-exec
//! (`reexec.rs`): its instants are `CLOCK_MONOTONIC`'s, which an
//! `execve` does not move.

use super::Runtime;
use crate::sys::Sys;
use flotilla_units::protocol::{ErrorCode, Reply};
use flotilla_units::signal::Signal;
use flotilla_units::time::Instant;
use flotilla_units::transient_lease::{problems, Due, Lease, Stage};
use std::collections::BTreeSet;

impl<S: Sys> Runtime<S> {
    /// `transient-lease`: takes, renews or (without instants) cancels the
    /// lease on `set`.
    pub(super) fn lease_transient(
        &mut self,
        set: String,
        stop_at: Option<u64>,
        kill_at: Option<u64>,
        units: Option<Vec<String>>,
    ) -> Reply {
        let (stop_at, kill_at) = match (stop_at, kill_at) {
            (None, None) if units.is_none() => {
                let had = self.units.leases.remove(&set).is_some();
                let message = if had {
                    format!("the lease on `{set}` is cancelled")
                } else {
                    format!("`{set}` had no lease")
                };
                return Reply::Accepted { message };
            }
            (Some(s), Some(k)) => (s, k),
            _ => {
                return Reply::error(
                    ErrorCode::Invalid,
                    "a lease has both stop_at and kill_at (neither, and no units, cancels it); nothing changed",
                )
            }
        };
        let members = self.units.members(&set);
        let bad = problems(&set, members.as_ref(), stop_at, kill_at, units.as_deref());
        if !bad.is_empty() {
            return Reply::Error {
                code: ErrorCode::Invalid,
                message: "invalid transient lease; nothing changed".into(),
                details: bad,
            };
        }
        let units: Option<BTreeSet<String>> = units.map(|u| u.into_iter().collect());
        let members: BTreeSet<String> = members
            .unwrap_or_default()
            .into_iter()
            .map(str::to_string)
            .collect();
        let left = Instant(stop_at).since(self.now());
        let lease = self
            .units
            .leases
            .entry(set.clone())
            .or_insert_with(|| Lease::new(stop_at, kill_at, BTreeSet::new()));
        // Said in the reply: a client renewing a lease that fired a moment
        // before (its answer from elsewhere came just after the stop) has
        // its units taken out, which it must learn rather than guess from
        // its clock.
        let fired = lease.stage != Stage::Armed;
        lease.keep_only(&members.iter().map(String::as_str).collect());
        lease.renew(stop_at, kill_at, units);
        let message = format!(
            "the lease on `{set}` covers {} units, stopped in {left:?} unless renewed",
            lease.units.len()
        );
        if fired {
            let message = format!("it had fired, its units are out of the set; {message}");
            return Reply::LeaseFired { message };
        }
        Reply::Accepted { message }
    }

    /// The earliest instant a lease has something due.
    pub(super) fn next_lease_at(&self) -> Option<Instant> {
        self.units.leases.values().filter_map(Lease::next_at).min()
    }

    /// Does what the leases have due now (not in a shutdown, which stops
    /// every unit anyway).
    pub(super) fn fire_leases(&mut self) {
        if self.units.leases.is_empty() || self.shutdown.is_some() {
            return;
        }
        let now = self.now();
        let due: Vec<(String, Due)> = self
            .units
            .leases
            .iter()
            .filter_map(|(set, l)| l.due(now).map(|d| (set.clone(), d)))
            .collect();
        for (set, d) in due {
            match d {
                Due::Stop => self.lease_stop(&set),
                Due::Kill => self.lease_kill(&set),
            }
        }
    }

    /// The lease on `set` expired: its units leave the set.
    fn lease_stop(&mut self, set: &str) {
        let Some(lease) = self.units.leases.get(set) else {
            return;
        };
        let taken: BTreeSet<String> = lease
            .units
            .iter()
            .filter(|u| self.units.in_transient(set, u))
            .cloned()
            .collect();
        if !lease.units.is_empty() {
            self.sys.console(&format!(
                "init: {set} lease expired: stopping {} units of the transient set `{set}`",
                lease.units.len()
            ));
        }
        if !taken.is_empty() {
            let remove = taken.iter().cloned().collect();
            if let Reply::Error {
                message, details, ..
            } = self.patch_transient(set.to_string(), Vec::new(), remove)
            {
                // Its units stay in the set; what runs of them is killed
                // at the kill time all the same.
                self.sys.console(&format!(
                    "init: {set} lease: taking its units out failed: {message}: {}",
                    details.join("; ")
                ));
            }
        }
        if let Some(lease) = self.units.leases.get_mut(set) {
            lease.stopped();
        }
    }

    /// The lease on `set` reached its kill time: every process left of
    /// the units it stopped gets SIGKILL.
    fn lease_kill(&mut self, set: &str) {
        let Some(lease) = self.units.leases.get_mut(set) else {
            return;
        };
        let names = std::mem::take(&mut lease.stopped);
        lease.killed();
        let mut killed = Vec::new();
        for n in names {
            let Some(id) = self.planner.graph().unit(&n) else {
                continue;
            };
            let main = self.planner.view(id).and_then(|v| v.pid);
            if self.kill_processes(id, main, Signal::KILL, false) {
                killed.push(n);
            }
        }
        if !killed.is_empty() {
            self.sys.console(&format!(
                "init: {set} lease: still running at its kill time, killed: {}",
                killed.join(" ")
            ));
        }
    }
}
