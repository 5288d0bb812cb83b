//! A unit given whole, as a [`UnitSpec`] (a transient unit, which arrives
//! as JSON over the control socket), checked against the table of keys as
//! the loaders check a unit file: each key's value, whether it applies to
//! the unit's type, and the rules across keys.

use super::check::{self, Invalid};
use super::{Rule, Slot, KEYS};
use crate::spec::{Ready, RestartPolicy, UnitSpec, UnitType};
use std::fmt;

/// A problem of a unit given whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The unit's name, as given.
    pub unit: String,
    /// The key.
    pub key: &'static str,
    /// What is wrong.
    pub what: What,
}

/// What is wrong with a key of a unit given whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum What {
    /// Its value (or one entry of it, shown).
    Invalid(Invalid, Option<String>),
    /// The key does not apply to the unit's type.
    DoesNotApply(UnitType),
    /// The unit's type needs the key.
    Missing(UnitType),
    /// It cannot be used together with this other key.
    Exclusive(&'static str),
    /// The unit's type cannot have this restart policy.
    Restart(UnitType, RestartPolicy),
    /// `provides` is empty.
    NoTargets,
    /// A trigger's settings as a whole: what is wrong.
    Trigger(String),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: `{}`: ", self.unit, self.key)?;
        match &self.what {
            What::Invalid(why, Some(entry)) => write!(f, "`{}`: {why}", entry.escape_debug()),
            What::Invalid(why, None) => write!(f, "{why}"),
            What::DoesNotApply(t) => write!(f, "does not apply to a `{}` unit", t.as_str()),
            What::Missing(t) => write!(f, "a `{}` unit needs it", t.as_str()),
            What::Exclusive(other) => write!(f, "cannot be used together with `{other}`"),
            What::Restart(t, p) => {
                write!(
                    f,
                    "`{}` is not allowed for a `{}` unit",
                    p.as_str(),
                    t.as_str()
                )
            }
            What::NoTargets => write!(f, "a unit provides at least one target"),
            What::Trigger(why) => write!(f, "{why}"),
        }
    }
}

