//! Lanes: descriptors set aside low in the table for children in flight
//! (`flight.rs`) that share the init's descriptor table until they
//! unshare it.
//!
//! # Why
//!
//! A child cloned without `CLONE_FILES` gets a copy of the whole table
//! (`dup_fd`: a reference taken on every open file), and closes it again
//! before `execve` (`filp_close` of each: the file's flush, its dnotify and
//! POSIX locks looked at). The init holds two output pipes per running
//! unit, so each spawn cost O(units running) twice over, in the init and in
//! the child, and a launch of N units O(N²): in a launch of 1000 units,
//! closing the copies was two thirds of the children's CPU before their
//! `execve`, as much as the init's own (docs/performance.md). A child that
//! shares the table and then calls `close_range(bound, ~0U,
//! CLOSE_RANGE_UNSHARE)` gets a table of its own holding only what lies
//! below `bound` (fs/file.c, as the module documentation of `mod.rs`
//! says): a cost in `bound`, whatever the init holds.
//!
//! # How
//!
//! What such a child reads before it unshares (its streams' sources and
//! its report's write end) must stay where it is until then, although the
//! parent goes on at once, and its `bound` is one more than the highest
//! of them ([`keep_below`]): whatever their numbers, the child keeps them;
//! the lanes make the numbers low. A lane is three descriptors reserved
//! with the spawner, while the process holds few: slots for stdout, stderr
//! and the report (stdin, when it is `/dev/null`, is the spawner's own,
//! which it keeps below every lane; a child whose stdin is another
//! descriptor takes no lane, since the caller may close that one at once).
//! Between flights they hold the spawner's placeholder, an `O_PATH`
//! descriptor of `/`: references to one file, cheap to copy, and the
//! cheapest to close (the kernel's `filp_flush` looks for no dnotify
//! watch and no POSIX lock on an `O_PATH` file, which for `/dev/null` was
//! about half of what a child paid to close the lanes it copied). A lane
//! given a `/dev/null` stream keeps it. A flight takes the lowest free
//! lane (so that `bound` stays as low as the load allows) and copies its
//! sources into it. The lane is given back (its slots get the placeholder
//! again, dropping the init's references to the pipes) once the child has
//! unshared: at its first message on the report (it writes none before),
//! or when it is known to have ended. When every lane is taken (more
//! children in flight than [`LANES`]), a flight copies the table.

use std::ffi::c_uint;
use std::os::fd::{OwnedFd, RawFd};

use super::slots::{dup_above_stdio, restore_slots, Holds, Slot};
use super::Errno;

/// How many lanes a spawner reserves: a launch's layer of a hundred units
/// has up to as many children in flight at once (the loop reads their
/// reports at its next turn). 288 descriptors, held for the process's
/// life: copies of one file, 2.3 KiB of the table.
pub(super) const LANES: usize = 96;

/// One lane: the slots of stdout and stderr, and the report's.
#[derive(Debug)]
pub(super) struct Lane {
    pub(super) slots: [Slot; 2],
    pub(super) report: Slot,
}

/// The reserved lanes, and which are free.
#[derive(Debug)]
pub(super) struct Lanes {
    lanes: Vec<Lane>,
    /// Bit `i`: lane `i` is free.
    free: u128,
}

impl Lanes {
    /// Reserves up to [`LANES`] lanes, each descriptor a copy of the
    /// placeholder; fewer if the table runs out.
    pub(super) fn reserve(placeholder: &OwnedFd) -> Lanes {
        let mut lanes = Vec::with_capacity(LANES);
        let slot = || {
            dup_above_stdio(placeholder).map(|fd| Slot {
                fd,
                holds: Holds::Placeholder,
            })
        };
        let lane = || -> Result<Lane, Errno> {
            let slots = [slot()?, slot()?];
            let report = slot()?;
            Ok(Lane { slots, report })
        };
        while lanes.len() < LANES {
            match lane() {
                Ok(l) => lanes.push(l),
                Err(_) => break,
            }
        }
        let free = match lanes.len() {
            n if n >= 128 => u128::MAX,
            n => (1u128 << n) - 1,
        };
        const { assert!(LANES <= 128) };
        Lanes { lanes, free }
    }

    /// The descriptors of every lane (for tests).
    #[cfg(test)]
    pub(super) fn fds(&self) -> Vec<RawFd> {
        use std::os::fd::AsRawFd;
        self.lanes
            .iter()
            .flat_map(|l| l.slots.iter().chain(std::iter::once(&l.report)))
            .map(|s| s.fd.as_raw_fd())
            .collect()
    }

    /// Takes the lowest free lane.
    pub(super) fn take(&mut self) -> Option<(usize, &mut Lane)> {
        if self.free == 0 {
            return None;
        }
        let i = self.free.trailing_zeros() as usize;
        let lane = self.lanes.get_mut(i)?;
        self.free &= !(1u128 << i);
        Some((i, lane))
    }

    /// Gives lane `i` back: each of its slots gets the `placeholder`
    /// again, so that the init keeps no reference to a child's pipe.
    pub(super) fn give_back(&mut self, i: usize, placeholder: RawFd) {
        let Some(lane) = self.lanes.get_mut(i) else {
            return;
        };
        let Lane { slots, report } = lane;
        restore_slots(
            slots.iter_mut().chain(std::iter::once(report)),
            placeholder,
            Holds::Placeholder,
        );
        self.free |= 1u128 << i;
    }
}

/// The `bound` a child sharing the table unshares from: one more than the
/// highest descriptor it reads before, among its streams' sources (-1: none)
/// and its report's write end. It keeps everything below.
pub(super) fn keep_below(stdio: [RawFd; 3], report: RawFd) -> c_uint {
    stdio
        .into_iter()
        .chain([report])
        .filter_map(|fd| c_uint::try_from(fd).ok())
        .max()
        .map_or(0, |fd| fd.saturating_add(1))
}

#[cfg(test)]
mod tests {
    use super::keep_below;

    #[test]
    fn the_bound_covers_every_descriptor_the_child_reads() {
        // stdin inherited, stdout and stderr in a lane, the report above.
        assert_eq!(keep_below([-1, 40, 41], 42), 43);
        // The spawner's /dev/null above the lane (opened late): kept too.
        assert_eq!(keep_below([300, 40, 41], 42), 301);
        assert_eq!(keep_below([-1, -1, -1], 5), 6);
    }
}
