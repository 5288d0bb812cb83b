//! systemd (and fleet) INI unit files: parsing, canonical form, hash, and the
//! translation into [`crate::spec::UnitSpec`].
//!
//! - [`parse`] / [`parse_checked`] read a unit file with fleet's rules
//!   (fleet v1.0, through go-systemd's `unit.Deserialize`) into a
//!   [`UnitFile`]: a list of [`UnitOption`]s with their positions.
//! - [`canonical_text`] and [`unit_hash`] give fleet's canonical serialization
//!   and its SHA1, the hash that fleet's API and `fleetctl list-unit-files`
//!   show. [`check_options`] refuses option lists fleet's API refused.
//! - [`validate_unit_name`], [`UnitName`] and the helpers around it apply
//!   fleet's unit-name rules (templates `name@.service`, instances
//!   `name@inst.service`); [`expand_specifiers`] expands `%n %N %p %i`.
//! - [`fleet_values`], [`fleet_conflicts_values`] and [`parse_bool`] read
//!   `[X-Fleet]` values as fleet did.
//! - [`translate_file`] and [`translate`] turn a `.service` unit into a
//!   [`crate::spec::UnitSpec`], reporting every key that cannot be honoured
//!   as a warning (docs/contract.md §7); [`parse_timespan`] reads systemd time spans.
//! - [`CalendarSpec`] reads `OnCalendar=` events, prints them as
//!   `systemd-analyze calendar` does and finds their next elapse in a
//!   [`tz::TimeZone`] read from TZif bytes; [`TimerSettings`] computes a
//!   `.timer`'s next elapse.
//! - [`escape`], [`unescape`] and friends are `systemd-escape`;
//!   [`SpecifierContext`] resolves every specifier of systemd.unit(5).
//! - [`Conditions`] and [`check_conditions`] read and check `Condition*=`
//!   and `Assert*=` against a [`ConditionFacts`] the caller implements.
//! - [`resolve_unit`] applies the unit search path to directory listings
//!   ([`SearchDir`]); [`MergedUnit`] merges a unit with its drop-ins;
//!   [`InstallInfo`], [`enable_links`], [`disable_links`] and [`is_enabled`]
//!   are `[Install]` and `systemctl enable`/`disable`/`is-enabled`;
//!   [`yaml_enable_links`] and its siblings the same for a YAML unit's
//!   `wanted-by`; [`Presets`] reads `*.preset` files (`systemctl preset`);
//!   [`revert_paths`] is `systemctl revert`.
//!
//! `docs/systemd-units.md` describes the translation key by key.

mod canon;
mod dropin;
mod install;
mod install_yaml;
mod named_links;
mod parse;
mod preset;
mod revert;
mod set_property;
pub mod system_conf;
mod translate;
mod unit_path;

#[cfg(test)]
mod condition_tests;
#[cfg(test)]
mod timer_tests;

pub use crate::fleet::UnitOption;
pub use crate::tz;

pub use crate::calendar::{CalendarError, CalendarSpec, CalendarZone, Component};
pub use crate::condition::{
    check as check_conditions, condition_kind, fnmatch, parse_value as parse_condition, stamp_nsec,
    version_cmp, Condition, ConditionError, ConditionFacts, Conditions, MTime, ScriptedFacts,
    ScriptedPath, UpdateStamps, Verdict, CONDITION_KINDS,
};
pub use crate::detect_virt::{
    detect_container, in_user_namespace, ContainerSigns, CONTAINER_NAMES,
};
pub use crate::escape::{
    escape, escape_into_template, escape_path, unescape, unescape_path, EscapeError,
};
pub use crate::exec::{c_unescape, expand_env};
pub use crate::fleet::{fleet_conflicts_values, fleet_values, parse_bool};
pub use crate::specifier::{ManagerUser, SpecifierContext, SpecifierError};
pub use crate::timer::{
    wake_between, TimerClock, TimerError, TimerNext, TimerSettings, DEFAULT_ACCURACY, TIMER_KEYS,
};
pub use crate::timespan::{parse_timespan, relative_span, TIMESPAN_INFINITY};
pub use crate::unit_name::{
    expand_specifiers, instance, is_instance, is_template, prefix, template_of, validate_unit_name,
    UnitName, MAX_UNIT_NAME_LEN, TEMPLATE_SUFFIXES, UNIT_SUFFIXES,
};
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
pub use set_property::{property_dropins, Setting};
pub use translate::{
    mounts_for, service_section, translatable, translate, translate_file, translate_file_with,
    translate_with,
};
pub(crate) use unit_path::absolute as link_target;
pub use unit_path::{
    dropin_dir_names, is_listed_subdir, list_search_dir, resolve as resolve_unit, unit_names,
    yaml_dropins, Definition, DirRole, Entry, EntryKind, ListDir, ResolvedUnit, SearchDir,
};
