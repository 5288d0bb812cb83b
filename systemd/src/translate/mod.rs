//! The translation of a systemd `.service` unit into a [`UnitSpec`] (SPEC
//! §7). `docs/systemd-units.md` has the table of keys.

use super::parse::parse_checked;
use flotilla_units::diag::{Diagnostic, Pos};
use flotilla_units::exec::{parse_environment, parse_exec};
use flotilla_units::fleet::parse_bool;
use flotilla_units::fleet::UnitOption;
use flotilla_units::keys::{self, check, Rule, Slot};
use flotilla_units::load::ParsedUnit;
use flotilla_units::spec::{
    defaults, valid_systemd_name, Command, Origin, RestartPolicy, Signal, TargetList, UnitSpec,
    UnitType,
};
use flotilla_units::specifier::{replace_specifiers, SpecifierContext, SpecifierError};
use flotilla_units::timespan::{parse_timespan, TIMESPAN_INFINITY};
use flotilla_units::unit_name::{validate_systemd_unit_name, UnitName};
use std::path::{Path, PathBuf};
use std::time::Duration;

mod mount;
pub use mount::mounts_for;
mod rules;
mod unit;

pub use rules::service_section;

pub(crate) use unit::translate_at;

/// systemd's built-in `DefaultTimeoutStartSec=` and
/// `DefaultTimeoutStopSec=`, the timeouts of a translated unit that sets
/// none when the manager's settings set neither (`Tr::default_start`).
const SYSTEMD_DEFAULT_TIMEOUT: Duration = Duration::from_secs(90);

/// Parses `text` (the unit file `file`, with fleet's rules) and translates
/// it into the unit `unit_name` (the file's name without its directory, e.g.
/// `web.service`). Parse problems and translation problems come together in
/// file order; the spec is `None` when any of them is an error.
///
/// ```
/// use flotilla_systemd::translate_file;
/// use flotilla_units::spec::UnitType;
/// let p = translate_file("units/web.service", "web.service",
///     "[Unit]\nDescription=Web\nRequires=db.service\nAfter=db.service\n\n[Service]\nExecStart=/usr/bin/web --port 80\nRestart=always\n");
/// assert!(p.diagnostics.is_empty());
/// let spec = p.spec.unwrap();
/// assert_eq!(spec.kind, UnitType::ForegroundSupervised);
/// assert_eq!(spec.exec_start.unwrap().argv, ["/usr/bin/web", "--port", "80"]);
/// assert_eq!(spec.depends_on, ["db.service"]);
/// assert_eq!(spec.provides, ["web.service"]);
/// ```
pub fn translate_file(file: &str, unit_name: &str, text: &str) -> ParsedUnit {
    translate_file_with(&SpecifierContext::system(""), file, unit_name, text)
}

/// [`translate_file`] with the machine's facts for the specifiers (`%H`,
/// `%m`, `%b` …): `facts` is a [`SpecifierContext`] whose unit is set
/// here (to `unit_name`, and `%y` to `file`). A specifier whose fact is
/// not known is left as written, with a warning.
pub fn translate_file_with(
    facts: &SpecifierContext,
    file: &str,
    unit_name: &str,
    text: &str,
) -> ParsedUnit {
    let (unit, mut diags) = parse_checked(file, text);
    let mut parsed = translate_at(
        facts,
        file,
        unit_name,
        &unit.options,
        &unit.positions,
        Pos::new(1, 1),
    );
    diags.append(&mut parsed.diagnostics);
    diags.sort_by_key(|d| d.pos);
    if diags.iter().any(Diagnostic::is_error) {
        parsed.spec = None;
    }
    parsed.diagnostics = diags;
    parsed
}

/// Translates an option list (e.g. a fleet unit's options from etcd) into
/// the unit `unit_name`. Diagnostics name `file` without positions.
/// fleet runs a unit where the cluster schedules it: its `[Install]`
/// section (which `initctl enable` reads for a local unit) means nothing
/// there, and says so once.
pub fn translate(file: &str, unit_name: &str, options: &[UnitOption]) -> ParsedUnit {
    translate_with(&SpecifierContext::system(""), file, unit_name, options)
}