/// Checks `spec` against the table of keys; returns it, or every problem.
pub fn validate(spec: UnitSpec) -> Result<UnitSpec, Vec<Problem>> {
    let mut spec = spec;
    let kind = spec.kind;
    let unit = spec.name.clone();
    let mut problems = Vec::new();
    let mut given = Vec::new();
    for key in KEYS {
        let mut bad = |what: What| {
            problems.push(Problem {
                unit: unit.clone(),
                key: key.name,
                what,
            })
        };
        let is_given = match (key.slot)(&mut spec) {
            Slot::Name(name) => {
                if let Err(e) = check::name(name) {
                    bad(What::Invalid(e, Some(name.clone())));
                }
                true
            }
            Slot::Type(_) => true,
            Slot::Text(text) => {
                if let Err(e) = text.as_deref().map_or(Ok(()), check::text) {
                    bad(What::Invalid(e, None));
                }
                text.is_some()
            }
            Slot::Targets(names, list) => {
                for n in names.iter() {
                    if let Err(e) = check::name(n) {
                        bad(What::Invalid(e, Some(n.clone())));
                    }
                }
                if names.is_empty() && list == super::TargetList::Provides {
                    bad(What::NoTargets);
                }
                !names.is_empty()
            }
            Slot::Command(cmd) => {
                if let Some(c) = cmd {
                    if let Err(e) = check::command(c.argv.iter()) {
                        bad(What::Invalid(e, None));
                    }
                }
                cmd.is_some()
            }
            Slot::Commands(cmds) => {
                for c in cmds.iter() {
                    if let Err(e) = check::command(c.argv.iter()) {
                        bad(What::Invalid(e, None));
                    }
                }
                !cmds.is_empty()
            }
            Slot::OptionalDuration(d) => d.is_some(),
            Slot::Count(n) => n.is_some(),
            // A field with a default is given whatever the type: only its
            // value is checked.
            Slot::Duration(_) | Slot::Restart(_) | Slot::Integer(_) => false,
            Slot::Timeout(d) => {
                if let Err(e) = check::timeout(*d) {
                    bad(What::Invalid(e, None));
                }
                false
            }
            Slot::Signal(s) => {
                if let Err(e) = check::signal(s.0) {
                    bad(What::Invalid(e, Some(s.0.to_string())));
                }
                false
            }
            Slot::OptionalSignal(s) => {
                if let Some(Err(e)) = s.map(|s| check::signal(s.0)) {
                    bad(What::Invalid(e, s.map(|s| s.0.to_string())));
                }
                s.is_some()
            }
            Slot::Regex(pattern) => check_given(pattern, check::regex, &mut bad),
            Slot::BusName(name) => check_given(name, check::bus_name, &mut bad),
            Slot::Path(path) => {
                if let Some(p) = path {
                    check_path(p, &mut bad);
                }
                path.is_some()
            }
            Slot::Account(name) => check_given(name, check::account, &mut bad),
            Slot::Environment(vars) => {
                for (name, value) in vars.iter() {
                    if let Err(e) = check::variable_name(name).and_then(|()| check::text(value)) {
                        bad(What::Invalid(e, Some(name.clone())));
                    }
                }
                !vars.is_empty()
            }
            Slot::EnvironmentFiles(files) => {
                for (p, _) in files.iter() {
                    check_path(p, &mut bad);
                }
                !files.is_empty()
            }
            Slot::Bool(b) => b.is_some(),
            Slot::ExitSet(set) => !set.is_empty(),
            Slot::Action(a) => a.is_some(),
            // Typed already (their JSON form is read through the same
            // parsers); a trigger's settings are checked as a whole below.
            Slot::Trigger(..) | Slot::Condition(..) => false,
        };
        if is_given && !key.applies(kind) {
            bad(What::DoesNotApply(kind));
        }
        if is_given {
            given.push(key.name);
        }
    }
    let mut bad = |key: &'static str, what: What| {
        problems.push(Problem {
            unit: unit.clone(),
            key,
            what,
        })
    };
    // The service context (its values were checked when it was built:
    // by the translator for a fleet unit, or the YAML loader), and a
    // oneshot's further commands.
    // A slice's context is its resource control only (the keys its
    // `[Slice]` takes, `context/slice.rs`), and its place.
    let slice_context = kind.row().holds_units && spec.extras.context.is_resource_control_only();
    if !spec.extras.context.is_empty()
        && !super::CONTEXT_APPLIES_TO.contains(&kind)
        && !slice_context
    {
        bad("context", What::DoesNotApply(kind));
    }
    for c in &spec.extras.exec_start_then {
        if let Err(e) = check::command(c.argv.iter()) {
            bad("exec-start", What::Invalid(e, None));
        }
    }
    for c in &spec.extras.exec_reload_then {
        if let Err(e) = check::command(c.argv.iter()) {
            bad("exec-reload", What::Invalid(e, None));
        }
    }
    if !spec.extras.exec_start_then.is_empty() && kind.row().ready != Ready::Exited {
        bad("exec_start_then", What::DoesNotApply(kind));
    }
    for rule in super::RULES {
        match *rule {
            Rule::Needs(types, key, _) if types.contains(&kind) && !given.contains(&key) => {
                bad(key, What::Missing(kind))
            }
            Rule::Exclusive(a, b) if given.contains(&a) && given.contains(&b) => {
                bad(b, What::Exclusive(a))
            }
            Rule::NoRestart(t, p) if t == kind && spec.restart == p => {
                bad("restart", What::Restart(t, p))
            }
            _ => {}
        }
    }
    for (key, why) in super::trigger_problems(&spec) {
        let key = super::key(key).map_or("type", |k| k.name);
        problems.push(Problem {
            unit: unit.clone(),
            key,
            what: What::Trigger(why),
        });
    }
    if problems.is_empty() {
        Ok(spec)
    } else {
        Err(problems)
    }
}

