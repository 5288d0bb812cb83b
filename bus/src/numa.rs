//! The CPUs of NUMA nodes, read from sysfs: what `CPUAffinity=numa` comes
//! to, which systemd serves as the unit's `CPUAffinity` (the init sets the
//! same CPUs in the unit's processes, reading the same files).

use flotilla_units::context::placement::IndexSet;

/// The CPUs of the nodes in `nodes` (systemd's `ay`), in the same form; a
/// node sysfs does not list adds none.
pub fn cpus_of_nodes(nodes: &[u8]) -> Vec<u8> {
    let mut cpus = IndexSet::default();
    for n in IndexSet::from_bytes(nodes).iter() {
        let path = format!("/sys/devices/system/node/node{n}/cpulist");
        if let Some(set) = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| IndexSet::parse(&t).ok())
        {
            cpus.extend(&set);
        }
    }
    cpus.bytes().to_vec()
}
