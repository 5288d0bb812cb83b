//! Loading YAML unit files into [`crate::spec::UnitSpec`], with diagnostics.
//!
//! - [`parse_yaml`] reads one unit file (one YAML mapping) and reports every
//!   problem in it as a [`Diagnostic`] with file, line and column;
//! - [`load_files`] loads the files of a units directory (the init reads
//!   them): every `*.yaml` / `*.yml` file, and `*.service` files through the
//!   systemd translator;
//! - [`split_command`] splits a command string into words as a POSIX shell
//!   does, without running a shell.
//!
//! The format is documented for users in `docs/units.md`. The YAML is read
//! with `serde-saphyr` into a tree of positioned nodes, and then checked by
//! hand, so that every message is ours and every problem of a file is found
//! in one pass. Cross-unit checks (duplicate names and targets, cycles,
//! missing targets) belong to the graph, not here.

use crate::diag::Diagnostic;
use crate::spec::{Origin, UnitSpec};

mod boot_target;
mod default_deps;
mod dir;
mod dropin;
mod fileless;
mod files_stamp;
pub mod generators;
mod instances;
mod orphan_dropins;
mod path;
mod read;
mod stamp;
mod target_order;
mod unit;
mod words;
pub(crate) mod yaml;

pub use boot_target::keep_target_alias;
pub use default_deps::add_default_dependencies;
pub use dir::{is_unit_file_name, load_files, FileRead};
pub use dropin::parse_yaml_with_dropins;
pub use fileless::{loads_without_file, transient_files, without_file};
pub use files_stamp::{files_stamp, mtime_us, needs_reload, NO_FILES};
pub use instances::{Instances, Made, Templates};
pub use path::{add_want, load_path, load_path_with, LoadedPath, ReadFile, UnitSource};
pub use stamp::{DirStamp, Entries, PathStamp, SETTLE_US};
pub use unit::{parse_yaml, UNIT_KEYS};
pub use words::split_command;
pub use yaml::{MAX_DIAGNOSTICS, MAX_FILE_SIZE};

/// The result of parsing one unit file: the unit if it is valid, where it
/// came from, and every problem found (errors and warnings).
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedUnit {
    /// The unit, when the file has no error.
    pub spec: Option<UnitSpec>,
    /// The file and positions (filled as far as parsing got).
    pub origin: Origin,
    /// Every problem, errors and warnings, in file order.
    pub diagnostics: Vec<Diagnostic>,
}

/// The result of loading a units directory.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LoadedDir {
    /// Every valid unit, in file-name order.
    pub units: Vec<(UnitSpec, Origin)>,
    /// Every problem of every file, in file-name order.
    pub diagnostics: Vec<Diagnostic>,
}
