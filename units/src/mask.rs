//! Masks (docs/contract.md §3b): a masked unit is treated as absent — it provides no
//! target and depends on nothing, so what hard-depends on it waits
//! (`blocked_by` says `masked`) — but it is still shown, as masked.
//!
//! A mask is a fact about a unit *name*, whatever its source: `initctl
//! mask` (a file named after the unit under the config directory's
//! `masked/`), or a unit file that is a symbolic link to `/dev/null`
//! (systemd's mask). Every source adds to one [`Masks`], which the graph is
//! built with ([`crate::graph::Shape`]); the rules are the graph's and the
//! planner's, the same for every source. A masked name that no unit has is
//! kept too: it is shown as masked, and a unit of that name that appears
//! later is masked at once.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Where a mask comes from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum MaskSource {
    /// `initctl mask`: the file `masked/NAME` beside the config file.
    State(PathBuf),
    /// A unit file that is a symbolic link to `/dev/null`.
    DevNull(PathBuf),
}

impl MaskSource {
    /// The file that makes the mask.
    pub fn path(&self) -> &Path {
        match self {
            MaskSource::State(p) | MaskSource::DevNull(p) => p,
        }
    }
}

impl fmt::Display for MaskSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MaskSource::State(p) => write!(f, "{} (initctl mask)", p.display()),
            MaskSource::DevNull(p) => write!(f, "{} -> /dev/null", p.display()),
        }
    }
}

/// The masked unit names, each with where its mask comes from (the first
/// source given, when a name is masked twice).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Masks(BTreeMap<String, MaskSource>);

impl Masks {
    /// No mask.
    pub fn new() -> Masks {
        Masks::default()
    }

    /// Masks `name` (keeps the first source of a name masked twice).
    /// Returns whether it was not masked before.
    pub fn insert(&mut self, name: impl Into<String>, source: MaskSource) -> bool {
        match self.0.entry(name.into()) {
            std::collections::btree_map::Entry::Occupied(_) => false,
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(source);
                true
            }
        }
    }

    /// Unmasks `name`; its source, if it was masked.
    pub fn remove(&mut self, name: &str) -> Option<MaskSource> {
        self.0.remove(name)
    }

    /// Whether `name` is masked.
    pub fn contains(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// The source of `name`'s mask.
    pub fn get(&self, name: &str) -> Option<&MaskSource> {
        self.0.get(name)
    }

    /// Every mask, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &MaskSource)> {
        self.0.iter().map(|(n, s)| (n.as_str(), s))
    }

    /// The number of masked names.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when nothing is masked.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The word a waiting unit's `blocked_by` says when what it hard-depends on
/// is provided only by a masked unit.
pub const BLOCKED_BY_MASKED: &str = "masked";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_masked_once_with_its_first_source() {
        let mut m = Masks::new();
        assert!(m.insert("web", MaskSource::State("/etc/init/masked/web".into())));
        assert!(!m.insert("web", MaskSource::DevNull("/etc/init/units/web".into())));
        assert!(m.contains("web") && !m.contains("db"));
        assert_eq!(
            m.get("web").map(ToString::to_string).as_deref(),
            Some("/etc/init/masked/web (initctl mask)")
        );
        assert_eq!(
            MaskSource::DevNull("/u/x.service".into()).to_string(),
            "/u/x.service -> /dev/null"
        );
        assert!(m.remove("web").is_some() && m.is_empty());
    }
}
