//! `Slice=`: the slice a unit's cgroup is placed in, and the cgroup
//! directories that slice stands for (`systemd.slice(5)`).
//!
//! A slice's name says where it is in the tree: each `-` in it is a level
//! below the root slice `-.slice`, so `system-foo-bar.slice` is inside
//! `system-foo.slice`, inside `system.slice`. A unit with no `Slice=` is
//! in `system.slice`, as in systemd's system manager. The init makes the
//! directories on demand and removes them once empty
//! (`init/src/sys/cgroup.rs`). A slice is also a unit of its own (type
//! `slice`): its parent, default description and the keys its `[Slice]`
//! takes are here (docs/service-context.md, "Slices").

use super::policy::NotApplied;
use super::resources::{Resources, ACCOUNTING};
use super::Key;
use crate::escape::unescape_path;
use crate::unit_name::validate_systemd_unit_name;

/// The slice of a unit that names none.
pub const DEFAULT_SLICE: &str = "system.slice";

/// The root slice: a unit in it is right below the init's cgroup.
pub const ROOT_SLICE: &str = "-.slice";

/// Checks a `Slice=` value: a valid unit name of type `.slice`, whose
/// prefix makes a path (no empty level: `a--b`, `-a`, `a-`), or the root
/// slice. The value as given.
pub fn parse_slice(value: &str) -> Result<String, String> {
    let prefix = value
        .strip_suffix(".slice")
        .filter(|p| !p.is_empty())
        .ok_or_else(|| format!("{value}: not a slice (NAME.slice)"))?;
    validate_systemd_unit_name(value).map_err(|e| format!("{value}: {e}"))?;
    if value != ROOT_SLICE && prefix.split('-').any(str::is_empty) {
        return Err(format!(
            "{value}: a slice's name has no empty part between dashes (each dash is a level \
             of the tree)"
        ));
    }
    if prefix.contains('@') {
        return Err(format!(
            "{value}: a slice cannot be a template or an instance"
        ));
    }
    Ok(value.to_string())
}

/// The cgroup directories of `slice`, from the outermost down
/// (`system-foo.slice`: `system.slice`, `system-foo.slice`); none for
/// the root slice. `slice` is a name [`parse_slice`] took.
pub fn slice_dirs(slice: &str) -> Vec<String> {
    let Some(prefix) = slice.strip_suffix(".slice").filter(|_| slice != ROOT_SLICE) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, _) in prefix.match_indices('-') {
        out.push(format!("{}.slice", &prefix[..i]));
    }
    out.push(slice.to_string());
    out
}

/// The keys a slice's `[Slice]` section takes: the resource-control
/// keys of systemd.resource-control(5) flotilla has, applied to the
/// slice's cgroup directory (its place is its name's, so no `Slice=`).
pub fn takes(key: Key) -> bool {
    matches!(
        key,
        Key::MemoryMax
            | Key::MemoryHigh
            | Key::CpuWeight
            | Key::CpuQuota
            | Key::TasksMax
            | Key::IoWeight
            | Key::IoAccounting
            | Key::MemoryAccounting
            | Key::TasksAccounting
            | Key::DevicePolicy
            | Key::DeviceAllow
            | Key::IpAddressAllow
            | Key::IpAddressDeny
    )
}

/// The settings of a slice unit's own `[Slice]` that are not applied:
/// the init shows them (`systemctl show -p MemoryMax`) but does not yet
/// write them to the slice's cgroup directory, where only its units'
/// own limits go (docs/service-context.md, "Slices"). Each one given,
/// with why, for the slice's `not_applied`.
pub fn limits_not_applied(res: &Resources) -> Vec<NotApplied> {
    let mut keys: Vec<&str> = res
        .cgroup_files(u64::MAX, u64::MAX)
        .into_iter()
        .map(|(_, _, key)| key)
        .chain(
            ACCOUNTING
                .iter()
                .filter(|(ctl, _)| res.accounting.iter().any(|a| a == ctl))
                .map(|&(_, key)| key),
        )
        .collect();
    if res.devices.filter().is_some() {
        keys.push("DeviceAllow");
    }
    if res.ip_access.filters() {
        keys.push("IPAddressDeny");
    }
    keys.sort_unstable();
    keys.dedup();
    keys.into_iter()
        .map(|k| NotApplied {
            setting: k.to_string(),
            reason: "not applied: a slice's own limits are not written to its cgroup \
                     directory yet, only the limits of the units in it"
                .to_string(),
        })
        .collect()
}

