//! The sandbox policy (config key and unit key `sandbox`, systemd's
//! `X-Sandbox=`): what the init does with a setting it lacks the
//! privilege to apply (docs/service-context.md, "Where a privilege is
//! missing").

use serde::{Deserialize, Serialize};

/// `as-systemd` (the default): apply each setting as systemd's executor
/// does where the privilege is missing (clamp, or skip) and name what was
/// not applied; `strict`: fail the start instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxPolicy {
    /// Degrade as systemd does, never silently.
    #[default]
    AsSystemd,
    /// Any setting that cannot be applied fails the start.
    Strict,
}

impl SandboxPolicy {
    /// Reads `as-systemd` or `strict`.
    ///
    /// ```
    /// use flotilla_units::context::policy::SandboxPolicy;
    /// assert_eq!(SandboxPolicy::parse("strict"), Ok(SandboxPolicy::Strict));
    /// assert!(SandboxPolicy::parse("loose").is_err());
    /// ```
    pub fn parse(value: &str) -> Result<SandboxPolicy, String> {
        match value.trim() {
            "as-systemd" => Ok(SandboxPolicy::AsSystemd),
            "strict" => Ok(SandboxPolicy::Strict),
            other => Err(format!(
                "`{other}` is not a sandbox policy: `as-systemd` or `strict`"
            )),
        }
    }

    /// Its name, as written.
    pub fn name(self) -> &'static str {
        match self {
            SandboxPolicy::AsSystemd => "as-systemd",
            SandboxPolicy::Strict => "strict",
        }
    }
}

/// One setting not applied, or applied in part (a unit status's
/// `not_applied`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotApplied {
    /// systemd's name of the setting: `LimitNOFILE`, `ProtectSystem`.
    pub setting: String,
    /// What was done instead and why.
    pub reason: String,
}
