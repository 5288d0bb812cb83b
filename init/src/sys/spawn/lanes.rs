//! Lanes: descriptors set aside low in the table for children in flight
//! (`flight.rs`) that share the init's descriptor table until they
//! unshare it.
//!
//! # Why
//!
//! A child cloned without `CLONE_FILES` gets a copy of the whole table
//! (`dup_fd`: a reference taken on every open file), and closes it again
//! before `execve`. The init holds two output pipes per running unit, so
//! each spawn cost O(units running) twice over, in the init and in the
//! child, and a launch of N units O(N²). A child that shares the table and
//! then calls `close_range(top, ~0U, CLOSE_RANGE_UNSHARE)` gets a table of
//! its own holding only what lies below `top` (fs/file.c, as the module
//! documentation of `mod.rs` says): a cost in `top`, whatever the init
//! holds.
//!
//! # How
//!
//! What such a child needs (its stdin, stdout and stderr sources and its
//! report's write end) must therefore lie below `top`, and stay where it
//! is until the child has unshared, although the parent goes on at once.
//! A lane is three descriptors reserved with the spawner, while the
//! process holds few, so that they are low: slots for stdout, stderr and
//! the report (stdin, when it is `/dev/null`, is the spawner's own, below
//! every lane; a child whose stdin is another descriptor takes no lane). Between flights they hold `/dev/null` (or the
//! placeholder): references to one file, cheap to copy and to close. A
//! flight takes the lowest free lane (so that `top`, one more than the
//! lane's highest descriptor, stays as low as the load allows), copies its
//! sources into it, and the child unshares from the lane's `top`. The
//! lane is given back (its slots get `/dev/null` again, dropping the init's
//! references to the pipes) once the child has unshared: at its first
//! message on the report (it writes none before), or when it is known to
//! have ended. When every lane is taken (more children in flight than
//! [`LANES`]), a flight copies the table as before.

use std::ffi::c_uint;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use super::{dup_above_stdio, Errno, Holds, Slot};

/// How many lanes a spawner reserves: a launch's layer of a hundred units
/// has up to as many children in flight at once. 288 descriptors, held
/// for the process's life (what the suite's bound on the init's
/// descriptors, 400, leaves room for).
pub(super) const LANES: usize = 96;

/// One lane: the slots of stdout and stderr, and the report's.
#[derive(Debug)]
pub(super) struct Lane {
    pub(super) slots: [Slot; 2],
    pub(super) report: Slot,
    /// One more than the highest of the three: the child keeps what lies
    /// below as it unshares.
    pub(super) top: c_uint,
}

/// The reserved lanes, and which are free.
#[derive(Debug)]
pub(super) struct Lanes {
    lanes: Vec<Lane>,
    /// Bit `i`: lane `i` is free.
    free: u128,
}

impl Lanes {
    /// Reserves up to [`LANES`] lanes, each descriptor a copy of `fill`
    /// (which holds `holds`); fewer if the table runs out.
    pub(super) fn reserve(fill: &OwnedFd, holds: Holds) -> Lanes {
        let mut lanes = Vec::with_capacity(LANES);
        let slot = || dup_above_stdio(fill).map(|fd| Slot { fd, holds });
        let lane = || -> Result<Lane, Errno> {
            let slots = [slot()?, slot()?];
            let report = slot()?;
            let top = slots
                .iter()
                .chain(std::iter::once(&report))
                .map(|s| s.fd.as_raw_fd())
                .max()
                .and_then(|fd| c_uint::try_from(fd).ok())
                .map_or(0, |fd| fd.saturating_add(1));
            Ok(Lane { slots, report, top })
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

    /// Gives lane `i` back: each of its slots gets `src` (which holds
    /// `holds`) again, so that the init keeps no reference to a child's
    /// pipe.
    pub(super) fn give_back(&mut self, i: usize, src: RawFd, holds: Holds) {
        let Some(lane) = self.lanes.get_mut(i) else {
            return;
        };
        let Lane { slots, report, .. } = lane;
        super::restore_slots(slots.iter_mut().chain(std::iter::once(report)), src, holds);
        self.free |= 1u128 << i;
    }
}
