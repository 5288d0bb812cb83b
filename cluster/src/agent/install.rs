//! fleet's agent enabled a unit with an `[Install]` section when it loaded
//! it (`systemctl enable --runtime`), so `WantedBy=B` of a unit A made B
//! pull A in: started with B while A itself is only loaded
//! (docs/fleet-compat.md "Unit files"). The agent does the
//! same within this machine's set: B, when both are assigned here, wants A.

use crate::model::Assignment;
use std::collections::{BTreeMap, BTreeSet};

/// Unit B -> the units assigned here whose `[Install] WantedBy=` names B
/// (values split on whitespace, as systemd reads the key); only Bs
/// assigned here too, and not a unit wanting itself.
pub fn install_wants(
    assigned: &BTreeMap<String, Assignment>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, asg) in assigned {
        let targets = asg
            .options
            .iter()
            .filter(|o| o.section == "Install" && o.name == "WantedBy")
            .flat_map(|o| o.value.split_whitespace());
        for b in targets {
            if b != a && assigned.contains_key(b) {
                out.entry(b.to_string()).or_default().insert(a.clone());
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::model::ClusterState;
    use flotilla_units::fleet::UnitOption;

    fn unit(install: &[&str]) -> Assignment {
        Assignment {
            desired: ClusterState::Loaded,
            hash: "h".into(),
            options: install
                .iter()
                .map(|v| UnitOption {
                    section: "Install".into(),
                    name: "WantedBy".into(),
                    value: (*v).into(),
                })
                .collect(),
            global: false,
        }
    }

    #[test]
    fn wanted_by_a_unit_here_makes_it_want_this_one() {
        let assigned: BTreeMap<String, Assignment> = [
            ("hello.service", unit(&[])),
            ("discovery.service", unit(&["hello.service other.service"])),
            ("side.service", unit(&["hello.service", "side.service"])),
            ("elsewhere.service", unit(&["absent.service"])),
        ]
        .into_iter()
        .map(|(n, a)| (n.to_string(), a))
        .collect();
        let wants = install_wants(&assigned);
        assert_eq!(wants.len(), 1, "{wants:?}");
        assert_eq!(
            wants["hello.service"],
            BTreeSet::from(["discovery.service".to_string(), "side.service".to_string()])
        );
    }
}
