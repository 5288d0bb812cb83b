//! Loading YAML unit files into [`crate::spec::UnitSpec`], with diagnostics.

use crate::diag::Diagnostic;
use crate::spec::{Origin, UnitSpec};

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
