//! `enable`, `disable` and `is-enabled` of a YAML unit (`NAME.yaml` on the
//! search path, when no systemd unit file has the name): its `wanted-by`
//! key is its `[Install] WantedBy=`. The links and states are
//! `flotilla_systemd`'s (`yaml_enable_links` and its siblings);
//! this reads the file through the unit loader, so `wanted-by` is checked
//! as every key is.

use super::eprint_line;
use crate::error::EXIT_FAILED;
use flotilla_systemd::{
    yaml_disable_links, yaml_enable_links, yaml_is_enabled, yaml_unit_file, Link, SearchDir,
    YamlDefinition,
};
use flotilla_units::load::parse_yaml;

/// The links `enable` (`on`) or `disable` changes for the YAML unit `name`:
/// `None` when no YAML file defines it; `Some(Err(exit code))` when it
/// cannot be enabled (said on stderr).
pub fn links(
    dirs: &[SearchDir],
    config_dir: &str,
    name: &str,
    on: bool,
) -> Option<Result<Vec<Link>, i32>> {
    let verb = if on { "enable" } else { "disable" };
    let file = match yaml_unit_file(dirs, name)? {
        YamlDefinition::Masked(_) if on => {
            eprint_line(&format!(
                "Failed to {verb} unit: Unit file {name} is masked."
            ));
            return Some(Err(EXIT_FAILED));
        }
        YamlDefinition::Masked(p) | YamlDefinition::File(p) => p,
    };
    if !on {
        return Some(Ok(yaml_disable_links(dirs, name)));
    }
    let wanted_by = match wanted_by(&file, name) {
        Ok(w) => w,
        Err(e) => {
            eprint_line(&format!("Failed to {verb} unit: {e}"));
            return Some(Err(EXIT_FAILED));
        }
    };
    if wanted_by.is_empty() {
        eprint_line(&format!(
            "The unit {name} ({file}) has no wanted-by key: nothing enables it. It runs when \
             a target it provides, or a unit that depends on it, is required."
        ));
    }
    Some(Ok(yaml_enable_links(
        dirs, config_dir, name, &file, &wanted_by,
    )))
}

/// `is-enabled` of the YAML unit `name`; `None` when no YAML file
/// defines it.
pub fn is_enabled(dirs: &[SearchDir], name: &str) -> Option<&'static str> {
    match yaml_unit_file(dirs, name)? {
        YamlDefinition::Masked(_) => Some("masked"),
        YamlDefinition::File(p) => {
            let wanted_by = wanted_by(&p, name).unwrap_or_default();
            Some(yaml_is_enabled(dirs, name, &wanted_by))
        }
    }
}

/// The `wanted-by` of the unit file `file`, which must define `name`; or
/// the first problem of the file (`FILE:LINE:COL: message`).
fn wanted_by(file: &str, name: &str) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    let parsed = parse_yaml(file, &text);
    if let Some(d) = parsed.diagnostics.iter().find(|d| d.is_error()) {
        return Err(d.to_string());
    }
    let spec = parsed.spec.ok_or_else(|| format!("{file}: not a unit"))?;
    if spec.name != name {
        return Err(format!("{file} defines the unit {}, not {name}", spec.name));
    }
    Ok(spec.extras.wanted_by.to_vec())
}
