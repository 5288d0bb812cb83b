//! `preset UNIT...` and the PRESET column of `list-unit-files`: the
//! `*.preset` files beside the search path's `systemd/system` directories
//! (`flotilla_systemd::Presets` has systemd's rules), read by
//! `initctl` itself as it reads unit files. A bad line is a warning on
//! stderr, as systemd logs one, and is skipped.

use super::eprint_line;
use flotilla_systemd::{Presets, SearchDir};

/// The presets of the search path `dirs`.
pub fn load(dirs: &[SearchDir]) -> Presets {
    let (presets, warnings) = flotilla_client::unit_dirs::load_presets(dirs);
    for w in warnings {
        eprint_line(&w);
    }
    presets
}
