//! The arguments of the unit-file verbs (`enable`, `disable`, `is-enabled`,
//! `cat`, `show`, `list-unit-files` …), read after the verb by the parser
//! of [`super`].

use super::*;

/// The arguments of a unit-file command.
pub(super) fn unit_files(verb: &str, p: &mut VerbArgs) -> Result<UnitFiles, UsageError> {
    let mut now = false;
    let mut quiet = false;
    let mut keys = Vec::new();
    p.scan(&["-p", "--property"], |name, value, _| {
        match (verb, name) {
            ("enable" | "disable", "--now") => now = true,
            ("is-enabled", "-q" | "--quiet") => quiet = true,
            ("show", "-p" | "--property") => {
                // systemctl takes `-p A,B` as well as `-p A -p B`.
                let v = value.unwrap_or_default();
                keys.extend(v.split(',').filter(|k| !k.is_empty()).map(str::to_string));
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    p.no_json()?;
    let mut units = Vec::new();
    while let Some(u) = p.optional() {
        units.push(u);
    }
    let need = |units: &Vec<String>| {
        if units.is_empty() {
            Err(usage(
                Topic::UnitFiles,
                format!("'{verb}' needs a unit name"),
            ))
        } else {
            Ok(())
        }
    };
    Ok(match verb {
        "enable" => {
            need(&units)?;
            UnitFiles::Enable { units, now }
        }
        "disable" => {
            need(&units)?;
            UnitFiles::Disable { units, now }
        }
        "is-enabled" => {
            need(&units)?;
            UnitFiles::IsEnabled { units, quiet }
        }
        "cat" => {
            need(&units)?;
            UnitFiles::Cat(units)
        }
        "preset" => {
            need(&units)?;
            UnitFiles::Preset(units)
        }
        "show" => {
            need(&units)?;
            if units.len() > 1 {
                return Err(usage(Topic::UnitFiles, "'show' takes one unit"));
            }
            UnitFiles::Show {
                unit: units.remove(0),
                keys,
            }
        }
        _ => {
            if let Some(u) = units.first() {
                return Err(usage(
                    Topic::UnitFiles,
                    format!("unexpected argument '{u}'"),
                ));
            }
            UnitFiles::List
        }
    })
}
