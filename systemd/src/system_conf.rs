//! The manager's own settings: the `[Manager]` section of
//! `/etc/systemd/system.conf` and its drop-ins (`system.conf.d/*.conf`), as
//! `systemd-system.conf(5)` describes them (docs/systemd-units.md, "The
//! manager's settings"). The init applies `DefaultLimit*=` (each unit
//! without a `Limit*=` of its own gets the default: [`ManagerConfig::limits_for`]),
//! and `DefaultTimeoutStartSec=` and `DefaultTimeoutStopSec=` (the
//! timeouts a unit file that sets none is translated with:
//! [`ManagerConfig::translate_with`]), and `NUMAPolicy=` and `NUMAMask=`
//! (the manager's own memory policy, set at boot and at each reload:
//! [`ManagerConfig::mem_policy`]). `DefaultRestartSec=`
//! and `DefaultEnvironment=` are read and checked but not applied yet, and
//! every other `[Manager]` key is not applied at all: each such line is a
//! warning naming its file and line, as systemd warns of a key it does not
//! know, so that a setting flotilla ignores is never a silent difference.
//!
//! Pure: the caller lists the directories and reads the files.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::parse::parse_checked;
use flotilla_units::context::limits::{parse_rlimit, Rlimit, RlimitValue};
use flotilla_units::context::placement::{
    assign_mask, mem_request, parse_numa_policy, IndexSet, InvalidPolicy, MemRequest, NumaPolicy,
};
use flotilla_units::context::value::words;
use flotilla_units::diag::Diagnostic;
use flotilla_units::timespan::parse_timespan;

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
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
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
    /// `NUMAPolicy=`: the manager's own memory policy, which every process
    /// it starts inherits.
    #[serde(default)]
    pub numa_policy: Option<NumaPolicy>,
    /// `NUMAMask=`: its nodes.
    #[serde(default)]
    pub numa_mask: Option<IndexSet>,
}

impl ManagerConfig {
    /// `facts` with this configuration's defaults for what a unit file
    /// does not set (its timeouts), which units are translated with.
    pub fn translate_with(&self, facts: &mut flotilla_units::specifier::SpecifierContext) {
        facts.default_timeout_start = self.default_timeout_start;
        facts.default_timeout_stop = self.default_timeout_stop;
    }

    /// The manager's memory policy to set, if either NUMA key is given
    /// (systemd's rules: `flotilla_units::context::placement`).
    pub fn mem_policy(&self) -> Option<Result<MemRequest, InvalidPolicy>> {
        if self.numa_policy.is_none() && self.numa_mask.is_none() {
            return None;
        }
        Some(mem_request(self.numa_policy, self.numa_mask.as_ref()))
    }

    /// The limits a unit's processes get: the unit's own `Limit*=` where it
    /// has one (systemd's rule: the unit's key wins, whole, soft and hard
    /// together), else the manager's `DefaultLimit*=`.
    pub fn limits_for(&self, own: &BTreeMap<Rlimit, RlimitValue>) -> BTreeMap<Rlimit, RlimitValue> {
        let mut out = self.default_limits.clone();
        out.extend(own.iter().map(|(r, v)| (*r, *v)));
        out
    }
}

/// [`CONF_FILE`] and [`DROPIN_DIRS`] below `root` (`/` for the system's
/// own; another root for a copy, as `systemctl --root=` does).
pub fn places(root: &Path) -> (String, Vec<String>) {
    let under = |p: &str| {
        root.join(p.trim_start_matches('/'))
            .to_string_lossy()
            .into_owned()
    };
    (
        under(CONF_FILE),
        DROPIN_DIRS.iter().map(|d| under(d)).collect(),
    )
}

/// The files to read, in the order they apply: [`CONF_FILE`] first, then
/// the drop-ins sorted by file name, where a name in an earlier directory of
/// `listings` hides the same name in a later one (systemd's rule, so
/// `/etc` overrides `/run` overrides `/usr/lib`). `listings` pairs each
/// directory with the names in it; names not ending in `.conf` are skipped.
pub fn config_files(listings: &[(&str, Vec<String>)]) -> Vec<String> {
    config_files_of(CONF_FILE, listings)
}

/// [`config_files`] with the main file `main` ([`places`]).
pub fn config_files_of(main: &str, listings: &[(&str, Vec<String>)]) -> Vec<String> {
    let mut chosen: BTreeMap<&str, &str> = BTreeMap::new();
    for (dir, names) in listings {
        for name in names {
            if name.ends_with(".conf") && !name.contains('/') {
                chosen.entry(name.as_str()).or_insert(dir);
            }
        }
    }
    let mut out = vec![main.to_string()];
    out.extend(
        chosen
            .iter()
            .map(|(name, dir)| format!("{}/{name}", dir.trim_end_matches('/'))),
    );
    out
}

/// The manager's settings below `root` ([`places`]): `list` gives the
/// names in a directory (none when it does not exist), `read` a file's
/// text (`None` when it does not exist: the main file may be absent).
pub fn read_under(
    root: &Path,
    list: &mut dyn FnMut(&str) -> Vec<String>,
    read: &mut dyn FnMut(&str) -> Option<String>,
) -> (ManagerConfig, Vec<Diagnostic>) {
    let (main, dirs) = places(root);
    let listings: Vec<(&str, Vec<String>)> = dirs.iter().map(|d| (d.as_str(), list(d))).collect();
    let texts: Vec<(String, String)> = config_files_of(&main, &listings)
        .into_iter()
        .filter_map(|f| read(&f).map(|t| (f, t)))
        .collect();
    let files: Vec<(&str, &str)> = texts
        .iter()
        .map(|(f, t)| (f.as_str(), t.as_str()))
        .collect();
    parse_manager_config(&files)
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
            let why = match apply(&mut cfg, &o.name, &o.value) {
                Ok(Applied::Yes) => continue,
                Ok(Applied::No) => format!(
                    "flotilla does not apply `{}=` of the manager's settings \
                     (docs/systemd-units.md, \"The manager's settings\")",
                    o.name
                ),
                Err(e) => format!("{}={}: {e}", o.name, o.value),
            };
            diags.push(Diagnostic::warning(
                *file,
                unit.pos(i),
                format!("{why}; the setting is ignored"),
            ));
        }
    }
    (cfg, diags)
}

/// Whether the init applies a key it read.
enum Applied {
    Yes,
    No,
}

fn apply(cfg: &mut ManagerConfig, name: &str, value: &str) -> Result<Applied, String> {
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
        return Ok(Applied::Yes);
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
        "DefaultTimeoutStartSec" => {
            span(&mut cfg.default_timeout_start)?;
            return Ok(Applied::Yes);
        }
        "DefaultTimeoutStopSec" => {
            span(&mut cfg.default_timeout_stop)?;
            return Ok(Applied::Yes);
        }
        "DefaultRestartSec" => span(&mut cfg.default_restart)?,
        "NUMAPolicy" => {
            cfg.numa_policy = if empty {
                None
            } else {
                Some(parse_numa_policy(value)?)
            };
            return Ok(Applied::Yes);
        }
        "NUMAMask" => {
            assign_mask(&mut cfg.numa_mask, value)?;
            return Ok(Applied::Yes);
        }
        "DefaultEnvironment" => {
            if empty {
                cfg.default_environment.clear();
                return Ok(Applied::No);
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
        }
        _ => {}
    }
    Ok(Applied::No)
}

fn valid_env_name(k: &str) -> bool {
    !k.is_empty()
        && !k.starts_with(|c: char| c.is_ascii_digit())
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
#[path = "system_conf_tests.rs"]
mod tests;
