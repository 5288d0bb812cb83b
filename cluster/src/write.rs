//! One API request's write of a unit: what must hold of the unit's file for
//! it to apply (its guard) and what it does to the unit's keys. The group
//! commit ([`crate::commit`]) queues them; the registry
//! ([`crate::registry::Registry::commit`]) writes a group as one etcd
//! transaction.

use crate::model::{ClusterState, StoredUnit};

/// What must hold of a unit's file (`units/<name>`) for a write to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// No such unit (a creation).
    Absent,
    /// The unit exists (a desired state set without reading the unit).
    Present,
    /// The unit's file is still at this mod revision (what the request
    /// read and decided from).
    At(i64),
}

/// What a write does to a unit's keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Puts the unit file and the desired state, each when given.
    Put {
        /// The new unit file.
        unit: Option<StoredUnit>,
        /// The new desired state.
        desired: Option<ClusterState>,
    },
    /// Deletes the unit file and the desired state.
    Delete,
}

/// One request's write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    /// The unit.
    pub name: String,
    /// What must hold.
    pub guard: Guard,
    /// What it does.
    pub change: Change,
}

impl Write {
    /// Operations it adds to a transaction's success branch.
    pub fn ops(&self) -> usize {
        match &self.change {
            Change::Put { unit, desired } => {
                usize::from(unit.is_some()) + usize::from(desired.is_some())
            }
            Change::Delete => 2,
        }
    }

    /// Whether the guard holds of the unit's file as read: `None` when
    /// there is none, else its mod revision.
    pub fn holds(&self, found: Option<i64>) -> bool {
        match (self.guard, found) {
            (Guard::Absent, f) => f.is_none(),
            (Guard::Present, f) => f.is_some(),
            (Guard::At(r), Some(m)) => r == m,
            (Guard::At(_), None) => false,
        }
    }

    /// About how many bytes it adds to a transaction (for etcd's limit).
    pub fn bytes(&self) -> usize {
        let unit = match &self.change {
            Change::Put { unit: Some(u), .. } => {
                serde_json::to_vec(u).map(|v| v.len()).unwrap_or(0)
            }
            _ => 0,
        };
        unit + 3 * self.name.len() + 64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(guard: Guard, change: Change) -> Write {
        Write {
            name: "a.service".into(),
            guard,
            change,
        }
    }

    #[test]
    fn guards_and_sizes() {
        let set = Change::Put {
            unit: None,
            desired: Some(ClusterState::Launched),
        };
        assert!(w(Guard::Absent, set.clone()).holds(None));
        assert!(!w(Guard::Absent, set.clone()).holds(Some(3)));
        assert!(w(Guard::Present, set.clone()).holds(Some(3)));
        assert!(!w(Guard::Present, set.clone()).holds(None));
        assert!(w(Guard::At(3), set.clone()).holds(Some(3)));
        assert!(!w(Guard::At(3), set.clone()).holds(Some(4)));
        assert!(!w(Guard::At(3), set.clone()).holds(None));
        assert_eq!(w(Guard::Present, set).ops(), 1);
        assert_eq!(w(Guard::Present, Change::Delete).ops(), 2);
    }
}
