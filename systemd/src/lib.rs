//! flotilla's systemd file layer: systemd's (and fleet's) INI unit files and
//! the directories they live in, read into the model of `flotilla_units`.
//!
//! - [`parse`] / [`parse_checked`] read a unit file with fleet's rules
//!   (fleet v1.0, through go-systemd's `unit.Deserialize`) into a
//!   [`UnitFile`]: a list of [`flotilla_units::fleet::UnitOption`]s with
//!   their positions.
//! - [`canonical_text`] and [`unit_hash`] give fleet's canonical serialization
//!   and its SHA1, the hash that fleet's API and `fleetctl list-unit-files`
//!   show. [`check_options`] refuses option lists fleet's API refused.
//! - [`translate_file`] and [`translate`] turn a unit file into a
//!   [`flotilla_units::spec::UnitSpec`], reporting every key that cannot be
//!   honoured as a warning (docs/contract.md §7).
//! - [`resolve_unit`] applies the unit search path to directory listings
//!   ([`SearchDir`]); [`MergedUnit`] merges a unit with its drop-ins;
//!   [`InstallInfo`], [`enable_links`], [`disable_links`] and [`is_enabled`]
//!   are `[Install]` and `systemctl enable`/`disable`/`is-enabled`;
//!   [`yaml_enable_links`] and its siblings the same for a YAML unit's
//!   `wanted-by`; [`Presets`] reads `*.preset` files (`systemctl preset`);
//!   [`revert_paths`] is `systemctl revert`; [`property_dropins`] is
//!   `systemctl set-property`; [`system_conf`] reads `system.conf`.
//! - [`load`] loads the units of a search path (YAML and systemd files,
//!   drop-ins, templates, generators' output) into the model.
//!
//! What the model needs of systemd's syntax (time spans, calendar events,
//! conditions, unit names, escaping, specifiers, exec lines) is
//! `flotilla_units`'s, not this crate's: the model reads YAML units with the
//! same rules and never depends on this crate. docs/design.md draws the cut;
//! `docs/systemd-units.md` describes the translation key by key.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod canon;
mod dropin;
mod install;
mod install_yaml;
pub mod load;
pub mod mount_deps;
mod named_links;
mod parse;
mod preset;
mod revert;
mod search_dir;
mod set_property;
pub mod system_conf;
mod translate;
mod unit_path;

#[cfg(test)]
mod tests;

pub use canon::{canonical_text, check_options, unit_hash};
pub use dropin::{cat_text, MergedUnit, SourcedOption};
pub use install::{
    disable_links, enable_links, is_enabled, unit_file_links, InstallError, InstallInfo, Link,
};
pub use install_yaml::{
    yaml_disable_links, yaml_enable_links, yaml_is_enabled, yaml_unit_file, YamlDefinition,
};
pub use named_links::{default_target, default_target_link, dependency_links};
pub use parse::{parse, parse_checked, UnitFile, LINE_MAX};
pub use preset::{
    preset_dirs, preset_files, preset_plan, PresetAction, PresetMode, PresetPlan, PresetProblem,
    PresetRule, Presets,
};
pub use revert::{revert_paths, Reverted};
pub(crate) use search_dir::absolute as link_target;
pub use search_dir::{
    is_listed_subdir, list_search_dir, transient_dir, DirRole, Entry, EntryKind, ListDir, SearchDir,
};
pub use set_property::{property_dropins, Setting};
pub use translate::{
    mounts_for, service_section, translatable, translate, translate_file, translate_file_with,
    translate_with,
};
pub use unit_path::{
    dropin_dir_names, resolve as resolve_unit, unit_names, yaml_dropins, Definition, ResolvedUnit,
};
