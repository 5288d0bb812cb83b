//! The tests of the pure model, in one binary (one link of the crate instead
//! of one per file): the YAML loader, systemd's value syntax (time spans,
//! calendar events, unit names, escaping), the planner. The tests that read
//! systemd's files are `flotilla_systemd`'s. Each module is one topic; fixtures are in
//! `tests/fixtures/`.

mod load_errors;
mod load_fuzz;
mod load_keys;
mod load_split_shell;
mod planner;
mod systemd_calendar;
mod systemd_escape;
mod systemd_names;
mod systemd_timespan;
