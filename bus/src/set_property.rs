//! `SetUnitProperties` (`systemctl set-property UNIT KEY=VALUE…`): each
//! property written as the unit-file line it stands for (decoded as a
//! transient service's, `crate::transient::props`) into a drop-in of the
//! unit's under `/etc/systemd/system.control` (`--runtime`: under `/run`),
//! where systemd writes them (`flotilla_systemd::property_dropins`).
//! systemd also applies a cgroup setting to the running unit at once;
//! flotilla reads the drop-in at the next reload, as any drop-in
//! (docs/dbus.md). `Markers=` is the manager's own state of the unit,
//! never a file's, as systemd's ([`crate::markers`]): kept by the bus side.

use crate::answer::Answer;
use crate::error::BusError;
use crate::hub::Hub;
use crate::model::systemd_name;
use crate::transient::props::lines;
use crate::transient::Props;
use flotilla_systemd::{property_dropins, service_section, translate_file, Setting};

/// The section a key goes in for a unit named `unit`: `[Unit]`'s keys
/// there, the others in the unit type's own (`web.service`: `Service`).
fn section(unit: &str, key: &str) -> String {
    if service_section(key) == "Unit" {
        return "Unit".to_string();
    }
    let suffix = unit.rsplit_once('.').map_or("service", |(_, s)| s);
    let mut c = suffix.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

/// `SetUnitProperties(name, runtime, properties)`.
pub async fn set(hub: &Hub, name: &str, runtime: bool, props: Props) -> Result<Answer, BusError> {
    let s = hub
        .find(name)
        .await?
        .ok_or_else(|| BusError::no_such_unit(name))?;
    let (marker_words, props): (Props, Props) =
        props.into_iter().partition(|(p, _)| p == "Markers");
    // Every value is checked before any is kept.
    let mut markers = None;
    for (_, v) in marker_words {
        let words = Vec::<String>::try_from(v)
            .map_err(|e| BusError::invalid_args(format!("property Markers: {e}")))?;
        let now = markers.unwrap_or_else(|| hub.markers_of(&s.unit));
        markers = Some(crate::markers::apply(now, &words).map_err(BusError::invalid_args)?);
    }
    if props.is_empty() {
        if let Some(m) = markers {
            hub.set_markers(&s.unit, m);
        }
        return Ok(Answer::Empty);
    }
    if !s.source.starts_with('/') || s.source.ends_with(".yaml") || s.source.ends_with(".yml") {
        return Err(BusError::not_supported(
            &format!("SetUnitProperties of {name}"),
            "only a unit from a systemd unit file takes drop-ins",
        ));
    }
    let unit = systemd_name(&s);
    let lines = lines(props)?;
    // A value the translator finds invalid is the caller's error, as in a
    // unit file; a key it would ignore is written all the same (systemd
    // keeps it) and ignored when read, with the translator's warning.
    let text: String = lines
        .iter()
        .map(|l| format!("[{}]\n{}={}\n", section(&unit, &l.key), l.key, l.value))
        .collect();
    let parsed = translate_file(
        &unit,
        &unit,
        &format!("[Service]\nExecStart=/bin/true\n{text}"),
    );
    let invalid: Vec<String> = parsed
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.message.clone())
        .collect();
    if !invalid.is_empty() {
        return Err(BusError::invalid_args(invalid.join("; ")));
    }
    let settings: Vec<Setting> = lines
        .into_iter()
        .map(|l| Setting {
            section: section(&unit, &l.key),
            // The file is named by the setting, as systemd names it
            // (`CPUQuotaPerSecUSec` is `50-CPUQuota.conf`).
            property: l.key.clone(),
            key: l.key,
            value: l.value,
        })
        .collect();
    let lasting = hub.lasting().await?;
    let path = &lasting.units_path;
    let files = property_dropins(path, &unit, runtime, &settings).map_err(BusError::failed)?;
    for (path, text) in files {
        write(&path, &text).map_err(|e| BusError::failed(format!("{path}: {e}")))?;
    }
    if let Some(m) = markers {
        hub.set_markers(&s.unit, m);
    }
    Ok(Answer::Empty)
}

/// Writes `text` to `path` whole (a temporary file renamed over it), its
/// directory made first.
fn write(path: &str, text: &str) -> std::io::Result<()> {
    let p = std::path::Path::new(path);
    if let Some(dir) = p.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = format!("{path}.tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, p)
}

#[cfg(test)]
mod tests {
    use super::section;

    #[test]
    fn each_key_in_its_section() {
        assert_eq!(section("web.service", "MemoryMax"), "Service");
        assert_eq!(section("web.service", "Description"), "Unit");
        assert_eq!(section("web.socket", "MemoryMax"), "Socket");
    }
}
