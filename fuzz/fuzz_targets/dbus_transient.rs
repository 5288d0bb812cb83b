//! systemd's D-Bus interface (`flotilla-busd`) on any bytes: the body of a
//! `StartTransientUnit` call as the bus delivers it (D-Bus's wire format,
//! little-endian, signature `ssa(sv)a(sa(sv))`: what `systemd-run` and
//! logind send), and a unit's object path. Properties: nothing panics; a
//! unit busd accepts passes the init's own check of a unit given whole
//! unchanged (so the init never refuses what busd asked for); a unit's
//! name survives its object path (systemd's escaping) both ways.
#![no_main]

use flotilla_bus::escape::{unit_of_path, unit_path};
use flotilla_bus::transient::{asked, Aux, Props};
use libfuzzer_sys::fuzz_target;
use zbus::zvariant::serialized::{Context, Data};
use zbus::zvariant::LE;

fuzz_target!(|bytes: &[u8]| {
    let data = Data::new(bytes, Context::new_dbus(LE, 0));
    if let Ok(((name, _mode, props, aux), _)) =
        data.deserialize::<(String, String, Props, Aux)>()
    {
        if let Ok(a) = asked(&name, props, aux) {
            let checked = flotilla_units::keys::validate(a.unit.clone())
                .expect("busd accepted a unit the init refuses");
            assert_eq!(checked, a.unit);
        }
    }
    if let Ok(name) = std::str::from_utf8(bytes) {
        assert_eq!(unit_of_path(&unit_path(name)).as_deref(), Some(name));
    }
});
