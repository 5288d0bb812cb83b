//! Loading YAML unit files into [`crate::spec::UnitSpec`], with diagnostics.
