//! Unit names: fleet's rules, templates and instances.

/// The unit types fleet accepts as a name's suffix.
pub const UNIT_SUFFIXES: [&str; 13] = [
    "automount",
    "busname",
    "device",
    "mount",
    "path",
    "scope",
    "service",
    "slice",
    "snapshot",
    "socket",
    "swap",
    "target",
    "timer",
];

/// The unit types that may be templates or instances (`name@….suffix`).
pub const TEMPLATE_SUFFIXES: [&str; 5] = ["path", "service", "socket", "target", "timer"];

/// The longest unit name fleet accepts, in characters.
pub const MAX_UNIT_NAME_LEN: usize = 256;

/// Checks a unit name with fleet's rules (`docs/fleet-compat.md`): not empty,
/// at most [`MAX_UNIT_NAME_LEN`] characters, only `[0-9A-Za-z:_.@-]`, not
/// starting with `@`, a non-empty name before a `.suffix` that is one of
/// [`UNIT_SUFFIXES`], not ending in `.`, and a name with `@` must have one
/// of [`TEMPLATE_SUFFIXES`]. The error says which rule failed.
///
/// ```
/// use flotilla_units::unit_name::validate_unit_name;
/// assert!(validate_unit_name("web.service").is_ok());
/// assert!(validate_unit_name("ssh@.socket").is_ok());
/// assert_eq!(validate_unit_name("web").unwrap_err(), r#"unit name "web" has no suffix such as .service"#);
/// ```
pub fn validate_unit_name(name: &str) -> Result<(), String> {
    validate_with(name, FLEET_CHARS)
}

/// The characters of a fleet unit's name.
const FLEET_CHARS: &str = ":_.@-";

/// The characters of a systemd unit's name: fleet's and `\`, which
/// systemd's escaping writes (`dev-disk-by\x2duuid-….device`,
/// `systemd-fsck@dev-disk-by\x2duuid-….service`).
const SYSTEMD_CHARS: &str = ":_.@-\\";

/// [`validate_unit_name`] with systemd's characters: a name read from
/// systemd's search path, a device's or a dependency of a unit file may
/// hold `\` (docs/systemd-units.md, "Names").
///
/// ```
/// use flotilla_units::unit_name::{validate_systemd_unit_name, validate_unit_name};
/// assert!(validate_systemd_unit_name(r"dev-disk-by\x2duuid-1.device").is_ok());
/// assert!(validate_unit_name(r"dev-disk-by\x2duuid-1.device").is_err());
/// ```
pub fn validate_systemd_unit_name(name: &str) -> Result<(), String> {
    validate_with(name, SYSTEMD_CHARS)
}

fn validate_with(name: &str, chars: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("unit name is empty".to_string());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || chars.contains(*c)))
    {
        let shown: String = chars.chars().map(|c| format!(" {c}")).collect();
        return Err(format!(
            "unit name {name:?} contains {c:?} (allowed: A-Z a-z 0-9{shown})"
        ));
    }
    if name.len() > MAX_UNIT_NAME_LEN {
        return Err(format!(
            "unit name is longer than {MAX_UNIT_NAME_LEN} characters ({})",
            name.len()
        ));
    }
    if name.starts_with('@') {
        return Err(format!("unit name {name:?} starts with '@'"));
    }
    if name.ends_with('.') {
        return Err(format!("unit name {name:?} ends with '.'"));
    }
    let Some(dot) = name.rfind('.') else {
        return Err(format!("unit name {name:?} has no suffix such as .service"));
    };
    let suffix = &name[dot + 1..];
    if !UNIT_SUFFIXES.contains(&suffix) {
        return Err(format!(
            "unit name {name:?} has an unknown suffix .{suffix} (use one of {})",
            UNIT_SUFFIXES.join(", ")
        ));
    }
    if dot == 0 {
        return Err(format!("unit name {name:?} has nothing before the suffix"));
    }
    if name.contains('@') && !TEMPLATE_SUFFIXES.contains(&suffix) {
        return Err(format!(
            "unit name {name:?}: a template or instance must be a .path, .service, .socket, .target or .timer unit"
        ));
    }
    Ok(())
}

