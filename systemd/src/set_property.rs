//! Where and what `systemctl set-property` writes: one drop-in per
//! property, `50-PROPERTY.conf`, in the unit's directory under
//! `/etc/systemd/system.control` (`--runtime`: `/run/systemd/system.control`),
//! the directories systemd keeps for settings made at run time, first on
//! its search path; `systemctl revert` removes them
//! ([`super::revert_paths`]).

/// One setting: the D-Bus property it came as, its unit-file section and
/// key, and the value as a unit file writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    /// The setting's name (`MemoryMax`, `CPUQuota`): names the file.
    pub property: String,
    /// The section (`Service`, `Unit`).
    pub section: String,
    /// The unit-file key.
    pub key: String,
    /// The value.
    pub value: String,
}

/// The directory of settings made at run time on the search path `path`
/// (`runtime`: the one under `/run`), if the path names it (it need not
/// exist yet).
fn control_dir(path: &[String], runtime: bool) -> Option<&str> {
    let end = if runtime {
        "/run/systemd/system.control"
    } else {
        "/etc/systemd/system.control"
    };
    path.iter().map(String::as_str).find(|p| p.ends_with(end))
}

/// The drop-in files (path and text) that set `settings` on `unit` on the
/// search path `path` (its directories, in order), or why they cannot be
/// written: the path lacks the directory, or a property or unit name would
/// not make a plain file name.
pub fn property_dropins(
    path: &[String],
    unit: &str,
    runtime: bool,
    settings: &[Setting],
) -> Result<Vec<(String, String)>, String> {
    let dir = control_dir(path, runtime).ok_or_else(|| {
        format!(
            "set-property writes to {}, which is not on the unit search path",
            if runtime {
                "/run/systemd/system.control"
            } else {
                "/etc/systemd/system.control"
            }
        )
    })?;
    flotilla_units::unit_name::validate_systemd_unit_name(unit)?;
    settings
        .iter()
        .map(|s| {
            if s.property.is_empty() || !s.property.chars().all(|c| c.is_ascii_alphanumeric()) {
                return Err(format!("invalid property name {:?}", s.property));
            }
            Ok((
                format!("{dir}/{unit}.d/50-{}.conf", s.property),
                format!(
                    "# Written for `systemctl set-property {unit} {}=…`; `systemctl revert {unit}` removes it.\n[{}]\n{}={}\n",
                    s.property, s.section, s.key, s.value
                ),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs() -> Vec<String> {
        [
            "/etc/systemd/system.control",
            "/run/systemd/system.control",
            "/etc/systemd/system",
        ]
        .iter()
        .map(|p| p.to_string())
        .collect()
    }

    fn mem() -> Setting {
        Setting {
            property: "MemoryMax".into(),
            section: "Service".into(),
            key: "MemoryMax".into(),
            value: "1234567".into(),
        }
    }

    #[test]
    fn one_dropin_per_property_in_the_control_directory() {
        let files = property_dropins(&dirs(), "web.service", false, &[mem()]).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(
            files[0].0,
            "/etc/systemd/system.control/web.service.d/50-MemoryMax.conf"
        );
        assert!(
            files[0].1.ends_with("\n[Service]\nMemoryMax=1234567\n"),
            "{}",
            files[0].1
        );
        let files = property_dropins(&dirs(), "web.service", true, &[mem()]).unwrap();
        assert_eq!(
            files[0].0,
            "/run/systemd/system.control/web.service.d/50-MemoryMax.conf"
        );
    }

    #[test]
    fn no_control_directory_or_a_bad_name_is_an_error() {
        let e = property_dropins(&dirs()[2..], "web.service", false, &[mem()]).unwrap_err();
        assert!(
            e.contains("/etc/systemd/system.control, which is not on the unit search path"),
            "{e}"
        );
        let mut bad = mem();
        bad.property = "../x".into();
        assert!(property_dropins(&dirs(), "web.service", false, &[bad]).is_err());
        assert!(property_dropins(&dirs(), "../web.service", false, &[mem()]).is_err());
    }
}