/// The slice that holds slice `slice` (systemd's `slice_add_parent_slice`):
/// its name less its last level (`a-b.slice` for `a-b-c.slice`), the
/// root slice for a top one, none for the root slice itself.
pub fn parent_slice(slice: &str) -> Option<String> {
    if slice == ROOT_SLICE {
        return None;
    }
    let prefix = slice.strip_suffix(".slice")?;
    Some(match prefix.rfind('-') {
        Some(i) => format!("{}.slice", &prefix[..i]),
        None => ROOT_SLICE.to_string(),
    })
}

/// A slice's description when its files give none (systemd's
/// `slice_load`): `Slice` and the path its name escapes (`Slice /a/b/c`
/// for `a-b-c.slice`); the root slice is `Root Slice`.
pub fn default_description(slice: &str) -> String {
    if slice == ROOT_SLICE {
        return "Root Slice".to_string();
    }
    let prefix = slice.strip_suffix(".slice").unwrap_or(slice);
    match unescape_path(prefix) {
        Ok(path) => format!("Slice {path}"),
        Err(_) => slice.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_is_a_level_per_dash() {
        let cases: &[(&str, &[&str])] = &[
            ("-.slice", &[]),
            ("system.slice", &["system.slice"]),
            ("workload.slice", &["workload.slice"]),
            ("user-1000.slice", &["user.slice", "user-1000.slice"]),
            (
                "system-foo-bar-baz.slice",
                &[
                    "system.slice",
                    "system-foo.slice",
                    "system-foo-bar.slice",
                    "system-foo-bar-baz.slice",
                ],
            ),
            // Debian's, for systemd-cryptsetup@.service: an escaped dash
            // is no level.
            (
                r"system-systemd\x2dcryptsetup.slice",
                &["system.slice", r"system-systemd\x2dcryptsetup.slice"],
            ),
        ];
        for (slice, dirs) in cases {
            assert_eq!(parse_slice(slice).as_deref(), Ok(*slice), "{slice}");
            assert_eq!(slice_dirs(slice), *dirs, "{slice}");
        }
    }

    #[test]
    fn a_slice_is_in_its_parent_and_described_by_its_path() {
        assert_eq!(parent_slice("a-b-c.slice").as_deref(), Some("a-b.slice"));
        assert_eq!(parent_slice("a.slice").as_deref(), Some(ROOT_SLICE));
        assert_eq!(parent_slice(ROOT_SLICE), None);
        assert_eq!(default_description("a-b-c.slice"), "Slice /a/b/c");
        assert_eq!(default_description("system.slice"), "Slice /system");
        assert_eq!(default_description(r"a\x2db.slice"), "Slice /a-b");
        assert_eq!(default_description(ROOT_SLICE), "Root Slice");
    }

    #[test]
    fn a_slice_takes_resource_control_keys_only() {
        assert!(takes(Key::MemoryMax) && takes(Key::TasksMax));
        assert!(!takes(Key::Slice) && !takes(Key::Nice) && !takes(Key::Delegate));
    }

    #[test]
    fn a_slices_own_limits_are_named_as_not_applied() {
        use super::super::resources::Amount;
        assert!(limits_not_applied(&Resources::default()).is_empty());
        let res = Resources {
            memory_max: Some(Amount::Absolute(1_000_000_000)),
            tasks_max: Some(Amount::Infinity),
            accounting: vec!["memory".into()],
            ..Resources::default()
        };
        let named: Vec<String> = limits_not_applied(&res)
            .into_iter()
            .map(|n| {
                assert!(n.reason.contains("not written to its cgroup"), "{n:?}");
                n.setting
            })
            .collect();
        assert_eq!(named, ["MemoryAccounting", "MemoryMax", "TasksMax"]);
    }

    #[test]
    fn bad_slices_are_refused_with_why() {
        let cases = [
            ("system", "not a slice"),
            ("system.service", "not a slice"),
            (".slice", "not a slice"),
            ("a--b.slice", "no empty part"),
            ("-a.slice", "no empty part"),
            ("a-.slice", "no empty part"),
            ("a b.slice", "a b.slice"),
            ("a@b.slice", "template"),
        ];
        for (value, why) in cases {
            let e = parse_slice(value).expect_err(value);
            assert!(e.contains(why), "{value}: {e}");
        }
    }
}
