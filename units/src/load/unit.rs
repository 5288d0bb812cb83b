//! One YAML unit file: from the node tree to a validated [`UnitSpec`].

use super::words::split_command;
use super::yaml::{self, known_entries, shifted, suggest, Entry, Node, Sink, Value};
use super::ParsedUnit;
use crate::diag::Pos;
use crate::duration::{format_duration, parse_duration};
use crate::spec::{valid_name, Command, Origin, RestartPolicy, Signal, UnitSpec, UnitType};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Every key a YAML unit file may have, in the order the docs list them.
/// `name` is an alias of `unit`.
pub const UNIT_KEYS: &[&str] = &[
    "unit",
    "name",
    "description",
    "type",
    "provides",
    "depends-on",
    "depends-ms",
    "waits-for",
    "exec-start-pre",
    "exec-start",
    "exec-stop",
    "exec-stop-post",
    "exec-reload",
    "ready-wait",
    "ready-grep",
    "pidfile",
    "start-timeout",
    "stop-timeout",
    "restart",
    "restart-delay",
    "restart-max-delay",
    "kill-signal",
    "user",
    "group",
    "working-directory",
    "environment",
    "environment-file",
];

/// The keys a `virtual` unit may have: it runs no process.
const VIRTUAL_KEYS: &[&str] = &[
    "unit",
    "name",
    "description",
    "type",
    "provides",
    "depends-on",
    "depends-ms",
    "waits-for",
];

/// The message ending for a name that is not `[A-Za-z0-9:_.@-]+`.
const NAME_RULE: &str = "a name has only letters, digits and `:_.@-`";

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
/// assert_eq!(*spec.exec_start.unwrap().argv, ["/usr/bin/maddy", "run"]);
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
    let found = known_entries(entries, UNIT_KEYS, "key", &mut sink);
    let spec = Unit::new(file, root.pos, &found, &mut sink, &mut origin).check();
    finish(spec, origin, sink)
}

fn finish(spec: Option<UnitSpec>, origin: Origin, sink: Sink<'_>) -> ParsedUnit {
    let spec = if sink.has_errors() { None } else { spec };
    ParsedUnit {
        spec,
        origin,
        diagnostics: sink.into_sorted(),
    }
}

/// The state of checking one unit: the entries found, and what they gave.
struct Unit<'a, 'n, 's> {
    file: &'a str,
    start: Pos,
    found: &'a [Entry<'n>],
    sink: &'a mut Sink<'s>,
    origin: &'a mut Origin,
}

