//! One YAML unit file: from the node tree to a validated [`UnitSpec`],
//! key by key through the table of keys ([`crate::keys::KEYS`]); the
//! readers of each kind of value are in `read.rs`.

use super::yaml::{self, known_entries, suggest, Entry, Sink, Value};
use super::ParsedUnit;
use crate::diag::Pos;
use crate::duration::format_duration;
use crate::keys::check;
use crate::keys::{Rule, Slot, KEYS, NAME_ALIAS, RULES};
use crate::spec::{Origin, Ready, TargetList, UnitSpec, UnitType};
use std::path::Path;

/// The keys of [`KEYS`] a YAML unit file may have, in the order the docs
/// list them, with `name` (the alias of `unit`) after `unit`; with the
/// keys of the service context, they are [`crate::keys::yaml_names`].
pub const UNIT_KEYS: [&str; KEYS.len() + 1] = unit_keys();

const fn unit_keys() -> [&'static str; KEYS.len() + 1] {
    let mut out = [""; KEYS.len() + 1];
    out[0] = KEYS[0].name;
    out[1] = NAME_ALIAS;
    let mut i = 1;
    while i < KEYS.len() {
        out[i + 1] = KEYS[i].name;
        i += 1;
    }
    out
}

/// The keys that say when a `foreground-supervised` unit is ready.
const READINESS: [&str; 2] = ["ready-wait", "ready-grep"];

/// Parses one unit file. `file` names it in diagnostics; its stem is
/// compared with the unit's name (a difference is a warning).
///
/// Every problem of the file is reported, errors and warnings, each at the
/// line and column of the key or value it is about; `spec` is `Some` exactly
/// when there is no error. `origin` is filled as far as the file could be
/// read, also when there are errors. The function never panics, whatever
/// `text` holds; a text over 1 MiB is refused unread.
///
/// ```
/// use flotilla_units::load::parse_yaml;
/// let p = parse_yaml("maddy.yaml", "unit: maddy\ntype: foreground-notified\n\
///     provides: imapd, smtpd\nexec-start: /usr/bin/maddy run\n");
/// let spec = p.spec.unwrap();
/// assert_eq!(spec.provides, ["imapd", "smtpd"]);
/// assert_eq!(spec.exec_start.unwrap().argv, ["/usr/bin/maddy", "run"]);
///
/// let p = parse_yaml("bad.yaml", "unit: bad\ndepend-on: net\nexec-start: /bin/true\n");
/// assert!(p.spec.is_none());
/// assert_eq!(
///     p.diagnostics[0].to_string(),
///     "bad.yaml:2:1: unknown key `depend-on`; did you mean `depends-on`?"
/// );
/// ```
pub fn parse_yaml(file: &str, text: &str) -> ParsedUnit {
    let mut sink = Sink::new(file);
    let mut origin = Origin::unplaced(file);
    let root = match yaml::parse(file, text) {
        Ok(Some(root)) => root,
        Ok(None) => {
            sink.error(
                Pos::new(1, 1),
                "the file is empty; a unit file is a YAML mapping with at least `unit:` \
                 (and `exec-start:` unless the unit is virtual)",
            );
            return finish(None, origin, sink);
        }
        Err(d) => {
            sink.diagnostics.push(d);
            return finish(None, origin, sink);
        }
    };
    origin.pos = root.pos;
    let Value::Map(entries) = &root.value else {
        sink.error(
            root.pos,
            format!(
                "a unit file must be a YAML mapping of keys such as `unit: NAME`, found {}",
                root.kind()
            ),
        );
        return finish(None, origin, sink);
    };
    let found = known_entries(entries, crate::keys::yaml_names(), "key", &mut sink);
    let spec = Unit::new(file, root.pos, &found, &mut sink, &mut origin).check();
    finish(spec, origin, sink)
}

pub(super) fn finish(spec: Option<UnitSpec>, origin: Origin, sink: Sink<'_>) -> ParsedUnit {
    let spec = if sink.has_errors() { None } else { spec };
    ParsedUnit {
        spec,
        origin,
        diagnostics: sink.into_sorted(),
    }
}

