//! A unit's reservation as its cgroup's limits (docs/cluster.md
//! "Resources"): `MemoryReservation=N` becomes `MemoryMax=NM` and
//! `CoresReservation=N` (hundredths of a core) `CPUQuota=N%`, so that a
//! unit uses no more than the machine set aside for it and the machine is
//! not overcommitted in fact either. A limit the unit file sets itself
//! (`[Service] MemoryMax=`, `CPUQuota=`) is the unit's and stays. The limits
//! added may be skipped where the machine has no cgroup controller for
//! them (`X-SkipUnsupported=`): the unit still runs, its log says so, and
//! placement still counted its reservation.

use crate::requirements::Requirements;
use flotilla_units::fleet::UnitOption;
use std::borrow::Cow;

/// `options` of unit `name` with the limits its reservation implies
/// added (services only; the others have no process of their own to
/// limit, or run the service's).
pub fn with_limits<'a>(name: &str, options: &'a [UnitOption]) -> Cow<'a, [UnitOption]> {
    let r = Requirements::from_options(name, options).reservation;
    if r.is_zero() || !name.ends_with(".service") {
        return Cow::Borrowed(options);
    }
    let has = |key: &str| {
        options
            .iter()
            .any(|o| o.section == "Service" && o.name == key)
    };
    let mut added = Vec::new();
    if r.memory > 0 && !has("MemoryMax") {
        added.push(("MemoryMax", format!("{}M", r.memory)));
    }
    if r.cores > 0 && !has("CPUQuota") {
        added.push(("CPUQuota", format!("{}%", r.cores)));
    }
    if added.is_empty() {
        return Cow::Borrowed(options);
    }
    let mut out = options.to_vec();
    let skip: Vec<&str> = added.iter().map(|(k, _)| *k).collect();
    for (key, value) in added {
        out.push(service(key, value));
    }
    out.push(service("X-SkipUnsupported", skip.join(" ")));
    Cow::Owned(out)
}

fn service(name: &str, value: String) -> UnitOption {
    UnitOption {
        section: "Service".into(),
        name: name.into(),
        value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str, &str)]) -> Vec<UnitOption> {
        pairs
            .iter()
            .map(|(s, n, v)| UnitOption {
                section: s.to_string(),
                name: n.to_string(),
                value: v.to_string(),
            })
            .collect()
    }

    #[test]
    fn reservations_become_limits() {
        let exec = ("Service", "ExecStart", "/bin/sleep 1");
        let base = opts(&[
            exec,
            ("X-Fleet", "MemoryReservation", "512"),
            ("X-Fleet", "CoresReservation", "150"),
        ]);
        let got = with_limits("web.service", &base);
        assert_eq!(
            got[3..],
            opts(&[
                ("Service", "MemoryMax", "512M"),
                ("Service", "CPUQuota", "150%"),
                ("Service", "X-SkipUnsupported", "MemoryMax CPUQuota"),
            ])[..]
        );
        // The unit's own limit stays, and only the other is added.
        let own = opts(&[
            exec,
            ("Service", "MemoryMax", "1G"),
            ("X-Fleet", "MemoryReservation", "512"),
            ("X-Fleet", "CoresReservation", "50"),
        ]);
        let got = with_limits("web.service", &own);
        assert_eq!(
            got[4..],
            opts(&[
                ("Service", "CPUQuota", "50%"),
                ("Service", "X-SkipUnsupported", "CPUQuota"),
            ])[..]
        );
        // Nothing reserved, or not a service: unchanged.
        let plain = opts(&[exec]);
        assert!(matches!(
            with_limits("web.service", &plain),
            Cow::Borrowed(_)
        ));
        assert!(matches!(with_limits("web.socket", &base), Cow::Borrowed(_)));
    }

    #[test]
    fn the_translation_carries_them() {
        let base = opts(&[
            ("Service", "ExecStart", "/bin/sleep 1"),
            ("X-Fleet", "MemoryReservation", "64"),
            ("X-Fleet", "CoresReservation", "25"),
        ]);
        let facts = flotilla_units::specifier::SpecifierContext::system("");
        let t = flotilla_systemd::translate_with(
            &facts,
            "fleet:web.service",
            "web.service",
            &with_limits("web.service", &base),
        );
        let spec = t.spec.expect("translates");
        let ctx = &spec.extras.context;
        assert_eq!(
            ctx.resources.memory_max,
            Some(flotilla_units::context::resources::Amount::Absolute(
                64 << 20
            ))
        );
        assert_eq!(ctx.resources.cpu_quota, Some(2500));
        assert!(ctx.may_skip(flotilla_units::context::Key::MemoryMax));
    }
}
