//! `preset UNIT...` and the PRESET column of `list-unit-files`: the
//! `*.preset` files beside the search path's `systemd/system` directories
//! (`flotilla_units::systemd::Presets` has systemd's rules), read by
//! `initctl` itself as it reads unit files. A bad line is a warning on
//! stderr, as systemd logs one, and is skipped.

use super::eprint_line;
use flotilla_units::systemd::{preset_dirs, preset_files, PresetAction, Presets, SearchDir};

/// The presets of the search path `dirs`.
pub fn load(dirs: &[SearchDir]) -> Presets {
    let paths: Vec<String> = dirs.iter().map(|d| d.path.clone()).collect();
    let listings: Vec<(String, Vec<String>)> = preset_dirs(&paths)
        .into_iter()
        .filter_map(|d| {
            let names = std::fs::read_dir(&d)
                .ok()?
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            Some((d, names))
        })
        .collect();
    let mut files = Vec::new();
    for p in preset_files(&listings) {
        match std::fs::read_to_string(&p) {
            Ok(text) => files.push((p, text)),
            Err(e) => eprint_line(&format!("{p}: {e}; skipped")),
        }
    }
    let (presets, problems) = Presets::parse(&files);
    for p in problems {
        eprint_line(&p.to_string());
    }
    presets
}

/// `units` split by what the presets say: those to enable, those to
/// disable (the ignored ones are left out).
pub fn split(presets: &Presets, units: &[String]) -> (Vec<String>, Vec<String>) {
    let mut enable = Vec::new();
    let mut disable = Vec::new();
    for u in units {
        match presets.action(u) {
            PresetAction::Enable => enable.push(u.clone()),
            PresetAction::Disable => disable.push(u.clone()),
            PresetAction::Ignore => {}
        }
    }
    (enable, disable)
}
