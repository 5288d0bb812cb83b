//! The tests of the systemd file layer that read unit files, search paths
//! and directories; each module is one topic, fixtures are in
//! `tests/fixtures/`.

mod conditions;
mod load_files;
mod load_path;
mod load_seed;
mod model_from_files;
mod systemd_canon;
mod systemd_deps;
mod systemd_parse;
mod systemd_proptest;
mod systemd_translate;
mod systemd_unit_path;
mod timer;
