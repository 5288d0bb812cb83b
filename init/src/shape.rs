//! What the graph is built with besides the units (docs/contract.md §3b): the config's
//! declared targets, the alternatives chosen with `initctl set-alternative`
//! and the masks of `initctl mask`, the last two kept as files under the
//! state directory (the config file's directory) so that they outlive a
//! reboot:
//!
//! - `masked/NAME`: the unit `NAME` is masked (the file's contents do not
//!   matter);
//! - `alternatives/TARGET`: the unit the alternative `TARGET` runs, one
//!   line; it takes the place of the config's `choose`.
//!
//! A unit file that is a link to `/dev/null` (or empty) is a mask too
//! ([`set_unit_file_masks`], at start and at each reload).
//!
//! The rules of masks and alternatives are `units/`'s ([`crate::args`]
//! gives the state directory; the runtime writes these files).

use crate::args::Settings;
use crate::sys::Sys;
use flotilla_units::config::parse_config;
use flotilla_units::graph::Shape;
use flotilla_units::mask::{MaskSource, Masks};
use flotilla_units::spec::valid_name;
use flotilla_units::targets::Targets;
use std::path::{Path, PathBuf};

/// The directory of the mask files.
pub fn masks_dir(state: &Path) -> PathBuf {
    state.join("masked")
}

/// The directory of the alternatives' choices.
pub fn alternatives_dir(state: &Path) -> PathBuf {
    state.join("alternatives")
}

/// The longest choice file read.
const MAX_CHOICE: usize = 4096;

/// The shape the settings and the state directory give, and every problem
/// found reading it (a problem leaves out what it concerns, nothing else).
pub fn load(sys: &dyn Sys, settings: &Settings) -> (Shape, Vec<String>) {
    let mut shape = Shape {
        targets: settings.targets.clone(),
        masks: Masks::new(),
        devices: sys.udev_available(),
    };
    let mut problems = Vec::new();
    let Some(state) = &settings.state_dir else {
        return (shape, problems);
    };
    let dir = masks_dir(state);
    for name in names_in(sys, &dir, &mut problems) {
        let source = MaskSource::State(dir.join(&name));
        shape.masks.insert(name, source);
    }
    let dir = alternatives_dir(state);
    for target in names_in(sys, &dir, &mut problems) {
        let path = dir.join(&target);
        let Some(decl) = shape.targets.get_mut(&target) else {
            problems.push(format!(
                "{}: the config declares no alternative `{target}`; ignored",
                path.display()
            ));
            continue;
        };
        match sys.read_file_limited(&path, MAX_CHOICE) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                let unit = text.trim();
                if valid_name(unit) {
                    decl.choose = Some(unit.to_string());
                    decl.set = true;
                } else {
                    problems.push(format!(
                        "{}: not a unit name: {:?}; ignored",
                        path.display(),
                        unit
                    ));
                }
            }
            Err(e) => problems.push(format!("{e}; ignored")),
        }
    }
    (shape, problems)
}

/// The shape for a reload: the config file's `targets:` read again (the
/// settings' own when there is no config file), then [`load`] with them;
/// also the targets, to keep once the reload is applied, and the problems
/// [`load`] found. `Err`: the config file's errors.
pub fn reread(
    sys: &dyn Sys,
    settings: &Settings,
) -> Result<(Shape, Targets, Vec<String>), Vec<String>> {
    let mut next = settings.clone();
    if let Some(path) = &settings.config_file {
        next.targets = match crate::args::read_config(sys, path) {
            Ok(text) => {
                parse_config(&path.display().to_string(), &text)
                    .map_err(|ds| ds.iter().map(ToString::to_string).collect::<Vec<_>>())?
                    .targets
            }
            // A config file that is gone declares nothing (as at boot).
            Err(crate::args::ConfigReadError::NotFound) => Targets::default(),
            Err(crate::args::ConfigReadError::Unreadable(e)) => return Err(vec![e]),
        };
    }
    let (shape, problems) = load(sys, &next);
    Ok((shape, next.targets, problems))
}

/// Makes the unit files that are masks (a link to `/dev/null`, or an
/// empty file: `masked`, each name with its path, as the search path's
/// loader found them) the shape's masks of that source, in place of those
/// it had: the same masks as `initctl mask`'s, for every rule. A name
/// masked by `initctl mask` too keeps that mask.
pub fn set_unit_file_masks(shape: &mut Shape, masked: &[(String, String)]) {
    let mut masks = Masks::new();
    for (name, source) in shape.masks.iter() {
        if matches!(source, MaskSource::State(_)) {
            masks.insert(name, source.clone());
        }
    }
    for (name, path) in masked {
        masks.insert(name.clone(), MaskSource::DevNull(PathBuf::from(path)));
    }
    shape.masks = masks;
}

/// The valid unit names of the files in `dir` (none when it does not
/// exist); other names are problems.
fn names_in(sys: &dyn Sys, dir: &Path, problems: &mut Vec<String>) -> Vec<String> {
    let Ok(mut names) = sys.read_dir(dir) else {
        return Vec::new();
    };
    names.sort();
    let mut out = Vec::new();
    for n in names {
        match n.to_str() {
            Some(s) if valid_name(s) => out.push(s.to_string()),
            // Left by an interrupted write.
            Some(s) if s.ends_with(".new") => {}
            _ => problems.push(format!(
                "{}: {:?} is not a unit name; ignored",
                dir.display(),
                n
            )),
        }
    }
    out
}
