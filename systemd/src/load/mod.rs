//! Loading the units of a search path into the model: every `*.yaml` /
//! `*.yml` file (through `flotilla_units::load`) and every systemd unit file
//! (through the translator), their drop-ins, templates and their instances,
//! units that load without a file, the generators' output directories, and
//! the default dependencies systemd adds.
//!
//! - [`load_files`] loads the files of one units directory;
//! - [`load_path`] loads a whole search path;
//! - [`generators`] says where systemd's generators are, how they are
//!   called and where their output goes (the init runs them).

mod boot_target;
mod default_deps;
mod dir;
mod fileless;
pub mod generators;
mod instances;
mod orphan_dropins;
mod path;
mod target_order;

pub use boot_target::keep_target_alias;
pub use default_deps::add_default_dependencies;
pub use dir::{is_unit_file_name, load_files, mtime_us, FileRead, ReadFile};
pub use fileless::{loads_without_file, transient_files, without_file};
pub use instances::{Instances, Made, Templates};
pub use path::{add_want, load_path, load_path_with, LoadedPath, UnitSource};
