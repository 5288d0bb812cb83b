//! systemd (and fleet) INI unit files: parsing, canonical form, hash, and the
//! translation into [`crate::spec::UnitSpec`].