/// [`translate`] with the machine's facts for the specifiers (the
/// machine the unit runs on: `%H`, `%m`, `%b` …).
pub fn translate_with(
    facts: &SpecifierContext,
    file: &str,
    unit_name: &str,
    options: &[UnitOption],
) -> ParsedUnit {
    let mut parsed = translate_at(facts, file, unit_name, options, &[], Pos::default());
    if options.iter().any(|o| o.section == "Install") {
        parsed.diagnostics.push(Diagnostic::warning(
            file,
            Pos::default(),
            "[Install] is ignored: a fleet unit runs where the cluster schedules it",
        ));
    }
    parsed
}

/// Whether the unit search path loads units of this kind (by the name's
/// suffix): services, targets, timers, sockets, paths, mounts, slices and
/// scopes; the others (devices, swaps, …) are listed as not supported.
pub fn translatable(unit_name: &str) -> bool {
    TRANSLATED_SUFFIXES.contains(&UnitName::split(unit_name).suffix.as_str())
}

/// systemd's booleans: fleet's ([`parse_bool`]) plus `y` and `n`.
fn sd_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "y" => Some(true),
        "n" => Some(false),
        _ => parse_bool(v),
    }
}

/// A timeout: `0` means none, as in systemd.
fn timeout(v: &str) -> Result<Duration, String> {
    parse_timespan(v).map(|d| if d.is_zero() { TIMESPAN_INFINITY } else { d })
}

struct Dep {
    name: String,
    pos: Pos,
}

struct Tr<'a> {
    file: &'a str,
    unit: &'a str,
    /// The unit's type.
    kind: UnitType,
    /// What specifiers resolve to for this unit.
    specifiers: SpecifierContext,
    diags: Vec<Diagnostic>,
    /// The positions of the entries of the unit's lists of targets.
    origin: Origin,
}

impl Tr<'_> {
    /// The start timeout of a unit that sets none: the manager's
    /// `DefaultTimeoutStartSec=`, else systemd's built-in one.
    fn default_start(&self) -> Duration {
        (self.specifiers.default_timeout_start).unwrap_or(SYSTEMD_DEFAULT_TIMEOUT)
    }

    /// Likewise the stop timeout (`DefaultTimeoutStopSec=`).
    fn default_stop(&self) -> Duration {
        (self.specifiers.default_timeout_stop).unwrap_or(SYSTEMD_DEFAULT_TIMEOUT)
    }

    fn warn(&mut self, pos: Pos, msg: impl Into<String>) {
        self.diags.push(Diagnostic::warning(self.file, pos, msg));
    }

    fn error(&mut self, pos: Pos, msg: impl Into<String>) {
        self.diags.push(Diagnostic::error(self.file, pos, msg));
    }

    /// The value as systemd sees it: continuation lines joined (fleet keeps
    /// `\` and the newline; systemd turns them into a space), trimmed,
    /// specifiers expanded. A specifier whose fact is not known here is
    /// left as written, with a warning; one systemd does not define, or an
    /// instance name `%I`/`%P`/`%f` cannot unescape, is an error (the value
    /// would not be what the file means).
    fn value(&mut self, pos: Pos, key: &str, raw: &str) -> String {
        let joined = raw.replace("\\\n", " ");
        let mut problems: Vec<SpecifierError> = Vec::new();
        let expanded: Result<String, std::convert::Infallible> =
            replace_specifiers(joined.trim(), |c| {
                Ok(match self.specifiers.resolve(c) {
                    Ok(v) => v,
                    Err(e) => {
                        if !problems.contains(&e) {
                            problems.push(e);
                        }
                        std::borrow::Cow::Owned(format!("%{c}"))
                    }
                })
            });
        for e in problems {
            match e {
                SpecifierError::Unavailable(..) => {
                    self.warn(pos, format!("{key}=: {e}; left as is"))
                }
                _ => self.error(pos, format!("invalid {key}=: {e}")),
            }
        }
        match expanded {
            Ok(v) => v,
            Err(never) => match never {},
        }
    }

    fn commands(&mut self, pos: Pos, key: &str, value: &str) -> Vec<Command> {
        match parse_exec(value) {
            Ok((cmds, corrected)) => {
                if corrected {
                    self.warn(
                        pos,
                        format!("{key}=: invalid escape sequences kept as written, as systemd corrects them"),
                    );
                }
                cmds
            }
            Err(e) => {
                self.error(pos, format!("invalid {key}=: {e}"));
                Vec::new()
            }
        }
    }

    fn deps(&mut self, out: &mut Vec<Dep>, pos: Pos, key: &str, value: &str) {
        for name in value.split_whitespace() {
            if !valid_systemd_name(name) {
                self.error(pos, format!("invalid unit name {name:?} in {key}="));
            } else if let Some(kind) = unrun_kind(name) {
                // A slice, swap, … is there without a unit under flotilla
                // (the kernel, the fstab unit make them): a dependency on
                // one would wait for a unit that never is.
                self.warn(
                    pos,
                    format!("{key}={name}: flotilla runs no .{kind} units, left out"),
                );
            } else if name == self.unit {
                if key == "After" {
                    continue; // ordering against itself: meaningless, as systemd ignores it
                }
                self.warn(
                    pos,
                    format!("{key}={name}: a unit cannot depend on itself, ignored"),
                );
            } else {
                out.push(Dep {
                    name: name.to_string(),
                    pos,
                });
            }
        }
    }

    fn absolute(&mut self, pos: Pos, key: &str, path: &str) -> Option<PathBuf> {
        if Path::new(path).is_absolute() {
            Some(PathBuf::from(path))
        } else {
            self.error(pos, format!("{key}= needs an absolute path, not {path:?}"));
            None
        }
    }
}

