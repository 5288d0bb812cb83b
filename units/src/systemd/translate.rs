//! The translation of a systemd `.service` unit into a [`UnitSpec`] (SPEC
//! §7). `docs/systemd-units.md` has the table of keys.

use super::exec::{parse_environment, parse_exec, ExecCommand};
use super::fleet::parse_bool;
use super::name::{expand_specifiers_noting, validate_unit_name, UnitName};
use super::parse::parse_checked;
use super::timespan::{parse_timespan, TIMESPAN_INFINITY};
use super::UnitOption;
use crate::diag::{Diagnostic, Pos};
use crate::keys::{self, check, Rule, Slot};
use crate::load::ParsedUnit;
use crate::spec::{
    defaults, valid_name, Command, Origin, RestartPolicy, Signal, TargetList, UnitSpec, UnitType,
};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// systemd's `DefaultTimeoutStartSec=` and `DefaultTimeoutStopSec=`, the
/// timeouts of a translated unit that sets none.
const SYSTEMD_DEFAULT_TIMEOUT: Duration = Duration::from_secs(90);

/// Parses `text` (the unit file `file`, with fleet's rules) and translates
/// it into the unit `unit_name` (the file's name without its directory, e.g.
/// `web.service`). Parse problems and translation problems come together in
/// file order; the spec is `None` when any of them is an error.
///
/// ```
/// use flotilla_units::systemd::translate_file;
/// use flotilla_units::spec::UnitType;
/// let p = translate_file("units/web.service", "web.service",
///     "[Unit]\nDescription=Web\nRequires=db.service\nAfter=db.service\n\n[Service]\nExecStart=/usr/bin/web --port 80\nRestart=always\n");
/// assert!(p.diagnostics.is_empty());
/// let spec = p.spec.unwrap();
/// assert_eq!(spec.kind, UnitType::ForegroundSupervised);
/// assert_eq!(*spec.exec_start.unwrap().argv, ["/usr/bin/web", "--port", "80"]);
/// assert_eq!(spec.depends_on, ["db.service"]);
/// assert_eq!(spec.provides, ["web.service"]);
/// ```
pub fn translate_file(file: &str, unit_name: &str, text: &str) -> ParsedUnit {
    let (unit, mut diags) = parse_checked(file, text);
    let mut parsed = translate_at(
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
pub fn translate(file: &str, unit_name: &str, options: &[UnitOption]) -> ParsedUnit {
    translate_at(file, unit_name, options, &[], Pos::default())
}

/// The systemd keys the translator reads by a rule of its own: their value
/// means something else than the YAML key they feed (if any), or they feed
/// none and are warned about specifically. Every other key it reads is the
/// twin of a YAML key in [`keys::KEYS`], read by the kind of its value
/// ([`Tr::twin`]); any key that is neither gets the generic "is not
/// supported" warning.
const SPECIAL: [(&str, &str); 18] = [
    ("Unit", "Documentation"),
    ("Unit", "Requires"),
    ("Unit", "BindsTo"),
    ("Unit", "Wants"),
    ("Unit", "After"),
    ("Unit", "Before"),
    ("Unit", "DefaultDependencies"),
    ("Service", "Type"),
    ("Service", "ExecStart"),
    ("Service", "Restart"),
    ("Service", "RestartSec"),
    ("Service", "TimeoutStartSec"),
    ("Service", "TimeoutStopSec"),
    ("Service", "TimeoutSec"),
    ("Service", "WorkingDirectory"),
    ("Service", "KillMode"),
    ("Service", "PIDFile"),
    ("Service", "RemainAfterExit"),
];

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
    key: &'static str,
}

struct Tr<'a> {
    file: &'a str,
    unit: &'a str,
    diags: Vec<Diagnostic>,
}

