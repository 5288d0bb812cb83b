//! `Slice=`: the slice a unit's cgroup is placed in, and the cgroup
//! directories that slice stands for (`systemd.slice(5)`).
//!
//! A slice's name says where it is in the tree: each `-` in it is a level
//! below the root slice `-.slice`, so `system-foo-bar.slice` is inside
//! `system-foo.slice`, inside `system.slice`. A unit with no `Slice=` is
//! in `system.slice`, as in systemd's system manager. The init makes the
//! directories on demand and removes them once empty
//! (`init/src/sys/cgroup.rs`); a `.slice` unit file's own settings are not
//! read (docs/service-context.md, "Slices").

use crate::systemd::validate_unit_name;

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
    validate_unit_name(value).map_err(|e| format!("{value}: {e}"))?;
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
        ];
        for (slice, dirs) in cases {
            assert_eq!(parse_slice(slice).as_deref(), Ok(*slice), "{slice}");
            assert_eq!(slice_dirs(slice), *dirs, "{slice}");
        }
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
