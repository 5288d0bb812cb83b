//! Placement by fit: how much room a machine has left, and why a unit
//! that should run waits (docs/cluster.md "Resources").

use flotilla_units::fleet_api::Resources;

/// Why a unit may not run on one machine: the first check that failed,
/// in the scheduler's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Refusal {
    /// Not a machine the unit's `MachineID=` names.
    MachineId,
    /// Its metadata does not match `MachineMetadata=`.
    Metadata,
    /// A `MachineOf=` unit is not there.
    Peer,
    /// A unit there conflicts with it (either way), or replaces it.
    Conflicts,
    /// It would evict a unit it follows.
    EvictsPeer,
    /// Its reservation does not fit in what is left.
    Room,
    /// The unit or the machine is not known.
    Gone,
}

impl Refusal {
    /// How a count of machines refusing this way is told.
    fn tell(self, n: usize) -> String {
        let (one, many) = match self {
            Refusal::MachineId => ("is not its MachineID", "are not its MachineID"),
            Refusal::Metadata => (
                "does not match its MachineMetadata",
                "do not match its MachineMetadata",
            ),
            Refusal::Peer => (
                "does not run its MachineOf units",
                "do not run its MachineOf units",
            ),
            Refusal::Conflicts => (
                "runs a unit it conflicts with or that replaces it",
                "run a unit it conflicts with or that replaces it",
            ),
            Refusal::EvictsPeer => (
                "runs a unit it follows and would replace",
                "run a unit it follows and would replace",
            ),
            Refusal::Room => ("has too little room left", "have too little room left"),
            Refusal::Gone => ("is gone", "are gone"),
        };
        if n == 1 {
            format!("1 machine {one}")
        } else {
            format!("{n} machines {many}")
        }
    }
}

/// Parts per million of what is still free of `capacity` with `used`
/// reserved: the smaller of the shares of memory and of cores (of the
/// kinds the machine has; none when it has neither). Among the machines a
/// unit may run on, the one with the most room wins.
pub fn room(capacity: Resources, used: Resources) -> u64 {
    let share = |cap: u64, used: u64| {
        (cap > 0).then(|| {
            let free = u128::from(cap.saturating_sub(used));
            u64::try_from(free * 1_000_000 / u128::from(cap)).unwrap_or(0)
        })
    };
    match (
        share(capacity.memory, used.memory),
        share(capacity.cores, used.cores),
    ) {
        (Some(m), Some(c)) => m.min(c),
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => 0,
    }
}

/// A reservation as people read it: `512 MiB of memory and 1.50 cores`.
pub fn describe(r: Resources) -> String {
    let mem = format!("{} MiB of memory", r.memory);
    let cores = format!(
        "{}.{:02} core{}",
        r.cores / 100,
        r.cores % 100,
        if r.cores == 100 { "" } else { "s" }
    );
    match (r.memory > 0, r.cores > 0) {
        (true, true) => format!("{mem} and {cores}"),
        (true, false) => mem,
        (false, true) => cores,
        (false, false) => "nothing".to_string(),
    }
}

/// Why a unit waits, from how each machine it is not on refused it
/// (`refusals`, for a global unit only the machines where its reservation
/// does not fit), out of `machines`; `peers_nowhere` are its `MachineOf=`
/// units that are not placed. `None` when nothing keeps it away.
pub fn reason(
    global: bool,
    machines: usize,
    refusals: &[Refusal],
    need: Resources,
    peers_nowhere: &[&str],
) -> Option<String> {
    if global {
        let n = refusals.iter().filter(|r| **r == Refusal::Room).count();
        return (n > 0).then(|| {
            format!(
                "no room for its reservation ({}) on {n} of {machines} machine{}",
                describe(need),
                if machines == 1 { "" } else { "s" }
            )
        });
    }
    if machines == 0 {
        return Some("no machine is in the cluster".to_string());
    }
    if !peers_nowhere.is_empty() {
        return Some(format!(
            "its MachineOf unit{} {} {} not scheduled",
            if peers_nowhere.len() == 1 { "" } else { "s" },
            peers_nowhere.join(", "),
            if peers_nowhere.len() == 1 {
                "is"
            } else {
                "are"
            }
        ));
    }
    if refusals.is_empty() {
        return None;
    }
    let mut kinds: Vec<Refusal> = refusals.to_vec();
    kinds.sort_unstable();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < kinds.len() {
        let k = kinds[i];
        let n = kinds[i..].iter().take_while(|r| **r == k).count();
        let mut part = k.tell(n);
        if k == Refusal::Room {
            part.push_str(&format!(" for its reservation ({})", describe(need)));
        }
        parts.push(part);
        i += n;
    }
    Some(format!("fits on no machine: {}", parts.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(memory: u64, cores: u64) -> Resources {
        Resources { cores, memory }
    }

    #[test]
    fn room_is_the_smaller_free_share() {
        // Half the memory and a quarter of the cores used: 50% room.
        assert_eq!(room(r(1024, 400), r(512, 100)), 500_000);
        // The cores are the scarcer.
        assert_eq!(room(r(1024, 400), r(0, 300)), 250_000);
        // Empty: everything; full or over: nothing.
        assert_eq!(room(r(1024, 400), r(0, 0)), 1_000_000);
        assert_eq!(room(r(1024, 400), r(2048, 0)), 0);
        // A kind the machine does not have does not count; neither: none.
        assert_eq!(room(r(1024, 0), r(256, 0)), 750_000);
        assert_eq!(room(r(0, 0), r(0, 0)), 0);
        // No overflow at the extremes.
        assert_eq!(room(r(u64::MAX, u64::MAX), r(0, 0)), 1_000_000);
    }

    #[test]
    fn reasons() {
        use Refusal::*;
        let need = r(512, 150);
        assert_eq!(describe(need), "512 MiB of memory and 1.50 cores");
        assert_eq!(describe(r(0, 100)), "1.00 core");
        assert_eq!(describe(r(64, 0)), "64 MiB of memory");
        assert_eq!(
            reason(false, 3, &[Room, Metadata, Room], need, &[]).as_deref(),
            Some(
                "fits on no machine: 1 machine does not match its MachineMetadata; \
                 2 machines have too little room left for its reservation \
                 (512 MiB of memory and 1.50 cores)"
            )
        );
        assert_eq!(
            reason(false, 0, &[], need, &[]).as_deref(),
            Some("no machine is in the cluster")
        );
        assert_eq!(
            reason(false, 2, &[Peer, Peer], need, &["db.service"]).as_deref(),
            Some("its MachineOf unit db.service is not scheduled")
        );
        assert_eq!(reason(false, 2, &[], need, &[]), None);
        assert_eq!(
            reason(true, 4, &[Room], r(64, 0), &[]).as_deref(),
            Some("no room for its reservation (64 MiB of memory) on 1 of 4 machines")
        );
        assert_eq!(reason(true, 4, &[], need, &[]), None);
    }
}