/// The state of checking one unit: the entries found, and what they gave.
pub(super) struct Unit<'a, 'n, 's> {
    file: &'a str,
    start: Pos,
    found: &'a [Entry<'n>],
    pub(super) sink: &'a mut Sink<'s>,
    origin: &'a mut Origin,
}

impl<'a, 'n, 's> Unit<'a, 'n, 's> {
    pub(super) fn new(
        file: &'a str,
        start: Pos,
        found: &'a [Entry<'n>],
        sink: &'a mut Sink<'s>,
        origin: &'a mut Origin,
    ) -> Self {
        Unit {
            file,
            start,
            found,
            sink,
            origin,
        }
    }

    fn get(&self, key: &str) -> Option<&'a Entry<'n>> {
        self.found.iter().find(|e| e.key == key)
    }

    /// Checks everything; the spec is built from what is valid (the caller
    /// drops it when an error was reported).
    pub(super) fn check(mut self) -> Option<UnitSpec> {
        let name = self.name();
        let kind = self.kind();
        let mut spec = UnitSpec::new(name.clone().unwrap_or_default(), kind.unwrap_or_default());
        let start = self.origin.pos;
        let spec_kind = spec.kind;
        self.origin.set_positions(TargetList::Provides, [start]);
        for key in KEYS {
            let Some(e) = self.get(key.name) else {
                continue;
            };
            self.read(e, (key.slot)(&mut spec), spec_kind);
        }
        for e in self.found {
            if let Some(k) = crate::keys::context_key(e.key) {
                self.context_key(e, k, &mut spec.extras.context);
            }
        }
        spec.extras.normalize();
        self.check_delays(&spec);
        if let Some(kind) = kind {
            self.fits_type(kind, &spec);
        }
        name.map(|_| spec)
    }

    /// Reads the value of entry `e` into its field.
    fn read(&mut self, e: &Entry<'n>, slot: Slot<'_>, kind: UnitType) {
        match slot {
            // Read first, by `name` and `kind`.
            Slot::Name(_) | Slot::Type(_) => {}
            Slot::Text(f) => *f = self.text(e, "text"),
            Slot::Targets(f, list) => {
                let (names, pos) = self.targets(e);
                if names.is_empty()
                    && list == TargetList::Provides
                    && matches!(e.value.value, Value::Seq(_))
                {
                    self.sink.error(
                        e.value.pos,
                        format!("`{}` needs at least one target", e.key),
                    );
                }
                *f = names.into();
                self.origin.set_positions(list, pos);
            }
            Slot::Command(f) => *f = self.command(e),
            Slot::Commands(f) => *f = self.command_list(e).into(),
            Slot::OptionalDuration(f) => *f = self.duration(e),
            Slot::Count(f) => *f = self.count(e),
            Slot::Duration(f) => *f = self.duration(e).unwrap_or(*f),
            Slot::Timeout(f) => *f = self.positive_duration(e).unwrap_or(*f),
            Slot::Regex(f) => *f = self.regex(e),
            Slot::BusName(f) => *f = self.bus_name(e),
            Slot::Path(f) => *f = self.path(e),
            Slot::Restart(f) => *f = self.restart(e).unwrap_or(*f),
            Slot::Signal(f) => *f = self.signal(e).unwrap_or(*f),
            Slot::OptionalSignal(f) => *f = self.signal(e),
            Slot::Integer(f) => *f = self.integer(e).unwrap_or(*f),
            Slot::Account(f) => *f = self.account(e),
            Slot::Environment(f) => *f = self.environment(e),
            Slot::EnvironmentFiles(f) => *f = self.environment_files(e),
            Slot::Bool(f) => *f = self.boolean(e),
            Slot::ExitSet(f) => *f = self.exit_set(e),
            Slot::Action(f) => *f = self.action(e),
            Slot::Trigger(f, key) => {
                self.systemd_values(e, |v| crate::trigger::set(f, kind, key, v));
            }
            Slot::Condition(list, ckind, assert) => {
                self.systemd_values(e, |v| {
                    match crate::condition::parse_value(ckind, assert, v)? {
                        Some(c) => list.push(c),
                        None => list.clear(),
                    }
                    Ok(())
                });
            }
        }
    }

    fn check_delays(&mut self, spec: &UnitSpec) {
        if spec.restart_max_delay >= spec.restart_delay {
            return;
        }
        let (d, m) = (
            format_duration(spec.restart_delay),
            format_duration(spec.restart_max_delay),
        );
        if let Some(e) = self.get("restart-max-delay") {
            self.sink.warning(
                e.value.pos,
                format!(
                    "`restart-max-delay` ({m}) is shorter than `restart-delay` ({d}); every \
                     restart waits {m}"
                ),
            );
        } else if let Some(e) = self.get("restart-delay") {
            self.sink.warning(
                e.value.pos,
                format!(
                    "`restart-delay` ({d}) is longer than `restart-max-delay` ({m}, the \
                     default); every restart waits {m}"
                ),
            );
        }
    }

    /// `unit` (or its alias `name`): required, a valid name. Warns when it
    /// differs from the file's name.
    fn name(&mut self) -> Option<String> {
        let given: Vec<&Entry<'n>> = self
            .found
            .iter()
            .filter(|e| e.key == "unit" || e.key == NAME_ALIAS)
            .collect();
        let Some(&e) = given.first() else {
            self.sink
                .error(self.start, "missing `unit` (the unit's name)");
            return None;
        };
        if let Some(second) = given.get(1) {
            self.sink.error(
                second.key_pos,
                format!(
                    "both `unit` and `name` are given; `name` is an alias of `unit`, keep one \
                     (the first is at line {}, column {})",
                    e.key_pos.line, e.key_pos.col
                ),
            );
        }
        self.origin.pos = e.value.pos;
        let name = self.text(e, "the unit's name")?;
        if let Err(why) = check::name(&name) {
            self.sink.error(
                e.value.pos,
                format!("invalid unit name `{}`: {why}", name.escape_debug()),
            );
            return None;
        }
        let stem = Path::new(self.file).file_stem().and_then(|s| s.to_str());
        if let Some(stem) = stem {
            if stem != name {
                let file_name = Path::new(self.file)
                    .file_name()
                    .and_then(|s| s.to_str())
                    .unwrap_or(stem);
                self.sink.warning(
                    e.value.pos,
                    format!("the unit is named `{name}` but its file is `{file_name}`"),
                );
            }
        }
        Some(name)
    }

    /// `type`: one of the six, `foreground-supervised` when absent. `None`
    /// when it is given but not valid (then nothing depends on the type).
    fn kind(&mut self) -> Option<UnitType> {
        let Some(e) = self.get("type") else {
            return Some(UnitType::default());
        };
        let text = self.text(e, "a unit type")?;
        if let Some(t) = UnitType::parse(&text) {
            return Some(t);
        }
        // A scope is made over D-Bus, not written (docs/units.md).
        let names: Vec<&str> = UnitType::ALL
            .iter()
            .filter(|t| !t.row().adopts())
            .map(|t| t.as_str())
            .collect();
        let systemd = match text.as_str() {
            "simple" | "exec" | "idle" => Some(UnitType::ForegroundSupervised),
            "notify" | "notify-reload" => Some(UnitType::ForegroundNotified),
            "forking" => Some(UnitType::BackgroundPidfile),
            _ => None,
        };
        let message = if let Some(t) = systemd {
            format!(
                "unknown type `{text}`; systemd's `Type={text}` is `{}` here",
                t.as_str()
            )
        } else if let Some(s) = suggest(&text, &names) {
            format!(
                "unknown type `{}`; did you mean `{s}`?",
                text.escape_debug()
            )
        } else {
            format!(
                "unknown type `{}` (the types are {})",
                text.escape_debug(),
                names.join(", ")
            )
        };
        self.sink.error(e.value.pos, message);
        None
    }

    /// The keys that do not fit the type, and the rules across keys
    /// ([`RULES`]).
    fn fits_type(&mut self, kind: UnitType, spec: &UnitSpec) {
        let t = kind.as_str();
        for e in self.found {
            let applies_to = match (crate::keys::key(e.key), crate::keys::context_key(e.key)) {
                (Some(key), _) => key.applies_to,
                (None, Some(_)) => crate::keys::CONTEXT_APPLIES_TO,
                (None, None) => continue,
            };
            if applies_to.contains(&kind) {
                continue;
            }
            let problem = if !kind.runs_processes() && applies_to == crate::keys::PROCESS {
                format!(
                    "`{}` does not apply to a `{t}` unit (it runs no process)",
                    e.key
                )
            } else {
                let why = if kind.row().ready == Ready::Notified && READINESS.contains(&e.key) {
                    " (it is ready when it sends `READY=1`)"
                } else {
                    ""
                };
                format!(
                    "`{}` only applies to {} units, and this one is `{t}`{why}",
                    e.key,
                    type_list(applies_to)
                )
            };
            self.sink.error(e.key_pos, problem);
        }
        let type_pos = self.get("type").map_or(self.start, |e| e.value.pos);
        for rule in RULES {
            match *rule {
                Rule::Needs(types, name, why)
                    if types.contains(&kind) && self.get(name).is_none() =>
                {
                    // A key every process needs is missing from the unit;
                    // one a type needs is missing from the type.
                    if types == crate::keys::SPAWNING {
                        self.sink.error(
                            self.start,
                            format!("missing `{name}` (a `{t}` unit needs {why})"),
                        );
                    } else {
                        self.sink
                            .error(type_pos, format!("a `{t}` unit needs `{name}` ({why})"));
                    }
                }
                Rule::Exclusive(a, b) => {
                    let both = crate::keys::key(a).is_some_and(|k| k.applies(kind))
                        && crate::keys::key(b).is_some_and(|k| k.applies(kind));
                    if let (true, Some(_), Some(second)) = (both, self.get(a), self.get(b)) {
                        self.sink.error(
                            second.key_pos,
                            format!("`{a}` and `{b}` cannot be used together; choose one"),
                        );
                    }
                }
                Rule::NoRestart(rt, policy) if rt == kind && spec.restart == policy => {
                    if let Some(e) = self.get("restart") {
                        self.sink.error(
                            e.value.pos,
                            format!(
                                "`restart: {}` would run a {t} again every time it finishes; \
                                 use `on-failure`",
                                policy.as_str()
                            ),
                        );
                    }
                }
                _ => {}
            }
        }
        // A trigger's settings as a whole (the keys one by one are read
        // above, where their values are).
        for (key, why) in crate::keys::trigger_problems(spec) {
            let pos = self.get(key).map_or(type_pos, |e| e.key_pos);
            self.sink.error(pos, why);
        }
        if kind.row().ready == Ready::ScriptExited && self.get("exec-stop").is_none() {
            self.sink.warning(
                type_pos,
                "a `background-scripted` unit without `exec-stop` is stopped by sending \
                 `kill-signal` to the processes its start script left behind",
            );
        }
    }
}

/// "`a`", "`a` and `b`", "`a`, `b` and `c`".
fn type_list(types: &[UnitType]) -> String {
    let names: Vec<String> = types.iter().map(|t| format!("`{}`", t.as_str())).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

/// The `unit:` (or `name:`) of a YAML unit file that has errors, if it can
/// be read.
pub fn yaml_unit_name(text: &str) -> Option<String> {
    let root = yaml::parse("", text).ok()??;
    let Value::Map(entries) = &root.value else {
        return None;
    };
    entries
        .iter()
        .find_map(|(k, v)| match (&k.value, &v.value) {
            (Value::Str(k), Value::Str(v))
                if (k == "unit" || k == "name") && crate::spec::valid_name(v) =>
            {
                Some(v.clone())
            }
            _ => None,
        })
}
