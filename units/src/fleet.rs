//! `[X-Fleet]` values as fleet read them, and [`UnitOption`], one option of
//! a unit file as fleet's API carries it.

use serde::{Deserialize, Serialize};

/// Splits an `[X-Fleet]` value into its values, as fleet's
/// `parseMultivalueLine` did: a value that starts and ends with `"` holds
/// several values, separated by spaces outside quotes, with the quotes
/// removed; any other value is one value as it is.
///
/// ```
/// use flotilla_units::fleet::fleet_values;
/// assert_eq!(fleet_values(r#""region=us-east-1" "diskType=SSD""#), ["region=us-east-1", "diskType=SSD"]);
/// assert_eq!(fleet_values("region=us-east-1 diskType=SSD"), ["region=us-east-1 diskType=SSD"]);
/// ```
pub fn fleet_values(value: &str) -> Vec<String> {
    if !value.starts_with('"') || !value.ends_with('"') {
        return vec![value.to_string()];
    }
    let mut values = Vec::new();
    let mut cur: Vec<u8> = Vec::new();
    let mut quoted = false;
    for &b in value.as_bytes() {
        if b == b'"' {
            quoted = !quoted;
            continue;
        }
        if b == b' ' && !quoted {
            values.push(String::from_utf8_lossy(&cur).into_owned());
            cur.clear();
            continue;
        }
        cur.push(b);
    }
    values.push(String::from_utf8_lossy(&cur).into_owned());
    values
}

/// Splits an `[X-Fleet]` `Conflicts` value: [`fleet_values`], then each
/// value on whitespace (empty pieces dropped), since one `Conflicts=` line
/// may name several globs.
///
/// ```
/// use flotilla_units::fleet::fleet_conflicts_values;
/// assert_eq!(fleet_conflicts_values("web@*.service  db.service"), ["web@*.service", "db.service"]);
/// ```
pub fn fleet_conflicts_values(value: &str) -> Vec<String> {
    fleet_values(value)
        .iter()
        .flat_map(|v| v.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .collect()
}

/// Reads a boolean as fleet did: `Some(true)` for `true`, `yes`, `1`, `on`,
/// `t`; `Some(false)` for `false`, `no`, `0`, `off`, `f`; any case,
/// surrounding whitespace ignored; `None` otherwise (fleet took anything
/// but a true value as false: use `parse_bool(v) == Some(true)` for that).
///
/// ```
/// use flotilla_units::fleet::parse_bool;
/// assert_eq!(parse_bool("Yes"), Some(true));
/// assert_eq!(parse_bool("off"), Some(false));
/// assert_eq!(parse_bool("maybe"), None);
/// ```
pub fn parse_bool(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" | "on" | "t" => Some(true),
        "false" | "no" | "0" | "off" | "f" => Some(false),
        _ => None,
    }
}

/// One option of a unit file, as fleet's API carries it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct UnitOption {
    /// The section, e.g. `Service`.
    pub section: String,
    /// The option's name, e.g. `ExecStart`.
    pub name: String,
    /// The option's value.
    pub value: String,
}