/// The parts of a unit name, as fleet's `UnitNameInfo` split it: the name
/// without suffix is everything before the last `.`; the prefix is what
/// comes before the first `@` in it, the instance what follows.
///
/// | full | `name` | `prefix` | `instance` | `template` |
/// | --- | --- | --- | --- | --- |
/// | `web.service` | `web` | `web` | `""` | `None` |
/// | `ssh@.service` | `ssh@` | `ssh` | `""` | `Some("ssh@.service")` |
/// | `ssh@2.service` | `ssh@2` | `ssh` | `"2"` | `Some("ssh@.service")` |
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnitName {
    /// The complete name, e.g. `ssh@2.service`.
    pub full: String,
    /// The name without its suffix, e.g. `ssh@2`.
    pub name: String,
    /// The part before `@` (the whole `name` without `@`), e.g. `ssh`.
    pub prefix: String,
    /// The part after `@` without the suffix, e.g. `2`; empty for templates
    /// and for names without `@`.
    pub instance: String,
    /// The suffix without the dot, e.g. `service` (empty without a dot).
    pub suffix: String,
    /// The template the name belongs to, for templates and instances, e.g.
    /// `ssh@.service`.
    pub template: Option<String>,
}

impl UnitName {
    /// Splits a name into its parts without validating it.
    pub fn split(full: &str) -> UnitName {
        let dot = full.rfind('.');
        let (name, suffix) = match dot {
            Some(dot) => (&full[..dot], &full[dot + 1..]),
            None => (full, ""),
        };
        let (prefix, instance, template) = match name.find('@') {
            // Without a suffix there is no template (fleet: not a unit name).
            Some(at) => (
                &name[..at],
                &name[at + 1..],
                dot.map(|_| format!("{}@.{suffix}", &name[..at])),
            ),
            None => (name, "", None),
        };
        UnitName {
            full: full.to_string(),
            name: name.to_string(),
            prefix: prefix.to_string(),
            instance: instance.to_string(),
            suffix: suffix.to_string(),
            template,
        }
    }

    /// Validates a name ([`validate_unit_name`]) and splits it.
    pub fn parse(full: &str) -> Result<UnitName, String> {
        validate_unit_name(full)?;
        Ok(UnitName::split(full))
    }

    /// True for a template, `name@.suffix`.
    pub fn is_template(&self) -> bool {
        self.template.is_some() && self.instance.is_empty()
    }

    /// True for an instance of a template, `name@inst.suffix`.
    pub fn is_instance(&self) -> bool {
        self.template.is_some() && !self.instance.is_empty()
    }

    /// The name of this template's instance `inst` (`None` if this is not a
    /// template).
    pub fn instantiate(&self, inst: &str) -> Option<String> {
        self.is_template()
            .then(|| format!("{}@{inst}.{}", self.prefix, self.suffix))
    }
}

/// True for a template name, `name@.suffix` (`foo@.service`).
pub fn is_template(name: &str) -> bool {
    UnitName::split(name).is_template()
}

/// True for an instance name, `name@inst.suffix` (`foo@1.service`).
pub fn is_instance(name: &str) -> bool {
    UnitName::split(name).is_instance()
}

/// The template an instance comes from: `foo@1.service` -> `foo@.service`;
/// `None` for templates themselves and for names without `@`.
pub fn template_of(name: &str) -> Option<String> {
    let n = UnitName::split(name);
    if n.is_instance() {
        n.template
    } else {
        None
    }
}

/// The instance part of an instance name: `foo@1.service` -> `1`; `None`
/// for templates and names without `@`.
pub fn instance(name: &str) -> Option<String> {
    let n = UnitName::split(name);
    n.is_instance().then_some(n.instance)
}

/// The prefix of a name: the part before `@`, or the name without its
/// suffix when there is no `@` (`foo@1.service` -> `foo`, `web.service` ->
/// `web`).
pub fn prefix(name: &str) -> String {
    UnitName::split(name).prefix
}

/// Checks a unit or target name: `[A-Za-z0-9:_.@-]+`.
pub fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b":_.@-".contains(&b))
}

/// Checks a name as a unit's or target's: [`valid_name`], or a systemd
/// unit's name, which may also hold `\` ([`validate_systemd_unit_name`]).
pub fn valid_systemd_name(s: &str) -> bool {
    valid_name(s) || validate_systemd_unit_name(s).is_ok()
}