impl Tr<'_> {
    fn warn(&mut self, pos: Pos, msg: impl Into<String>) {
        self.diags.push(Diagnostic::warning(self.file, pos, msg));
    }

    fn error(&mut self, pos: Pos, msg: impl Into<String>) {
        self.diags.push(Diagnostic::error(self.file, pos, msg));
    }

    /// The value as systemd sees it: continuation lines joined (fleet keeps
    /// `\` and the newline; systemd turns them into a space), trimmed,
    /// specifiers expanded (unsupported ones warned about).
    fn value(&mut self, pos: Pos, key: &str, raw: &str) -> String {
        let joined = raw.replace("\\\n", " ");
        let mut unknown: Vec<char> = Vec::new();
        let v = expand_specifiers_noting(joined.trim(), self.unit, &mut |c| {
            if !unknown.contains(&c) {
                unknown.push(c)
            }
        });
        for c in unknown {
            self.warn(
                pos,
                format!("{key}=: specifier %{c} is not supported, left as is (supported: %n %N %p %P %i %I %%)"),
            );
        }
        v
    }

    fn commands(&mut self, pos: Pos, key: &str, value: &str) -> Vec<Command> {
        match parse_exec(key, value) {
            Ok(cmds) => cmds
                .into_iter()
                .map(|ExecCommand { command, warnings }| {
                    for w in warnings {
                        self.warn(pos, w);
                    }
                    command
                })
                .collect(),
            Err(e) => {
                self.error(pos, format!("invalid {key}=: {e}"));
                Vec::new()
            }
        }
    }

    fn deps(&mut self, out: &mut Vec<Dep>, pos: Pos, key: &'static str, value: &str) {
        for name in value.split_whitespace() {
            if !valid_name(name) {
                self.error(pos, format!("invalid unit name {name:?} in {key}="));
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
                    key,
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
            // These kinds have no systemd twin read this way (their keys
            // are in SPECIAL).
            Slot::Name(_)
            | Slot::Type(_)
            | Slot::Targets(..)
            | Slot::OptionalDuration(_)
            | Slot::Duration(_)
            | Slot::Timeout(_)
            | Slot::Regex(_)
            | Slot::Restart(_) => {
                let (sec, _) = twin.systemd.first().copied().unwrap_or(("Service", key));
                self.warn(p, format!("[{sec}] {key}= is not supported, ignored"));
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
                    if types == keys::PROCESS {
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
                _ => {}
            }
        }
    }
}

fn translate_at(
    file: &str,
    unit_name: &str,
    options: &[UnitOption],
    positions: &[Pos],
    origin_pos: Pos,
) -> ParsedUnit {
    let mut t = Tr {
        file,
        unit: unit_name,
        diags: Vec::new(),
    };
    let pos = |i: usize| positions.get(i).copied().unwrap_or_default();
    let nowhere = Pos::default();

    // The name: a valid fleet name, a service, not a template.
    match validate_unit_name(unit_name) {
        Err(e) => t.error(nowhere, format!("invalid unit name: {e}")),
        Ok(()) => {
            let n = UnitName::split(unit_name);
            if n.suffix != "service" {
                t.error(
                    nowhere,
                    format!("only .service units can be translated, not {unit_name}"),
                );
            } else if n.is_template() {
                t.error(
                    nowhere,
                    format!(
                        "{unit_name} is a template: run an instance such as {}@NAME.service",
                        n.prefix
                    ),
                );
            }
        }
    }

    // The type first: other keys depend on it. The last Type= wins.
    let type_index = options
        .iter()
        .rposition(|o| o.section == "Service" && o.name == "Type");
    let type_value = type_index
        .map(|i| options[i].value.trim().to_string())
        .unwrap_or_default();
    let kind = match type_value.as_str() {
        "notify" | "notify-reload" => UnitType::ForegroundNotified,
        "forking" => UnitType::BackgroundPidfile,
        "oneshot" => UnitType::Oneshot,
        _ => UnitType::ForegroundSupervised,
    };
    let mut spec = UnitSpec::new(unit_name, kind);
    spec.restart = RestartPolicy::No;
    spec.stop_timeout = SYSTEMD_DEFAULT_TIMEOUT;
    // systemd: a oneshot has no start timeout unless it sets one.
    let start_default = if kind == UnitType::Oneshot {
        TIMESPAN_INFINITY
    } else {
        SYSTEMD_DEFAULT_TIMEOUT
    };
    spec.start_timeout = start_default;

    let mut exec_start: Vec<(Command, Pos)> = Vec::new();
    let mut singles: Singles = Vec::new();
    let mut requires: Vec<Dep> = Vec::new();
    let mut wants: Vec<Dep> = Vec::new();
    let mut after: Vec<Dep> = Vec::new();
    let mut pidfile: Option<PathBuf> = None;
    let mut restart_sec: Option<Duration> = None;
    let mut restart_at: Option<(String, Pos)> = None;
    let mut install_warned = false;

    for (i, o) in options.iter().enumerate() {
        let p = pos(i);
        let (sec, key) = (o.section.as_str(), o.name.as_str());
        // systemd ignores X- sections and keys by design; [X-Fleet] is the
        // cluster's.
        if sec.starts_with("X-") || key.starts_with("X-") {
            continue;
        }
        if sec == "Install" {
            if !install_warned {
                t.warn(
                    p,
                    "[Install] is ignored: a unit runs when the target requires it",
                );
                install_warned = true;
            }
            continue;
        }
        let special = SPECIAL.contains(&(sec, key));
        let twin = keys::systemd_twin(sec, key).filter(|_| !special);
        if !special && twin.is_none() {
            t.warn(p, format!("[{sec}] {key}= is not supported, ignored"));
            continue;
        }
        let v = t.value(p, key, &o.value);
        let v = v.as_str();
        if let Some(twin) = twin {
            t.twin(&mut spec, &mut singles, twin, p, key, v);
            continue;
        }
        match (sec, key) {
            ("Unit", "Documentation") => {}
            ("Unit", "Requires") => t.deps(&mut requires, p, "Requires", v),
            ("Unit", "BindsTo") => t.deps(&mut requires, p, "BindsTo", v),
            ("Unit", "Wants") => t.deps(&mut wants, p, "Wants", v),
            ("Unit", "After") => t.deps(&mut after, p, "After", v),
            ("Unit", "Before") => t.warn(
                p,
                "[Unit] Before= is not supported, ignored (give the other unit After= and Wants= or Requires=)",
            ),
            ("Unit", "DefaultDependencies") => match sd_bool(v) {
                Some(false) => {}
                Some(true) => t.warn(
                    p,
                    "[Unit] DefaultDependencies=yes is ignored: flotilla adds no implicit dependencies",
                ),
                None => t.error(p, format!("invalid DefaultDependencies={v}: not a boolean")),
            },
            ("Service", "Type") => match v {
                "" | "simple" | "exec" | "idle" | "notify" | "forking" | "oneshot" => {}
                "dbus" => t.warn(
                    p,
                    "Type=dbus is run as foreground-supervised: readiness on BusName= is not supported",
                ),
                "notify-reload" => t.warn(
                    p,
                    "Type=notify-reload is run as foreground-notified: reloading by signal is not supported",
                ),
                _ => t.error(p, format!("invalid Type={v} (simple, exec, notify, forking, oneshot, idle)")),
            },
            ("Service", "ExecStart") => {
                if v.is_empty() {
                    exec_start.clear();
                }
                for c in t.commands(p, key, v) {
                    exec_start.push((c, p));
                }
            }
            ("Service", "Restart") => {
                let policy = match v {
                    "" | "no" => Some(RestartPolicy::No),
                    "on-failure" => Some(RestartPolicy::OnFailure),
                    "on-abnormal" | "on-abort" | "on-watchdog" => {
                        t.warn(p, format!("Restart={v} is run as on-failure (restart after any failure)"));
                        Some(RestartPolicy::OnFailure)
                    }
                    "always" => Some(RestartPolicy::Always),
                    "on-success" => {
                        t.warn(p, "Restart=on-success is run as always (restart after any exit)");
                        Some(RestartPolicy::Always)
                    }
                    _ => {
                        t.error(
                            p,
                            format!(
                                "invalid Restart={v} (no, on-success, on-failure, on-abnormal, on-watchdog, on-abort, always)"
                            ),
                        );
                        None
                    }
                };
                if let Some(policy) = policy {
                    spec.restart = policy;
                    restart_at = Some((v.to_string(), p));
                }
            }
            ("Service", "RestartSec") => {
                if v.is_empty() {
                    restart_sec = None;
                } else {
                    match parse_timespan(v) {
                        Ok(d) => restart_sec = Some(d),
                        Err(e) => t.error(p, format!("invalid RestartSec={v}: {e}")),
                    }
                }
            }
            ("Service", "TimeoutStartSec" | "TimeoutStopSec" | "TimeoutSec") => {
                // Empty: back to the defaults; 0 or infinity: no timeout.
                let (start, stop) = if v.is_empty() {
                    (start_default, SYSTEMD_DEFAULT_TIMEOUT)
                } else {
                    match timeout(v) {
                        Ok(d) => (d, d),
                        Err(e) => {
                            t.error(p, format!("invalid {key}={v}: {e}"));
                            continue;
                        }
                    }
                };
                if key != "TimeoutStopSec" {
                    spec.start_timeout = start;
                }
                if key != "TimeoutStartSec" {
                    spec.stop_timeout = stop;
                }
            }
            ("Service", "WorkingDirectory") => {
                spec.extras.working_directory = None;
                let path = match v.strip_prefix('-') {
                    Some(rest) => {
                        t.warn(p, "WorkingDirectory=-: a missing directory is not ignored, it fails the start");
                        rest
                    }
                    None => v,
                };
                if path == "~" {
                    t.warn(p, "WorkingDirectory=~ (the user's home directory) is not supported, ignored");
                } else if !path.is_empty() {
                    spec.extras.working_directory = t.absolute(p, key, path);
                }
            }
            ("Service", "KillMode") => match v {
                "" | "control-group" => {}
                "process" | "mixed" | "none" => t.warn(
                    p,
                    format!("KillMode={v} is not supported: a stop signals the unit's whole process group"),
                ),
                _ => t.error(p, format!("invalid KillMode={v} (control-group, mixed, process, none)")),
            },
            ("Service", "PIDFile") => {
                if kind != UnitType::BackgroundPidfile {
                    t.warn(p, "PIDFile= is used only with Type=forking, ignored");
                } else if v.is_empty() {
                    pidfile = None;
                } else if Path::new(v).is_absolute() {
                    pidfile = Some(PathBuf::from(v));
                } else {
                    // systemd: a relative PIDFile= is under /run.
                    pidfile = Some(Path::new("/run").join(v));
                }
            }
            ("Service", "RemainAfterExit") => match sd_bool(v) {
                Some(true) if kind != UnitType::Oneshot => {
                    t.warn(p, "RemainAfterExit=yes is supported only with Type=oneshot, ignored")
                }
                Some(_) => {}
                None => t.error(p, format!("invalid RemainAfterExit={v}: not a boolean")),
            },
            // Not in SPECIAL: read above.
            _ => {}
        }
    }

    // The main command.
    // None: [`Tr::rules`].
    match exec_start.len() {
        0 | 1 => {}
        _ if kind != UnitType::Oneshot => t.error(
            exec_start[1].1,
            "more than one ExecStart= command: only Type=oneshot may have several",
        ),
        _ => {
            for (_, p) in &exec_start[1..] {
                t.warn(*p, "ExecStart= ignored: flotilla runs only the first ExecStart= command of a oneshot");
            }
        }
    }
    spec.exec_start = exec_start.first().map(|(c, _)| c.clone());
    // A key of one command: the first one, the others warned about.
    for (key, name, list) in singles {
        for (_, p) in list.iter().skip(1) {
            t.warn(
                *p,
                format!("{name}= ignored: only the first {name}= command is used"),
            );
        }
        if let Slot::Command(f) = (key.slot)(&mut spec) {
            *f = list.into_iter().next().map(|(c, _)| c);
        }
    }
    if kind == UnitType::BackgroundPidfile {
        spec.pidfile = pidfile;
    }
    t.rules(&spec, type_index.map(pos), &type_value, &restart_at);
    if let Some(d) = restart_sec {
        spec.restart_delay = d;
        spec.restart_max_delay = d.max(defaults::RESTART_MAX_DELAY);
    }

    // Dependencies: Requires=/BindsTo= are hard, Wants= orders and pulls in;
    // After= of one of them is implied, any other After= cannot be honoured.
    let mut origin = Origin::at(file, origin_pos);
    for d in &requires {
        if !spec.depends_on.contains(&d.name) {
            spec.depends_on.push(d.name.clone());
            origin.positions_mut(TargetList::DependsOn).push(d.pos);
        }
    }
    for d in &wants {
        if !spec.depends_on.contains(&d.name) && !spec.waits_for.contains(&d.name) {
            spec.waits_for.push(d.name.clone());
            origin.positions_mut(TargetList::WaitsFor).push(d.pos);
        }
    }
    for d in &after {
        if !spec.depends_on.contains(&d.name) && !spec.waits_for.contains(&d.name) {
            t.warn(
                d.pos,
                format!(
                    "{}={} is ignored: flotilla orders only after dependencies (add Wants={} or Requires={})",
                    d.key, d.name, d.name, d.name
                ),
            );
        }
    }

    // The unit also passes the table's own checks, the ones a transient
    // unit gets, so that no reader lets through what another refuses (a NUL
    // in a Description= would otherwise reach `status`).
    let spec = if t.diags.iter().any(Diagnostic::is_error) {
        None
    } else {
        match keys::validate(spec) {
            Ok(valid) => Some(valid),
            Err(problems) => {
                for problem in problems {
                    let twins = keys::key(problem.key).map_or(&[][..], |k| k.systemd);
                    let at = options
                        .iter()
                        .rposition(|o| twins.contains(&(o.section.as_str(), o.name.as_str())))
                        .map_or(origin_pos, pos);
                    t.error(at, problem.to_string());
                }
                None
            }
        }
    };

    let mut diags = t.diags;
    diags.sort_by_key(|d| d.pos);
    ParsedUnit {
        spec,
        origin,
        diagnostics: diags,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key in SPECIAL has its own arm and every twin of a YAML key is
    /// read: none of them gets the generic warning, and a key outside both
    /// does.
    #[test]
    fn handled_keys_are_read() {
        let twins = keys::KEYS.iter().flat_map(|k| k.systemd.iter().copied());
        for (sec, key) in SPECIAL.into_iter().chain(twins) {
            let text = format!("[{sec}]\n{key}=\n[Service]\nExecStart=/bin/x\n");
            let p = translate_file("f", "a.service", &text);
            let generic = format!("[{sec}] {key}= is not supported, ignored");
            assert!(
                p.diagnostics.iter().all(|d| d.message != generic),
                "{sec} {key}: {:?}",
                p.diagnostics
            );
        }
        let p = translate_file("f", "a.service", "[Service]\nExecStart=/bin/x\nNice=5\n");
        assert_eq!(
            p.diagnostics[0].message,
            "[Service] Nice= is not supported, ignored"
        );
    }
}
