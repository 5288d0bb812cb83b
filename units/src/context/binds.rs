//! `BindPaths=` and `BindReadOnlyPaths=`: a path of the host bound at a
//! place of the service's mount namespace (`systemd.exec(5)`).
//!
//! Each word is `[-]SOURCE[:DESTINATION[:OPTIONS]]`: a leading `-` skips a
//! missing source; the destination defaults to the source; the one option
//! is `rbind` (the default: what is mounted below the source comes along)
//! or `norbind` (the source's own mount only). A `:` inside a path is not
//! read (systemd's `\:` escape is not either).

use std::path::PathBuf;

use super::sandbox::{assign_words, normal_absolute, BindRule};
use super::ServiceContext;

/// One word of a bind list.
pub fn parse_bind(word: &str) -> Result<BindRule, String> {
    let (optional, rest) = match word.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, word),
    };
    let mut parts = rest.splitn(3, ':');
    let source = normal_absolute(parts.next().unwrap_or_default())?;
    let destination = match parts.next() {
        Some(d) => normal_absolute(d)?,
        None => source.clone(),
    };
    let no_recursive = match parts.next() {
        None | Some("rbind") => false,
        Some("norbind") => true,
        Some(o) => {
            return Err(format!(
                "`{o}` is not a bind option (write rbind or norbind)"
            ))
        }
    };
    Ok(BindRule {
        source,
        destination,
        optional,
        no_recursive,
    })
}

/// Adds the binds of one assignment to a list (an empty value clears it).
pub fn assign(list: &mut Vec<BindRule>, value: &str) -> Result<(), String> {
    assign_words(list, value, parse_bind)
}

/// What is known of a unit when a bind into it is asked for at run time.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// A service (systemd binds into services only).
    pub is_service: bool,
    /// Its context (its `InaccessiblePaths=`, whether a key asks for a
    /// mount namespace).
    pub context: &'a ServiceContext,
    /// Active, with a main process.
    pub running: bool,
}

/// A bind into a running unit's mount namespace (`systemctl bind`,
/// systemd's `BindMountUnit`), checked as systemd checks it, in its
/// order and its words: the source and the destination (the source's
/// path when empty) absolute and normal, the unit a service, the
/// destination not at or below one of its `InaccessiblePaths=`, the
/// unit given a mount namespace by its keys, running. The source and
/// destination to bind, or why not.
pub fn check_runtime(
    source: &str,
    destination: &str,
    unit: Target<'_>,
) -> Result<(PathBuf, PathBuf), String> {
    let normal = |p: &str| normal_absolute(p).ok().filter(|n| n.as_os_str() == p);
    let source_path =
        normal(source).ok_or("Source path must be absolute and normalized.".to_string())?;
    let destination_path = if destination.is_empty() {
        source_path.clone()
    } else {
        normal(destination)
            .ok_or("Destination path must be absolute and normalized.".to_string())?
    };
    if !unit.is_service {
        return Err("Unit is not of type .service".into());
    }
    let sb = &unit.context.sandbox;
    if sb
        .inaccessible_paths
        .iter()
        .any(|r| destination_path.starts_with(&r.path))
    {
        return Err(format!(
            "{} is not accessible to this unit",
            destination_path.display()
        ));
    }
    if !unit.context.needs_mount_namespace() {
        return Err(NOT_NAMESPACED.into());
    }
    if !unit.running {
        return Err("Unit is not running".into());
    }
    Ok((source_path, destination_path))
}

/// systemd's refusal of a bind into a unit that shares the manager's
/// mount namespace.
pub const NOT_NAMESPACED: &str =
    "Unit not running in private mount namespace, cannot activate bind mount";

#[cfg(test)]
mod tests {
    use super::*;

    /// systemd's TEST-49: the namespaced unit takes a bind into its
    /// private `/tmp` and refuses one below its inaccessible path; the
    /// unit without sandbox keys refuses any.
    #[test]
    fn runtime_binds_are_checked_as_systemd_checks_them() {
        let mut ns = ServiceContext::default();
        ns.set(super::super::Key::PrivateTmp, "yes").unwrap();
        ns.set(super::super::Key::InaccessiblePaths, "/run/inaccessible")
            .unwrap();
        let plain = ServiceContext::default();
        let unit = |context, is_service, running| Target {
            is_service,
            context,
            running,
        };
        let up = unit(&ns, true, true);
        assert_eq!(
            check_runtime("/run/t", "/tmp/testfile_runtime", up),
            Ok(("/run/t".into(), "/tmp/testfile_runtime".into()))
        );
        assert_eq!(
            check_runtime("/run/t", "", up),
            Ok(("/run/t".into(), "/run/t".into()))
        );
        assert_eq!(
            check_runtime("/run/t", "/run/inaccessible/testfile_fixed", up).unwrap_err(),
            "/run/inaccessible/testfile_fixed is not accessible to this unit"
        );
        assert_eq!(
            check_runtime("/run/t", "/tmp/x", unit(&plain, true, true)).unwrap_err(),
            NOT_NAMESPACED
        );
        assert_eq!(
            check_runtime("/run/t", "/tmp/x", unit(&ns, true, false)).unwrap_err(),
            "Unit is not running"
        );
        assert_eq!(
            check_runtime("/run/t", "/tmp/x", unit(&ns, false, true)).unwrap_err(),
            "Unit is not of type .service"
        );
        for bad in ["run/t", "/run//t", "/run/./t", "/run/t/"] {
            assert_eq!(
                check_runtime(bad, "/tmp/x", up).unwrap_err(),
                "Source path must be absolute and normalized.",
                "{bad}"
            );
            assert_eq!(
                check_runtime("/run/t", bad, up).unwrap_err(),
                "Destination path must be absolute and normalized.",
                "{bad}"
            );
        }
    }

    fn rule(source: &str, destination: &str, optional: bool, no_recursive: bool) -> BindRule {
        BindRule {
            source: source.into(),
            destination: destination.into(),
            optional,
            no_recursive,
        }
    }

    #[test]
    fn words_are_source_destination_and_options() {
        let mut l = Vec::new();
        assign(
            &mut l,
            "/run/testservice-49-fixed:/tmp/testfile_fixed -/srv//data /a:/b:norbind /c:/d:rbind",
        )
        .unwrap();
        assert_eq!(
            l,
            [
                rule(
                    "/run/testservice-49-fixed",
                    "/tmp/testfile_fixed",
                    false,
                    false
                ),
                rule("/srv/data", "/srv/data", true, false),
                rule("/a", "/b", false, true),
                rule("/c", "/d", false, false),
            ]
        );
        assign(&mut l, "").unwrap();
        assert!(l.is_empty());
    }

    #[test]
    fn bad_words_say_what_is_wrong() {
        let mut l = Vec::new();
        assert_eq!(
            assign(&mut l, "srv:/x").unwrap_err(),
            "`srv` is not an absolute path"
        );
        assert_eq!(
            assign(&mut l, "/srv:x").unwrap_err(),
            "`x` is not an absolute path"
        );
        assert_eq!(
            assign(&mut l, "/a:/b:ro").unwrap_err(),
            "`ro` is not a bind option (write rbind or norbind)"
        );
        assert!(l.is_empty());
    }
}
