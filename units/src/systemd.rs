//! systemd (and fleet) INI unit files: parsing, canonical form, hash, and the
//! translation into [`crate::spec::UnitSpec`].

use serde::{Deserialize, Serialize};

/// One option of a unit file, as fleet's API carries it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct UnitOption {
    /// The section, e.g. `Service`.
    pub section: String,
    /// The option's name, e.g. `ExecStart`.
    pub name: String,
    /// The option's value.
    pub value: String,
}
