//! Loading YAML unit files into [`crate::spec::UnitSpec`], with diagnostics.
//!
//! - [`parse_yaml`] reads one unit file (one YAML mapping) and reports every
//!   problem in it as a [`Diagnostic`] with file, line and column;
//! - [`parse_yaml_with_dropins`] applies a YAML unit's drop-ins;
//! - [`files_stamp`] and [`PathStamp`] stamp the files and directories a
//!   unit was read from, so that a reload knows what changed;
//! - [`split_command`] splits a command string into words as a POSIX shell
//!   does, without running a shell.
//!
//! The format is documented for users in `docs/units.md`. The YAML is read
//! with `serde-saphyr` into a tree of positioned nodes, and then checked by
//! hand, so that every message is ours and every problem of a file is found
//! in one pass. Cross-unit checks (duplicate names and targets, cycles,
//! missing targets) belong to the graph, not here. Finding the files of a
//! search path, systemd's files among them, is `flotilla_systemd::load`'s.

use crate::diag::Diagnostic;
use crate::spec::{Origin, UnitSpec};

mod dropin;
mod files_stamp;
mod read;
mod stamp;
mod unit;
mod words;
pub(crate) mod yaml;

pub use dropin::parse_yaml_with_dropins;
pub use files_stamp::{files_stamp, needs_reload, NO_FILES};
pub use stamp::{DirStamp, Entries, PathStamp, SETTLE_US};
pub use unit::{parse_yaml, yaml_unit_name, UNIT_KEYS};
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