/// A text value if given, its problem shown with it; whether it is given.
fn check_given(
    value: &Option<String>,
    check: fn(&str) -> Result<(), Invalid>,
    bad: &mut impl FnMut(What),
) -> bool {
    if let Some(v) = value {
        if let Err(e) = check(v) {
            bad(What::Invalid(e, Some(v.clone())));
        }
    }
    value.is_some()
}

/// An absolute path, its problem shown with it.
fn check_path(p: &std::path::Path, bad: &mut impl FnMut(What)) {
    if let Err(e) = check::path(&p.to_string_lossy()) {
        bad(What::Invalid(e, Some(p.display().to_string())));
    }
}

/// A problem of a transient set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetProblem {
    /// The set's name is not a valid name.
    Name(String),
    /// A unit of the set.
    Unit(Problem),
}

impl fmt::Display for SetProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetProblem::Name(set) => {
                write!(
                    f,
                    "bad set name `{}`: {}",
                    set.escape_debug(),
                    Invalid::Name
                )
            }
            SetProblem::Unit(p) => p.fmt(f),
        }
    }
}

/// Checks a transient set (`transient-apply`): its name, and each unit as
/// [`validate`] does. Returns the units, or every problem.
pub fn validate_set(set: &str, units: Vec<UnitSpec>) -> Result<Vec<UnitSpec>, Vec<SetProblem>> {
    let mut problems = Vec::new();
    if check::name(set).is_err() {
        problems.push(SetProblem::Name(set.to_string()));
    }
    let mut ok = Vec::with_capacity(units.len());
    for u in units {
        match validate(u) {
            Ok(u) => ok.push(u),
            Err(p) => problems.extend(p.into_iter().map(SetProblem::Unit)),
        }
    }
    if problems.is_empty() {
        Ok(ok)
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Command, Signal};

    fn problems(spec: UnitSpec) -> Vec<String> {
        match validate(spec) {
            Ok(_) => Vec::new(),
            Err(p) => p.iter().map(|p| p.to_string()).collect(),
        }
    }

    fn web() -> UnitSpec {
        let mut s = UnitSpec::new("web", UnitType::ForegroundSupervised);
        s.exec_start = Some(Command::new(["/bin/web"]));
        s
    }

    #[test]
    fn a_valid_unit_is_returned_as_it_is() {
        let mut s = web();
        s.extras.ready_grep = Some("listening on .*".into());
        s.extras.environment.insert("PORT".into(), "80".into());
        assert_eq!(validate(s.clone()), Ok(s));
        let v = UnitSpec::new("all", UnitType::Virtual);
        assert_eq!(validate(v.clone()), Ok(v));
    }

    #[test]
    fn each_bad_field_is_named_with_its_unit() {
        let mut s = web();
        s.extras.ready_grep = Some("a(b".into());
        s.depends_on = vec!["bad name".into()].into();
        s.extras.pidfile = Some("run/web.pid".into());
        s.extras.user = Some("a:b".into());
        s.stop_timeout = std::time::Duration::ZERO;
        s.kill_signal = Signal(0);
        assert_eq!(
            problems(s),
            [
                "web: `depends-on`: `bad name`: a name has only letters, digits and `:_.@-`",
                "web: `ready-grep`: `a(b`: bad regular expression: found open group without \
                 closing ')'",
                "web: `pidfile`: `run/web.pid`: not an absolute path (starting with `/`)",
                "web: `pidfile`: does not apply to a `foreground-supervised` unit",
                "web: `stop-timeout`: must be longer than 0",
                "web: `kill-signal`: `0`: a signal is a number from 1 to 64",
                "web: `user`: `a:b`: empty, or with blanks or `:`",
            ]
        );
    }

    #[test]
    fn the_rate_limit_is_for_units_with_a_process() {
        let mut s = web();
        s.extras.log_rate_limit_interval = Some(std::time::Duration::ZERO);
        s.extras.log_rate_limit_burst = Some(0);
        assert_eq!(validate(s.clone()), Ok(s));
        let mut v = UnitSpec::new("all", UnitType::Virtual);
        v.extras.log_rate_limit_burst = Some(5);
        assert_eq!(
            problems(v),
            ["all: `log-rate-limit-burst`: does not apply to a `virtual` unit"]
        );
    }

    #[test]
    fn a_set_is_checked_whole() {
        let mut bad = web();
        bad.name = "we b".into();
        let err = validate_set("clu ster", vec![web(), bad]).unwrap_err();
        let shown: Vec<String> = err.iter().map(|p| p.to_string()).collect();
        assert_eq!(
            shown,
            [
                "bad set name `clu ster`: a name has only letters, digits and `:_.@-`",
                "we b: `unit`: `we b`: a name has only letters, digits and `:_.@-`",
            ]
        );
        assert_eq!(validate_set("cluster", vec![web()]), Ok(vec![web()]));
    }

    #[test]
    fn the_rules_across_keys_hold() {
        let mut s = web();
        s.kind = UnitType::BackgroundPidfile;
        s.exec_start = None;
        assert_eq!(
            problems(s),
            [
                "web: `exec-start`: a `background-pidfile` unit needs it",
                "web: `pidfile`: a `background-pidfile` unit needs it",
            ]
        );
        let mut s = web();
        s.extras.ready_wait = Some(std::time::Duration::from_secs(1));
        s.extras.ready_grep = Some("up".into());
        assert_eq!(
            problems(s),
            ["web: `ready-grep`: cannot be used together with `ready-wait`"]
        );
        let mut s = web();
        s.kind = UnitType::Oneshot;
        s.restart = RestartPolicy::Always;
        s.provides.clear();
        assert_eq!(
            problems(s),
            [
                "web: `provides`: a unit provides at least one target",
                "web: `restart`: `always` is not allowed for a `oneshot` unit",
            ]
        );
    }

    /// Every kind a unit file can name is a key of the table and has its
    /// entry in the units reference (`standby` is the graph's own link).
    #[test]
    fn every_dependency_kind_is_a_key_and_documented() {
        let doc = include_str!("../../../docs/units.md");
        for k in crate::state::DepKind::ALL
            .into_iter()
            .filter(|k| *k != crate::state::DepKind::Standby)
        {
            assert!(
                crate::keys::key(k.as_str()).is_some(),
                "no row in keys::KEYS for {}",
                k.as_str()
            );
            let entry = format!("`{}`", k.as_str());
            assert!(
                doc.contains(&entry),
                "docs/units.md has no entry for {entry}"
            );
        }
    }

    /// The key table's lists of types agree with the rows.
    #[test]
    fn the_key_tables_type_lists_are_the_rows() {
        let with = |runs: crate::spec::Runs| -> Vec<crate::spec::UnitType> {
            crate::spec::UnitType::ALL
                .into_iter()
                .filter(|t| t.row().runs == runs)
                .collect()
        };
        assert_eq!(crate::keys::PROCESS, with(crate::spec::Runs::Process));
        assert_eq!(crate::keys::TRIGGERS, with(crate::spec::Runs::Trigger));
        // The process types but the one that adopts its processes.
        let spawning: Vec<_> = with(crate::spec::Runs::Process)
            .into_iter()
            .filter(|t| !t.row().adopts())
            .collect();
        assert_eq!(crate::keys::SPAWNING, spawning);
        // The process types and sockets.
        let mut commands = with(crate::spec::Runs::Process);
        commands.push(crate::spec::UnitType::Socket);
        assert_eq!(crate::keys::COMMANDS, commands);
    }
}