impl<'a, 'n, 's> Unit<'a, 'n, 's> {
    fn new(
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
    fn check(mut self) -> Option<UnitSpec> {
        let name = self.name();
        let kind = self.kind();
        let mut spec = UnitSpec::new(name.clone().unwrap_or_default(), kind.unwrap_or_default());

        if let Some(e) = self.get("description") {
            spec.extras.description = self.text(e, "text");
        }

        // Targets.
        match self.get("provides") {
            Some(e) => {
                let (names, pos) = self.targets(e);
                if names.is_empty() && matches!(e.value.value, Value::Seq(_)) {
                    self.sink
                        .error(e.value.pos, "`provides` needs at least one target");
                }
                spec.provides = names;
                self.origin.set_provides_pos(pos);
            }
            None => {
                let pos = self.origin.pos;
                self.origin.set_provides_pos(vec![pos]);
            }
        }
        if let Some(e) = self.get("depends-on") {
            let pos;
            (spec.depends_on, pos) = self.targets(e);
            self.origin.set_depends_on_pos(pos);
        }
        if let Some(e) = self.get("depends-ms") {
            let pos;
            (spec.depends_ms, pos) = self.targets(e);
            self.origin.set_depends_ms_pos(pos);
        }
        if let Some(e) = self.get("waits-for") {
            let pos;
            (spec.waits_for, pos) = self.targets(e);
            self.origin.set_waits_for_pos(pos);
        }

        // Commands.
        if let Some(e) = self.get("exec-start-pre") {
            spec.exec_start_pre = self.command_list(e);
        }
        if let Some(e) = self.get("exec-start") {
            spec.exec_start = self.command(e);
        }
        if let Some(e) = self.get("exec-stop") {
            spec.exec_stop = self.command(e);
        }
        if let Some(e) = self.get("exec-stop-post") {
            spec.exec_stop_post = self.command_list(e);
        }
        if let Some(e) = self.get("exec-reload") {
            spec.exec_reload = self.command(e);
        }

        // Readiness.
        if let Some(e) = self.get("ready-wait") {
            spec.ready_wait = self.duration(e);
        }
        if let Some(e) = self.get("ready-grep") {
            spec.ready_grep = self.regex(e);
        }
        if let Some(e) = self.get("pidfile") {
            spec.pidfile = self.path(e);
        }

        // Timeouts and restarts.
        if let Some(e) = self.get("start-timeout") {
            spec.start_timeout = self.positive_duration(e).unwrap_or(spec.start_timeout);
        }
        if let Some(e) = self.get("stop-timeout") {
            spec.stop_timeout = self.positive_duration(e).unwrap_or(spec.stop_timeout);
        }
        if let Some(e) = self.get("restart") {
            spec.restart = self.restart(e).unwrap_or(spec.restart);
        }
        if let Some(e) = self.get("restart-delay") {
            spec.restart_delay = self.duration(e).unwrap_or(spec.restart_delay);
        }
        if let Some(e) = self.get("restart-max-delay") {
            spec.restart_max_delay = self.duration(e).unwrap_or(spec.restart_max_delay);
        }
        self.check_delays(&spec);
        if let Some(e) = self.get("kill-signal") {
            spec.kill_signal = self.signal(e).unwrap_or(spec.kill_signal);
        }

        // Process context.
        if let Some(e) = self.get("user") {
            spec.extras.user = self.account(e, "a user name or number");
        }
        if let Some(e) = self.get("group") {
            spec.extras.group = self.account(e, "a group name or number");
        }
        if let Some(e) = self.get("working-directory") {
            spec.extras.working_directory = self.path(e);
        }
        if let Some(e) = self.get("environment") {
            spec.extras.environment = self.environment(e);
        }
        if let Some(e) = self.get("environment-file") {
            spec.extras.environment_files = self.environment_files(e);
        }

        if let Some(kind) = kind {
            self.fits_type(kind, &spec);
        }
        name.map(|_| spec)
    }

    /// `unit` (or its alias `name`): required, a valid name. Warns when it
    /// differs from the file's name.
    fn name(&mut self) -> Option<String> {
        let given: Vec<&Entry<'n>> = self
            .found
            .iter()
            .filter(|e| e.key == "unit" || e.key == "name")
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
        if !valid_name(&name) {
            self.sink.error(
                e.value.pos,
                format!("invalid unit name `{}`: {NAME_RULE}", name.escape_debug()),
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
        let names: Vec<&str> = UnitType::ALL.iter().map(|t| t.as_str()).collect();
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

    /// A string (or a number, as written); reports anything else.
    fn text(&mut self, e: &Entry<'n>, what: &str) -> Option<String> {
        match e.value.string_or_number() {
            Some(s) => {
                if s.contains('\0') {
                    self.sink
                        .error(e.value.pos, format!("`{}` contains a NUL character", e.key));
                    return None;
                }
                Some(s)
            }
            None => {
                self.type_error(e.value, &format!("{what} for `{}`", e.key));
                None
            }
        }
    }

    fn type_error(&mut self, node: &Node, expected: &str) {
        let found = match &node.value {
            Value::Bool(b) => format!("`{b}`"),
            _ => node.kind().to_string(),
        };
        self.sink
            .error(node.pos, format!("expected {expected}, found {found}"));
    }

    /// `provides` and the three dependency kinds: a list of names, or one
    /// string of names separated by commas. Returns the valid names, each
    /// with its position.
    fn targets(&mut self, e: &Entry<'n>) -> (Vec<String>, Vec<Pos>) {
        let mut out: Vec<(String, Pos)> = Vec::new();
        let key = e.key;
        match &e.value.value {
            Value::Str(s) if s.trim().is_empty() => self.sink.error(
                e.value.pos,
                format!("no target names in `{key}` (leave the key out, or write `[]`)"),
            ),
            Value::Str(s) => {
                let start = e.value.text_start();
                let mut offset = 0;
                for piece in s.split(',') {
                    let lead = piece.chars().take_while(|c| c.is_whitespace()).count();
                    let pos = shifted(start, offset + lead).unwrap_or(e.value.pos);
                    offset += piece.chars().count() + 1;
                    let name = piece.trim();
                    if name.is_empty() {
                        self.sink.error(
                            pos,
                            format!(
                                "empty target name in `{key}` (a comma too many, or nothing \
                                 given)"
                            ),
                        );
                    } else {
                        out.push((name.to_string(), pos));
                    }
                }
            }
            Value::Seq(items) => {
                for item in items {
                    match item.string_or_number() {
                        Some(name) => out.push((name, item.pos)),
                        None => self.type_error(item, &format!("a target name in `{key}`")),
                    }
                }
            }
            _ => self.type_error(
                e.value,
                &format!(
                    "target names for `{key}` (a list, or one string of names separated by commas)"
                ),
            ),
        }
        let mut names = Vec::new();
        let mut positions = Vec::new();
        let mut seen = HashSet::new();
        for (name, pos) in out {
            if !valid_name(&name) {
                self.sink.error(
                    pos,
                    format!(
                        "invalid target name `{}` in `{key}`: {NAME_RULE}",
                        name.escape_debug()
                    ),
                );
            } else if !seen.insert(name.clone()) {
                self.sink
                    .warning(pos, format!("`{name}` is listed twice in `{key}`"));
            } else {
                names.push(name);
                positions.push(pos);
            }
        }
        (names, positions)
    }

    /// `exec-start`, `exec-stop`, `exec-reload`: one command.
    fn command(&mut self, e: &Entry<'n>) -> Option<Command> {
        self.one_command(e.key, e.value, false)
    }

    /// `exec-start-pre`, `exec-stop-post`: one command (a string) or a list
    /// of commands, each a string or a list of words; a leading `-` ignores
    /// the command's failure.
    fn command_list(&mut self, e: &Entry<'n>) -> Vec<Command> {
        match &e.value.value {
            Value::Seq(items) => items
                .iter()
                .filter_map(|item| self.one_command(e.key, item, true))
                .collect(),
            _ => self.one_command(e.key, e.value, true).into_iter().collect(),
        }
    }

    fn one_command(&mut self, key: &str, node: &Node, may_ignore: bool) -> Option<Command> {
        let (mut words, ignore_failure) = match &node.value {
            Value::Str(s) => {
                let (ignore, rest) = match s.trim_start().strip_prefix('-') {
                    Some(rest) if may_ignore => (true, rest),
                    _ => (false, s.as_str()),
                };
                match split_command(rest) {
                    Ok(words) => (words, ignore),
                    Err(why) => {
                        self.sink
                            .error(node.pos, format!("bad command in `{key}`: {why}"));
                        return None;
                    }
                }
            }
            Value::Seq(items) => {
                let mut words = Vec::new();
                for item in items {
                    match item.text() {
                        Some(w) => words.push(w),
                        None => {
                            self.type_error(item, &format!("a word of the command in `{key}`"));
                            return None;
                        }
                    }
                }
                let mut ignore = false;
                if let Some(first) = words.first_mut() {
                    if let Some(rest) = first.strip_prefix('-').filter(|_| may_ignore) {
                        *first = rest.to_string();
                        ignore = true;
                    }
                }
                (words, ignore)
            }
            _ => {
                let expected = if may_ignore {
                    format!("commands for `{key}` (a command string, or a list of commands)")
                } else {
                    format!("a command for `{key}` (a string, or a list of words)")
                };
                self.type_error(node, &expected);
                return None;
            }
        };
        let problem = match words.first().map(String::as_str) {
            None => Some("empty command"),
            Some("") => Some("the program name is empty"),
            Some(p) if p.starts_with('-') && !may_ignore => Some(
                "a leading `-` (ignore failure) only works in `exec-start-pre` and \
                 `exec-stop-post`",
            ),
            _ if words.iter().any(|w| w.contains('\0')) => Some("a word contains a NUL character"),
            _ => None,
        };
        if let Some(why) = problem {
            self.sink
                .error(node.pos, format!("bad command in `{key}`: {why}"));
            return None;
        }
        Some(Command {
            argv: std::mem::take(&mut words).into(),
            ignore_failure,
        })
    }

    fn duration(&mut self, e: &Entry<'n>) -> Option<Duration> {
        let Some(text) = e.value.string_or_number() else {
            self.type_error(e.value, &format!("a duration like `2s` for `{}`", e.key));
            return None;
        };
        match parse_duration(&text) {
            Ok(d) => Some(d),
            Err(why) => {
                self.sink
                    .error(e.value.pos, format!("bad duration for `{}`: {why}", e.key));
                None
            }
        }
    }

    fn positive_duration(&mut self, e: &Entry<'n>) -> Option<Duration> {
        let d = self.duration(e)?;
        if d.is_zero() {
            self.sink
                .error(e.value.pos, format!("`{}` must be longer than 0", e.key));
            return None;
        }
        Some(d)
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

    fn regex(&mut self, e: &Entry<'n>) -> Option<String> {
        let pattern = self.text(e, "a regular expression")?;
        match compile_regex(&pattern) {
            Ok(()) => Some(pattern),
            Err(err) => {
                let (why, too_big) = regex_reason(&err);
                let pos = if too_big {
                    e.value.pos
                } else {
                    e.value.pos_at(regex_error_offset(&pattern))
                };
                self.sink.error(
                    pos,
                    format!("bad regular expression for `ready-grep`: {why}"),
                );
                None
            }
        }
    }

    fn restart(&mut self, e: &Entry<'n>) -> Option<RestartPolicy> {
        let policies = ["no", "on-failure", "always"];
        let text = match &e.value.value {
            // `restart: false` reads as `no`. (The parser uses YAML 1.2
            // booleans, so an unquoted `no` is the string "no" already.)
            Value::Bool(false) => return Some(RestartPolicy::No),
            Value::Bool(true) => {
                self.sink.error(
                    e.value.pos,
                    "`restart: true` is ambiguous; write `on-failure` or `always`",
                );
                return None;
            }
            _ => self.text(e, "a restart policy (`no`, `on-failure` or `always`)")?,
        };
        match text.as_str() {
            "no" => Some(RestartPolicy::No),
            "on-failure" => Some(RestartPolicy::OnFailure),
            "always" => Some(RestartPolicy::Always),
            _ => {
                let hint = match suggest(&text, &policies) {
                    Some(s) => format!("; did you mean `{s}`?"),
                    None => " (use `no`, `on-failure` or `always`)".to_string(),
                };
                self.sink.error(
                    e.value.pos,
                    format!("unknown restart policy `{}`{hint}", text.escape_debug()),
                );
                None
            }
        }
    }

    fn signal(&mut self, e: &Entry<'n>) -> Option<Signal> {
        let text = self.text(e, "a signal name like `SIGTERM`")?;
        let sig = Signal::parse(&text);
        if sig.is_none() {
            self.sink.error(
                e.value.pos,
                format!(
                    "unknown signal `{}` for `kill-signal` (write a name like `SIGTERM` or \
                     `SIGINT`, or a number from 1 to 64)",
                    text.escape_debug()
                ),
            );
        }
        sig
    }

    fn account(&mut self, e: &Entry<'n>, what: &str) -> Option<String> {
        let text = self.text(e, what)?;
        if text.is_empty() || text.chars().any(|c| c.is_whitespace() || c == ':') {
            self.sink.error(
                e.value.pos,
                format!("invalid `{}` `{}`", e.key, text.escape_debug()),
            );
            return None;
        }
        Some(text)
    }

    fn path(&mut self, e: &Entry<'n>) -> Option<PathBuf> {
        let text = self.text(e, "a path")?;
        self.absolute(e.key, &text, e.value.pos)
    }

    fn absolute(&mut self, key: &str, text: &str, pos: Pos) -> Option<PathBuf> {
        if text.is_empty() {
            self.sink.error(pos, format!("`{key}` is an empty path"));
            return None;
        }
        if !text.starts_with('/') {
            self.sink.error(
                pos,
                format!(
                    "`{key}` must be an absolute path (starting with `/`), found `{}`",
                    text.escape_debug()
                ),
            );
            return None;
        }
        Some(PathBuf::from(text))
    }

    fn environment(&mut self, e: &Entry<'n>) -> BTreeMap<String, String> {
        let mut env = BTreeMap::new();
        let Value::Map(entries) = &e.value.value else {
            self.type_error(
                e.value,
                "a mapping of variables for `environment` (`NAME: value`)",
            );
            return env;
        };
        let mut seen: HashMap<&str, Pos> = HashMap::new();
        for (k, v) in entries {
            let Value::Str(name) = &k.value else {
                self.type_error(k, "a variable name in `environment`");
                continue;
            };
            if let Some(first) = seen.get(name.as_str()) {
                self.sink.error(
                    k.pos,
                    format!(
                        "duplicate variable `{}` in `environment` (first given at line {}, \
                         column {})",
                        name.escape_debug(),
                        first.line,
                        first.col
                    ),
                );
                continue;
            }
            seen.insert(name, k.pos);
            if name.is_empty()
                || name
                    .chars()
                    .any(|c| c == '=' || c.is_whitespace() || c.is_control())
            {
                self.sink.error(
                    k.pos,
                    format!(
                        "invalid variable name `{}` in `environment` (no `=`, spaces or \
                         control characters)",
                        name.escape_debug()
                    ),
                );
                continue;
            }
            match (&v.value, v.text()) {
                (Value::Null, _) => self.sink.error(
                    v.pos,
                    format!("no value for `{name}` in `environment` (write `{name}: \"\"` for an empty one)"),
                ),
                (_, Some(value)) if value.contains('\0') => self.sink.error(
                    v.pos,
                    format!("the value of `{name}` in `environment` contains a NUL character"),
                ),
                (_, Some(value)) => {
                    env.insert(name.clone(), value);
                }
                (_, None) => self.type_error(v, &format!("a value for `{name}` in `environment`")),
            }
        }
        env
    }

    fn environment_files(&mut self, e: &Entry<'n>) -> Vec<(PathBuf, bool)> {
        let items: Vec<&Node> = match &e.value.value {
            Value::Seq(items) => items.iter().collect(),
            _ => vec![e.value],
        };
        let mut out = Vec::new();
        for item in items {
            let Some(text) = item.string_or_number() else {
                self.type_error(
                    item,
                    "a path for `environment-file` (a `-` before it means the file may be missing)",
                );
                continue;
            };
            let (optional, path) = match text.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, text.as_str()),
            };
            if let Some(p) = self.absolute("environment-file", path, item.pos) {
                out.push((p, optional));
            }
        }
        out
    }

    /// The options that do not fit the type, and the ones the type needs.
    fn fits_type(&mut self, kind: UnitType, spec: &UnitSpec) {
        let t = kind.as_str();
        for e in self.found {
            let problem = match e.key {
                k if kind == UnitType::Virtual && !VIRTUAL_KEYS.contains(&k) => Some(format!(
                    "`{k}` does not apply to a `virtual` unit (it runs no process)"
                )),
                "pidfile" if kind != UnitType::BackgroundPidfile => Some(format!(
                    "`pidfile` only applies to `background-pidfile` units, and this one is `{t}`"
                )),
                k @ ("ready-wait" | "ready-grep") if kind != UnitType::ForegroundSupervised => {
                    let why = if kind == UnitType::ForegroundNotified {
                        " (it is ready when it sends `READY=1`)"
                    } else {
                        ""
                    };
                    Some(format!(
                        "`{k}` only applies to `foreground-supervised` units, and this one is \
                         `{t}`{why}"
                    ))
                }
                _ => None,
            };
            if let Some(p) = problem {
                self.sink.error(e.key_pos, p);
            }
        }
        let type_pos = self.get("type").map_or(self.start, |e| e.value.pos);
        if kind != UnitType::Virtual && self.get("exec-start").is_none() {
            self.sink.error(
                self.start,
                format!("missing `exec-start` (a `{t}` unit needs a command to run)"),
            );
        }
        if kind == UnitType::BackgroundPidfile && self.get("pidfile").is_none() {
            self.sink.error(
                type_pos,
                "a `background-pidfile` unit needs `pidfile` (where the daemon writes its PID)",
            );
        }
        if kind == UnitType::ForegroundSupervised {
            if let (Some(_), Some(g)) = (self.get("ready-wait"), self.get("ready-grep")) {
                self.sink.error(
                    g.key_pos,
                    "`ready-wait` and `ready-grep` cannot be used together; choose one",
                );
            }
        }
        if kind == UnitType::Oneshot && spec.restart == RestartPolicy::Always {
            if let Some(e) = self.get("restart") {
                self.sink.error(
                    e.value.pos,
                    "`restart: always` would run a oneshot again every time it finishes; use \
                     `on-failure`",
                );
            }
        }
        if kind == UnitType::BackgroundScripted && self.get("exec-stop").is_none() {
            self.sink.warning(
                type_pos,
                "a `background-scripted` unit without `exec-stop` is stopped by sending \
                 `kill-signal` to the processes its start script left behind",
            );
        }
    }
}

/// The most a `ready-grep` expression may take once compiled.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Compiles a `ready-grep` expression as the init will (`regex-lite`), with
/// the loader's size limit.
fn compile_regex(pattern: &str) -> Result<(), regex_lite::Error> {
    regex_lite::RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map(drop)
}

/// The reason of a regex error in one line, and whether it is the size
/// limit (the whole expression, rather than a place in it).
fn regex_reason(err: &regex_lite::Error) -> (String, bool) {
    let text = err.to_string();
    if text == "compiled regex exceeded size limit" {
        (
            "the expression is too big once compiled (the limit is 1 MiB)".to_string(),
            true,
        )
    } else {
        (text, false)
    }
}

/// The character offset in a bad pattern that its error points at:
/// `regex-lite` says what is wrong but not where, so this is where the
/// longest valid prefix of the pattern ends (the `(` never closed in `a(b`,
/// the `*` with nothing to repeat in `*up`, the `)` never opened in
/// `ab)c`). Runs only for a pattern that failed to compile.
fn regex_error_offset(pattern: &str) -> usize {
    let ends = pattern.char_indices().map(|(i, _)| i).skip(1);
    let mut offset = 0;
    for (n, end) in ends.chain([pattern.len()]).enumerate() {
        if compile_regex(&pattern[..end]).is_ok() {
            offset = n + 1;
        }
    }
    offset
}
