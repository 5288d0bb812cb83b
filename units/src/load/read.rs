//! Reading the value of each kind of key ([`crate::keys::Slot`]) from a
//! YAML node, with the checks of [`crate::keys::check`]: each problem is
//! reported at the line and column of the value (or of the part of it) it
//! is about.

use super::unit::Unit;
use super::words::split_command;
use super::yaml::{shifted, suggest, Entry, Node, Value};
use crate::diag::Pos;
use crate::duration::parse_duration;
use crate::exits::ExitSet;
use crate::keys::check::{self, Invalid};
use crate::spec::{Command, RestartPolicy, Signal};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;

impl<'n> Unit<'_, 'n, '_> {
    /// A string (or a number, as written); reports anything else.
    pub(super) fn text(&mut self, e: &Entry<'n>, what: &str) -> Option<String> {
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

    pub(super) fn type_error(&mut self, node: &Node, expected: &str) {
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
    pub(super) fn targets(&mut self, e: &Entry<'n>) -> (Vec<String>, Vec<Pos>) {
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
            if check::name(&name).is_err() {
                self.sink.error(
                    pos,
                    format!(
                        "invalid target name `{}` in `{key}`: {}",
                        name.escape_debug(),
                        Invalid::Name
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
    pub(super) fn command(&mut self, e: &Entry<'n>) -> Option<Command> {
        self.one_command(e.key, e.value, false)
    }

    /// `exec-start-pre`, `exec-stop-post`: one command (a string) or a list
    /// of commands, each a string or a list of words; a leading `-` ignores
    /// the command's failure.
    pub(super) fn command_list(&mut self, e: &Entry<'n>) -> Vec<Command> {
        match &e.value.value {
            Value::Seq(items) => items
                .iter()
                .filter_map(|item| self.one_command(e.key, item, true))
                .collect(),
            _ => self.one_command(e.key, e.value, true).into_iter().collect(),
        }
    }

    pub(super) fn one_command(
        &mut self,
        key: &str,
        node: &Node,
        may_ignore: bool,
    ) -> Option<Command> {
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
        // A leading `-` is the syntax of an ignored failure (taken off
        // above where it is allowed), not a program.
        let problem = match (
            check::command(words.iter().map(String::as_str)),
            words.first(),
        ) {
            (Err(e), _) => Some(e.to_string()),
            (Ok(()), Some(p)) if p.starts_with('-') && !may_ignore => Some(
                "a leading `-` (ignore failure) only works in `exec-start-pre` and \
                 `exec-stop-post`"
                    .to_string(),
            ),
            _ => None,
        };
        if let Some(why) = problem {
            self.sink
                .error(node.pos, format!("bad command in `{key}`: {why}"));
            return None;
        }
        let mut cmd = Command::new(std::mem::take(&mut words));
        cmd.ignore_failure = ignore_failure;
        Some(cmd)
    }

    pub(super) fn duration(&mut self, e: &Entry<'n>) -> Option<Duration> {
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

    /// A whole number from 0 to 2^32 - 1.
    pub(super) fn count(&mut self, e: &Entry<'n>) -> Option<u32> {
        let Some(text) = e.value.string_or_number() else {
            self.type_error(e.value, &format!("a whole number for `{}`", e.key));
            return None;
        };
        match check::count(&text) {
            Ok(n) => Some(n),
            Err(why) => {
                self.sink
                    .error(e.value.pos, format!("bad number for `{}`: {why}", e.key));
                None
            }
        }
    }

    pub(super) fn positive_duration(&mut self, e: &Entry<'n>) -> Option<Duration> {
        let d = self.duration(e)?;
        if d.is_zero() {
            self.sink
                .error(e.value.pos, format!("`{}` must be longer than 0", e.key));
            return None;
        }
        Some(d)
    }

    pub(super) fn regex(&mut self, e: &Entry<'n>) -> Option<String> {
        let pattern = self.text(e, "a regular expression")?;
        match check::regex(&pattern) {
            Ok(()) => Some(pattern),
            Err(Invalid::Regex { why, at }) => {
                let pos = at.map_or(e.value.pos, |at| e.value.pos_at(at));
                self.sink.error(
                    pos,
                    format!("bad regular expression for `{}`: {why}", e.key),
                );
                None
            }
            Err(other) => {
                self.sink.error(
                    e.value.pos,
                    format!("bad regular expression for `{}`: {other}", e.key),
                );
                None
            }
        }
    }

    pub(super) fn bus_name(&mut self, e: &Entry<'n>) -> Option<String> {
        let name = self.text(e, "a D-Bus name")?;
        match check::bus_name(&name) {
            Ok(()) => Some(name),
            Err(why) => {
                self.sink
                    .error(e.value.pos, format!("`{}`: `{name}` is {why}", e.key));
                None
            }
        }
    }

    pub(super) fn restart(&mut self, e: &Entry<'n>) -> Option<RestartPolicy> {
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

    pub(super) fn signal(&mut self, e: &Entry<'n>) -> Option<Signal> {
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

    /// A whole number that fits an `i32` (`preference`).
    pub(super) fn integer(&mut self, e: &Entry<'n>) -> Option<i32> {
        let Value::Int(n) = e.value.value else {
            self.sink.error(
                e.value.pos,
                format!(
                    "expected a whole number for `{}`, found {}",
                    e.key,
                    e.value.kind()
                ),
            );
            return None;
        };
        let n = i32::try_from(n);
        if n.is_err() {
            self.sink.error(
                e.value.pos,
                format!("`{}` must be between {} and {}", e.key, i32::MIN, i32::MAX),
            );
        }
        n.ok()
    }

    /// `user`, `group`: a name or a number.
    pub(super) fn account(&mut self, e: &Entry<'n>) -> Option<String> {
        let text = self.text(e, &format!("a {} name or number", e.key))?;
        if check::account(&text).is_err() {
            self.sink.error(
                e.value.pos,
                format!("invalid `{}` `{}`", e.key, text.escape_debug()),
            );
            return None;
        }
        Some(text)
    }

    pub(super) fn path(&mut self, e: &Entry<'n>) -> Option<PathBuf> {
        let text = self.text(e, "a path")?;
        self.absolute(e.key, &text, e.value.pos)
    }

    pub(super) fn absolute(&mut self, key: &str, text: &str, pos: Pos) -> Option<PathBuf> {
        match check::path(text) {
            Ok(()) => Some(PathBuf::from(text)),
            Err(Invalid::EmptyPath) => {
                self.sink.error(pos, format!("`{key}` is an empty path"));
                None
            }
            Err(_) => {
                self.sink.error(
                    pos,
                    format!(
                        "`{key}` must be an absolute path (starting with `/`), found `{}`",
                        text.escape_debug()
                    ),
                );
                None
            }
        }
    }

    pub(super) fn environment(&mut self, e: &Entry<'n>) -> BTreeMap<String, String> {
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
            if check::variable_name(name).is_err() {
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

    pub(super) fn environment_files(&mut self, e: &Entry<'n>) -> Vec<(PathBuf, bool)> {
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

    /// A boolean: YAML's `true`/`false`, or systemd's words (`yes`, `no`,
    /// `on`, `off`, `1`, `0`).
    pub(super) fn boolean(&mut self, e: &Entry<'n>) -> Option<bool> {
        let text = match &e.value.value {
            Value::Bool(b) => return Some(*b),
            _ => e.value.string_or_number(),
        };
        match text.as_deref().map(crate::context::value::parse_bool) {
            Some(Ok(b)) => Some(b),
            Some(Err(why)) => {
                self.sink
                    .error(e.value.pos, format!("invalid `{}`: {why}", e.key));
                None
            }
            None => {
                self.type_error(e.value, &format!("`true` or `false` for `{}`", e.key));
                None
            }
        }
    }

    /// The scalars of a value: one, or each of a list, with its position.
    /// A null is the empty value (systemd's empty assignment: the key's
    /// default).
    pub(super) fn scalars(&mut self, e: &Entry<'n>, what: &str) -> Vec<(String, Pos)> {
        let items: Vec<&Node> = match &e.value.value {
            Value::Seq(items) => items.iter().collect(),
            Value::Null => return vec![(String::new(), e.value.pos)],
            _ => vec![e.value],
        };
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            match item.text() {
                Some(t) if t.contains('\0') => self
                    .sink
                    .error(item.pos, format!("`{}` contains a NUL character", e.key)),
                Some(t) => out.push((t, item.pos)),
                None => self.type_error(item, &format!("{what} for `{}`", e.key)),
            }
        }
        out
    }

    /// `success-exit-status`, `restart-prevent-exit-status`: exit codes
    /// and signal names, a list or one string of them.
    pub(super) fn action(&mut self, e: &Entry<'n>) -> Option<crate::spec::UnitAction> {
        let text = self.text(
            e,
            "an action (`poweroff`, `reboot`, `halt`, `exit`, `none`)",
        )?;
        match crate::spec::UnitAction::parse(&text) {
            Ok(a) => a,
            Err(why) => {
                self.sink
                    .error(e.value.pos, format!("invalid `{}`: {why}", e.key));
                None
            }
        }
    }

    pub(super) fn exit_set(&mut self, e: &Entry<'n>) -> ExitSet {
        let mut set = ExitSet::default();
        for (text, pos) in self.scalars(e, "exit statuses (`143`, `SIGTERM`)") {
            if let Err(why) = set.assign(&text) {
                self.sink.error(pos, format!("invalid `{}`: {why}", e.key));
            }
        }
        set
    }

    /// A key of the service context: each value given (each element of a
    /// list) is one assignment, in order, in systemd's syntax.
    pub(super) fn context_key(
        &mut self,
        e: &Entry<'n>,
        key: crate::context::Key,
        ctx: &mut crate::context::ServiceContext,
    ) {
        for (text, pos) in self.scalars(e, "a value") {
            if let Err(why) = ctx.set(key, &text) {
                self.sink.error(pos, format!("invalid `{}`: {why}", e.key));
            }
        }
    }

    /// A key read in systemd's syntax (a trigger's setting, a condition):
    /// one value (a string, number or boolean) or a list of them, each
    /// handed in order to `apply`, whose error is reported at the value.
    pub(super) fn systemd_values(
        &mut self,
        e: &Entry<'n>,
        mut apply: impl FnMut(&str) -> Result<(), String>,
    ) {
        let items: Vec<&Node> = match &e.value.value {
            Value::Seq(items) => items.iter().collect(),
            _ => vec![e.value],
        };
        for item in items {
            let Some(text) = item.text() else {
                self.type_error(
                    item,
                    &format!("a value for `{}` (a string, or a list of them)", e.key),
                );
                continue;
            };
            if let Err(why) = apply(&text) {
                self.sink
                    .error(item.pos, format!("bad value for `{}`: {why}", e.key));
            }
        }
    }
}