/// The kinds of unit flotilla does not run, which a dependency may name
/// (`Wants=system.slice`, `Requires=x.swap`): the suffix of `name` if it
/// is one of them. A `.mount` or `.device` is kept: the graph counts one
/// that no unit defines as met, but for a device while udev runs, whose
/// plugged devices the init makes units of (`graph/build.rs`).
fn unrun_kind(name: &str) -> Option<&str> {
    let (_, suffix) = name.rsplit_once('.')?;
    ["automount", "swap", "slice", "scope"]
        .contains(&suffix)
        .then_some(suffix)
}

/// The keys of one command (`ExecStop=`, `ExecReload=`): each command
/// given, in order, with its position, until the end decides.
type Singles = Vec<(&'static keys::Key, String, Vec<(Command, Pos)>)>;

impl Tr<'_> {
    /// `key=v`, the twin of the YAML key `twin`, read by the kind of its
    /// value as systemd reads it: an empty value resets the setting, a
    /// list grows with each assignment.
    fn twin(
        &mut self,
        spec: &mut UnitSpec,
        singles: &mut Singles,
        twin: &'static keys::Key,
        p: Pos,
        key: &str,
        v: &str,
    ) {
        match (twin.slot)(spec) {
            Slot::Text(f) => *f = (!v.is_empty()).then(|| v.to_string()),
            Slot::Commands(f) => {
                if v.is_empty() {
                    f.clear();
                }
                let cs = self.commands(p, key, v);
                f.extend(cs);
            }
            Slot::Command(_) => {
                let at = match singles.iter().position(|(k, _, _)| std::ptr::eq(*k, twin)) {
                    Some(at) => at,
                    None => {
                        singles.push((twin, key.to_string(), Vec::new()));
                        singles.len() - 1
                    }
                };
                if v.is_empty() {
                    singles[at].2.clear();
                }
                for c in self.commands(p, key, v) {
                    singles[at].2.push((c, p));
                }
            }
            Slot::Account(f) => {
                *f = None;
                match check::account(v) {
                    _ if v.is_empty() => {}
                    Ok(()) => *f = Some(v.to_string()),
                    Err(why) => self.error(p, format!("invalid {key}={v}: {why}")),
                }
            }
            Slot::Path(f) => {
                *f = None;
                if !v.is_empty() {
                    *f = self.absolute(p, key, v);
                }
            }
            Slot::Signal(f) => {
                if v.is_empty() {
                    *f = Signal::TERM;
                } else {
                    match Signal::parse(v) {
                        Some(s) => *f = s,
                        None => self.error(p, format!("invalid {key}={v}")),
                    }
                }
            }
            Slot::OptionalSignal(f) => {
                if v.is_empty() {
                    *f = None;
                } else {
                    match Signal::parse(v) {
                        Some(s) => *f = Some(s),
                        None => self.error(p, format!("invalid {key}={v}")),
                    }
                }
            }
            Slot::Environment(env) => {
                if v.is_empty() {
                    env.clear();
                }
                match parse_environment(v) {
                    Ok(entries) => {
                        for e in entries {
                            match e {
                                Ok((k, val)) => {
                                    env.insert(k, val);
                                }
                                Err(w) => self.warn(
                                    p,
                                    format!(
                                        "{key}=: {w:?} is not a NAME=value assignment, ignored"
                                    ),
                                ),
                            }
                        }
                    }
                    Err(e) => self.error(p, format!("invalid {key}=: {e}")),
                }
            }
            Slot::Bool(f) => match v {
                "" => *f = None,
                _ => match sd_bool(v) {
                    Some(b) => *f = Some(b),
                    None => self.error(p, format!("invalid {key}={v}: not a boolean")),
                },
            },
            Slot::ExitSet(set) => {
                if let Err(e) = set.assign(v) {
                    self.error(p, format!("invalid {key}={v}: {e}"));
                }
            }
            Slot::Action(f) => match flotilla_units::spec::UnitAction::parse(v) {
                Ok(a) => *f = a,
                Err(e) => self.error(p, format!("invalid {key}={v}: {e}")),
            },
            Slot::EnvironmentFiles(files) => {
                if v.is_empty() {
                    files.clear();
                } else {
                    let (path, optional) = match v.strip_prefix('-') {
                        Some(rest) => (rest.trim_start(), true),
                        None => (v, false),
                    };
                    if let Some(path) = self.absolute(p, key, path) {
                        files.push((path, optional));
                    }
                }
            }
            // A time span (systemd's syntax), kept as given: what 0 or
            // infinity means is the key's (e.g. `UnitSpec::watchdog`).
            Slot::OptionalDuration(f) => {
                *f = None;
                if !v.is_empty() {
                    match parse_timespan(v) {
                        Ok(d) => *f = Some(d),
                        Err(e) => self.error(p, format!("invalid {key}={v}: {e}")),
                    }
                }
            }
            Slot::Count(f) => {
                *f = None;
                if !v.is_empty() {
                    match check::count(v) {
                        Ok(n) => *f = Some(n),
                        Err(why) => self.error(p, format!("invalid {key}={v}: {why}")),
                    }
                }
            }
            Slot::Targets(list, which) => self.targets(list, which, p, key, v),
            Slot::Trigger(f, name) => {
                if let Err(why) = flotilla_units::trigger::set(f, self.kind, name, v) {
                    self.error(p, format!("invalid {key}={v}: {why}"));
                }
            }
            Slot::Condition(list, kind, assert) => {
                match flotilla_units::condition::parse_value(kind, assert, v) {
                    Ok(Some(c)) => list.push(c),
                    Ok(None) => list.clear(),
                    Err(why) => self.error(p, format!("invalid {key}={v}: {why}")),
                }
            }
            // These kinds have no systemd twin read this way (their keys
            // are read by rules of their own, `rules::OWN`).
            Slot::Name(_)
            | Slot::Type(_)
            | Slot::Duration(_)
            | Slot::Timeout(_)
            | Slot::Regex(_)
            | Slot::BusName(_)
            | Slot::Restart(_)
            | Slot::Integer(_) => {
                let (sec, _) = twin.systemd.first().copied().unwrap_or(("Service", key));
                self.warn(p, format!("[{sec}] {key}= is not supported, ignored"));
            }
        }
    }

    /// `key=v` naming units (`After=`, `Before=`, `Conflicts=`; a
    /// trigger's `Unit=` or `Service=`): names separated by blanks, added
    /// to the list (a trigger's one unit is replaced), each with its
    /// position. A name the unit's own is ignored.
    fn targets(
        &mut self,
        list: &mut flotilla_units::spec::Names,
        which: TargetList,
        p: Pos,
        key: &str,
        v: &str,
    ) {
        if which == TargetList::Triggers {
            list.clear();
            self.origin.set_positions(which, []);
            if v.split_whitespace().count() > 1 {
                self.error(p, format!("invalid {key}={v}: one unit name"));
                return;
            }
            if let Err(e) = validate_systemd_unit_name(v) {
                self.error(p, format!("invalid {key}={v}: {e}"));
                return;
            }
        }
        for name in v.split_whitespace() {
            if !valid_systemd_name(name) {
                self.error(p, format!("invalid unit name {name:?} in {key}="));
            } else if name == self.unit {
                // Ordering against itself is meaningless; systemd ignores it.
                if which != TargetList::After && which != TargetList::Before {
                    self.warn(p, format!("{key}={name}: the unit itself, ignored"));
                }
            } else if !list.iter().any(|n| n == name) {
                list.push(name.to_string());
                self.origin.push_position(which, p);
            }
        }
    }

    /// The rules across keys ([`keys::RULES`]) in systemd's words: a key
    /// every process needs is missing from the unit; one a type needs is
    /// missing from the `Type=`.
    fn rules(
        &mut self,
        spec: &UnitSpec,
        type_pos: Option<Pos>,
        type_value: &str,
        restart_at: &Option<(String, Pos)>,
    ) {
        let mut probe = spec.clone();
        for rule in keys::RULES {
            match *rule {
                // systemd guesses a forking daemon's main PID when it
                // has no PIDFile=: the unit's one process left.
                Rule::Needs(_, "pidfile", _) => {}
                Rule::Needs(types, name, _) if types.contains(&spec.kind) => {
                    let Some(key) = keys::key(name) else { continue };
                    let given = match (key.slot)(&mut probe) {
                        Slot::Command(c) => c.is_some(),
                        Slot::Path(p) => p.is_some(),
                        _ => true,
                    };
                    let Some(&(sec, sd)) = key.systemd.first() else {
                        continue;
                    };
                    if given {
                        continue;
                    }
                    if types == keys::SPAWNING {
                        self.error(Pos::default(), format!("[{sec}] has no {sd}="));
                    } else {
                        self.error(
                            type_pos.unwrap_or_default(),
                            format!("Type={type_value} needs {sd}="),
                        );
                    }
                }
                Rule::NoRestart(kind, policy) if kind == spec.kind && spec.restart == policy => {
                    if let Some((v, p)) = restart_at {
                        self.error(
                            *p,
                            format!("Restart={v} is not allowed with Type={type_value}"),
                        );
                    }
                }
                // The rule is not this unit's (another type, another
                // policy) or not about a missing key.
                Rule::Needs(..) | Rule::NoRestart(..) => {}
                // YAML's two ways of readiness; no systemd key feeds both.
                Rule::Exclusive(..) => {}
            }
        }
    }
}

/// The unit types a suffix translates to (a `.service`'s is its
/// `Type=`'s), and the suffixes that translate.
fn suffix_kind(suffix: &str) -> Option<UnitType> {
    UnitType::of_systemd_suffix(suffix)
}

/// The suffixes of the unit files flotilla reads (a `.scope`'s only from
/// `/run/systemd/transient`, the file of a scope made over D-Bus).
pub const TRANSLATED_SUFFIXES: [&str; 8] = [
    "service", "target", "timer", "socket", "path", "mount", "slice", "scope",
];

#[cfg(test)]
mod tests;
