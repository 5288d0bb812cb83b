//! The units the init makes of the plugged devices: for each name of each
//! ready device ([`super::device::DeviceUnit`]) a `virtual` unit, active
//! while the device is there, the main one wanting what `SYSTEMD_WANTS=`
//! lists. The init keeps them as a set of their own, wanted whatever the
//! target, and makes it again when udev says a device changed: a device
//! gone takes its units out, which stops what `BindsTo=` them (a
//! `stop-propagated-from` and a hard dependency), and one plugged puts them
//! in, which starts what waits for them (docs/systemd-units.md, "Device
//! units").
//!
//! A name that is no systemd unit name (a character systemd's escaping
//! never writes) has no unit; `\` is one a name may hold
//! (`dev-disk-by\x2duuid-….device`).

use super::device::Device;
use crate::spec::{Names, UnitSpec};
use crate::unit_name::valid_systemd_name;
use crate::unit_type::UnitType;
use std::collections::BTreeSet;

/// The units of `devices` (each name once, the first device to claim it
/// keeping it: two disks may say the same `by-uuid` link), in name order.
pub fn specs<'a>(devices: impl IntoIterator<Item = &'a Device>) -> Vec<UnitSpec> {
    let mut taken = BTreeSet::new();
    let mut out = Vec::new();
    for d in devices {
        for u in d.units() {
            if !valid_systemd_name(&u.name) || !taken.insert(u.name.clone()) {
                continue;
            }
            let mut s = UnitSpec::new(u.name, UnitType::Virtual);
            s.description = Some(u.description);
            if u.following.is_none() {
                s.wants = d
                    .wants()
                    .into_iter()
                    .filter(|w| valid_systemd_name(w))
                    .collect::<Names>();
            }
            out.push(s);
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}
