//! The tests of the pure model, in one binary (one link of the crate instead
//! of one per file): the YAML loader, the systemd unit files and their
//! translation, the planner. Each module is one topic; fixtures are in
//! `tests/fixtures/`.

mod load_errors;
mod load_files;
mod load_fuzz;
mod load_keys;
mod load_path;
mod load_seed;
mod load_split_shell;
mod planner;
mod systemd_calendar;
mod systemd_canon;
mod systemd_deps;
mod systemd_escape;
mod systemd_names;
mod systemd_parse;
mod systemd_proptest;
mod systemd_timespan;
mod systemd_translate;
mod systemd_unit_path;
