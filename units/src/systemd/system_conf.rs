//! The manager's own settings: the `[Manager]` section of
//! `/etc/systemd/system.conf` and its drop-ins (`system.conf.d/*.conf`), as
//! `systemd-system.conf(5)` describes them. Only the defaults that units
//! inherit are read here (`docs/debian.md`, "system.conf"): `DefaultLimit*=`,
//! `DefaultTimeoutStartSec=`, `DefaultTimeoutStopSec=`, `DefaultRestartSec=`
//! and `DefaultEnvironment=`; other keys are left alone without a word, as
//! the file holds many that only systemd itself acts on.
//!
//! Pure: the caller lists the directories and reads the files.

use std::collections::BTreeMap;
use std::time::Duration;

use super::parse::parse_checked;
use super::timespan::parse_timespan;
use crate::context::limits::{parse_rlimit, Rlimit, RlimitValue};
use crate::context::value::words;
use crate::diag::Diagnostic;

/// The main file.
pub const CONF_FILE: &str = "/etc/systemd/system.conf";

/// The drop-in directories, the one that wins a file name first.
pub const DROPIN_DIRS: [&str; 4] = [
    "/etc/systemd/system.conf.d",
    "/run/systemd/system.conf.d",
    "/usr/local/lib/systemd/system.conf.d",
    "/usr/lib/systemd/system.conf.d",
];

/// The defaults a manager configuration gives units (each `None` or empty
/// when no file sets it: the built-in default applies).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ManagerConfig {
    /// `DefaultLimitNOFILE=` and the rest, by resource.
    pub default_limits: BTreeMap<Rlimit, RlimitValue>,
    /// `DefaultTimeoutStartSec=`.
    pub default_timeout_start: Option<Duration>,
    /// `DefaultTimeoutStopSec=`.
    pub default_timeout_stop: Option<Duration>,
    /// `DefaultRestartSec=`.
    pub default_restart: Option<Duration>,
    /// `DefaultEnvironment=`: `NAME=VALUE` pairs, a later name replacing an
    /// earlier one.
    pub default_environment: Vec<(String, String)>,
}

/// The files to read, in the order they apply: [`CONF_FILE`] first, then
/// the drop-ins sorted by file name, where a name in an earlier directory of
/// `listings` hides the same name in a later one (systemd's rule, so
/// `/etc` overrides `/run` overrides `/usr/lib`). `listings` pairs each
/// directory with the names in it; names not ending in `.conf` are skipped.
pub fn config_files(listings: &[(&str, Vec<String>)]) -> Vec<String> {
    let mut chosen: BTreeMap<&str, &str> = BTreeMap::new();
    for (dir, names) in listings {
        for name in names {
            if name.ends_with(".conf") && !name.contains('/') {
                chosen.entry(name.as_str()).or_insert(dir);
            }
        }
    }
    let mut out = vec![CONF_FILE.to_string()];
    out.extend(
        chosen
            .iter()
            .map(|(name, dir)| format!("{}/{name}", dir.trim_end_matches('/'))),
    );
    out
}

/// Reads `files` (path, text) in the order given ([`config_files`]): a
/// later value of a key replaces an earlier one, an empty value resets it
/// to the built-in default. A bad value or line is a warning naming its file
/// and line, and the rest is kept.
pub fn parse_manager_config(files: &[(&str, &str)]) -> (ManagerConfig, Vec<Diagnostic>) {
    let mut cfg = ManagerConfig::default();
    let mut diags = Vec::new();
    for (file, text) in files {
        let (unit, mut d) = parse_checked(file, text);
        diags.append(&mut d);
        for (i, o) in unit.options.iter().enumerate() {
            if o.section != "Manager" {
                continue;
            }
            if let Err(e) = apply(&mut cfg, &o.name, &o.value) {
                diags.push(Diagnostic::warning(
                    *file,
                    unit.pos(i),
                    format!("{}={}: {e}; the setting is ignored", o.name, o.value),
                ));
            }
        }
    }
    (cfg, diags)
}

fn apply(cfg: &mut ManagerConfig, name: &str, value: &str) -> Result<(), String> {
    let empty = value.trim().is_empty();
    if let Some(resource) = name
        .strip_prefix("Default")
        .and_then(|k| Rlimit::ALL.into_iter().find(|r| r.key() == k))
    {
        if empty {
            cfg.default_limits.remove(&resource);
        } else {
            cfg.default_limits
                .insert(resource, parse_rlimit(resource, value)?);
        }
        return Ok(());
    }
    let span = |slot: &mut Option<Duration>| -> Result<(), String> {
        *slot = if empty {
            None
        } else {
            Some(parse_timespan(value)?)
        };
        Ok(())
    };
    match name {
        "DefaultTimeoutStartSec" => span(&mut cfg.default_timeout_start),
        "DefaultTimeoutStopSec" => span(&mut cfg.default_timeout_stop),
        "DefaultRestartSec" => span(&mut cfg.default_restart),
        "DefaultEnvironment" => {
            if empty {
                cfg.default_environment.clear();
                return Ok(());
            }
            let mut pairs = Vec::new();
            for w in words(value)? {
                match w.split_once('=') {
                    Some((k, v)) if valid_env_name(k) => pairs.push((k.to_string(), v.to_string())),
                    _ => return Err(format!("`{w}` is not NAME=VALUE")),
                }
            }
            for (k, v) in pairs {
                cfg.default_environment.retain(|(n, _)| *n != k);
                cfg.default_environment.push((k, v));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn valid_env_name(k: &str) -> bool {
    !k.is_empty()
        && !k.starts_with(|c: char| c.is_ascii_digit())
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
#[path = "system_conf_tests.rs"]
mod tests;
