//! `AppArmorProfile=` (systemd.exec(5)): the AppArmor profile a unit's
//! processes change to when they execute their program, as systemd's
//! `aa_change_onexec()`: the child writes `exec PROFILE` to its own
//! `/proc/self/attr/apparmor/exec` (`/proc/self/attr/exec` on kernels
//! without the per-module directory). Only where AppArmor is enabled on
//! the machine ([`enabled`]); elsewhere the key is passed over, as systemd
//! passes it over. A name after `-` (Debian's tor: `-system_tor`) is
//! optional: a failure to change to it (the profile is not loaded) is no
//! error. Pure: the init probes the machine and writes
//! (`init/src/sys/exec/context.rs`).

use serde::{Deserialize, Serialize};

/// An `AppArmorProfile=` value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct AppArmorProfile {
    /// The profile's name.
    pub name: String,
    /// The value began with `-`: a failure to change to it is passed over.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
}

impl AppArmorProfile {
    /// What the child writes to its `attr/exec` file.
    pub fn exec_request(&self) -> String {
        format!("exec {}", self.name)
    }
}

/// `AppArmorProfile=VALUE` (not empty: an empty value resets the key).
pub fn parse_apparmor_profile(value: &str) -> Result<AppArmorProfile, String> {
    let (optional, name) = match value.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, value),
    };
    if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == '\0') {
        return Err(format!("`{value}` is not an AppArmor profile name"));
    }
    Ok(AppArmorProfile {
        name: name.to_string(),
        optional,
    })
}

/// Whether AppArmor is enabled, from the text of
/// `/sys/module/apparmor/parameters/enabled` (`None`: no such file, the
/// module is not there): a true boolean (`Y`), as systemd's
/// `mac_apparmor_use()` reads it.
pub fn enabled(text: Option<&str>) -> bool {
    text.map(str::trim)
        .is_some_and(|t| matches!(t, "Y" | "y" | "yes" | "1" | "true" | "on"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_optional_with_a_dash() {
        let p = parse_apparmor_profile("-system_tor").unwrap();
        assert_eq!((p.name.as_str(), p.optional), ("system_tor", true));
        assert_eq!(p.exec_request(), "exec system_tor");
        let p = parse_apparmor_profile("usr.sbin.slapd").unwrap();
        assert_eq!((p.name.as_str(), p.optional), ("usr.sbin.slapd", false));
        for bad in ["-", "a b", "x\ty"] {
            assert!(parse_apparmor_profile(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn enabled_as_the_module_says() {
        assert!(enabled(Some("Y\n")));
        assert!(!enabled(Some("N\n")));
        assert!(!enabled(None));
    }
}
