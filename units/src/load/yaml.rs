//! A YAML document as a tree of nodes that each know their line and column,
//! and the checks shared by unit files and the init's config file (keys,
//! value types, suggestions).
//!
//! The document is read with `serde-saphyr` into [`Node`]s: every scalar,
//! list and mapping with its [`Pos`]. Nothing is validated at that stage
//! except YAML syntax and the parser's resource budget, so that validation
//! can report every problem of a file, in our own words, at the right place.

use crate::diag::{Diagnostic, Pos};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;
use std::collections::HashMap;
use std::fmt;

/// The largest file the loaders read: anything bigger is refused unread.
pub const MAX_FILE_SIZE: usize = 1024 * 1024;

/// One YAML node and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    /// 1-based line and column of the node (of its first entry for a block
    /// list or mapping).
    pub pos: Pos,
    /// The node's source text for scalars, when it is known (not for aliases).
    pub raw: Option<String>,
    /// The value.
    pub value: Value,
}

/// The value of a [`Node`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// `~`, `null`, or nothing at all (`key:`).
    Null,
    /// `true` or `false` (YAML 1.2 spellings only: `yes`, `no`, `on`, `off`
    /// stay strings).
    Bool(bool),
    /// An integer.
    Int(i128),
    /// A number with a fraction or exponent.
    Float(f64),
    /// Text.
    Str(String),
    /// A list.
    Seq(Vec<Node>),
    /// A mapping, entries in file order (duplicates kept, for the checks).
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// "a list", "a string", …: what the node is, for "expected X, found Y".
    pub fn kind(&self) -> &'static str {
        match self.value {
            Value::Null => "nothing",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    /// The text of a scalar as the user meant it: strings as they are,
    /// numbers as written (`0755`, `1.50`), booleans as `true`/`false`.
    /// `None` for null, lists and mappings.
    pub fn text(&self) -> Option<String> {
        match &self.value {
            Value::Str(s) => Some(s.clone()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Int(_) | Value::Float(_) => Some(self.number_text()),
            Value::Null | Value::Seq(_) | Value::Map(_) => None,
        }
    }

    /// The text of a string or number (not of a boolean).
    pub fn string_or_number(&self) -> Option<String> {
        match &self.value {
            Value::Str(s) => Some(s.clone()),
            Value::Int(_) | Value::Float(_) => Some(self.number_text()),
            _ => None,
        }
    }

    fn number_text(&self) -> String {
        let looks_numeric = |r: &str| {
            !r.is_empty()
                && r.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-._".contains(c))
        };
        match (&self.raw, &self.value) {
            (Some(r), _) if looks_numeric(r) => r.clone(),
            (_, Value::Int(n)) => n.to_string(),
            (_, Value::Float(x)) => x.to_string(),
            _ => String::new(),
        }
    }

    /// Where the first character of a string value is, when the value is a
    /// one-line plain or quoted scalar whose source text shows it unchanged
    /// (so that character `i` is `i` columns further); `None` otherwise.
    pub fn text_start(&self) -> Option<Pos> {
        let (Some(raw), Value::Str(s)) = (&self.raw, &self.value) else {
            return None;
        };
        if raw.contains(['\n', '\r']) {
            return None;
        }
        let shift = if raw == s {
            0
        } else if raw.len() >= 2
            && (raw.starts_with('"') && raw.ends_with('"')
                || raw.starts_with('\'') && raw.ends_with('\''))
            && raw.get(1..raw.len() - 1) == Some(s.as_str())
        {
            1
        } else {
            return None;
        };
        Some(Pos::new(self.pos.line, self.pos.col.saturating_add(shift)))
    }

    /// The position of character `offset` of a string value (see
    /// [`Node::text_start`]), or the node's own position.
    pub fn pos_at(&self, offset: usize) -> Pos {
        shifted(self.text_start(), offset).unwrap_or(self.pos)
    }
}

impl Node {
    /// Moves the node and everything in it `by` lines down (a drop-in read
    /// as lines after its unit file's: [`crate::diag::Joined`]).
    pub fn shift_lines(&mut self, by: u32) {
        self.pos = crate::diag::Joined::shift(by, self.pos);
        match &mut self.value {
            Value::Seq(items) => items.iter_mut().for_each(|n| n.shift_lines(by)),
            Value::Map(entries) => entries.iter_mut().for_each(|(k, v)| {
                k.shift_lines(by);
                v.shift_lines(by);
            }),
            _ => {}
        }
    }
}

/// `start` moved `offset` columns to the right.
pub(crate) fn shifted(start: Option<Pos>, offset: usize) -> Option<Pos> {
    let start = start?;
    let add = u32::try_from(offset).ok()?;
    Some(Pos::new(start.line, start.col.saturating_add(add)))
}

/// One node as read, before its source text is attached.
struct RawNode {
    pos: Pos,
    span: Option<(usize, usize)>,
    value: RawValue,
}

/// The value of a [`RawNode`].
enum RawValue {
    Scalar(Value),
    Seq(Vec<RawNode>),
    Map(Vec<(RawNode, RawNode)>),
}

impl<'de> Deserialize<'de> for RawNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawNode, D::Error> {
        let s = Spanned::<RawValue>::deserialize(d)?;
        let loc = s.referenced;
        let span = loc.span();
        let span = match (span.byte_offset(), span.byte_len()) {
            (Some(a), Some(n)) => usize::try_from(a).ok().zip(usize::try_from(n).ok()),
            _ => None,
        };
        Ok(RawNode {
            pos: Pos::new(clamp(loc.line()), clamp(loc.column())),
            span,
            value: s.value,
        })
    }
}

fn clamp(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl<'de> Deserialize<'de> for RawValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawValue, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

fn scalar<E>(v: Value) -> Result<RawValue, E> {
    Ok(RawValue::Scalar(v))
}

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = RawValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<RawValue, E> {
        scalar(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<RawValue, E> {
        scalar(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<RawValue, D::Error> {
        RawValue::deserialize(d)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<RawValue, D::Error> {
        RawValue::deserialize(d)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawValue, E> {
        scalar(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawValue, E> {
        scalar(Value::Int(i128::from(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawValue, E> {
        scalar(Value::Int(i128::from(v)))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<RawValue, E> {
        scalar(Value::Int(v))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<RawValue, E> {
        // Beyond i128 precision is lost, but the text is kept in `raw`.
        scalar(i128::try_from(v).map_or(Value::Float(v as f64), Value::Int))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawValue, E> {
        scalar(Value::Float(v))
    }

    fn visit_char<E: de::Error>(self, v: char) -> Result<RawValue, E> {
        scalar(Value::Str(v.to_string()))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawValue, E> {
        scalar(Value::Str(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<RawValue, E> {
        scalar(Value::Str(v))
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<RawValue, E> {
        scalar(Value::Str(String::from_utf8_lossy(v).into_owned()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<RawValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = a.next_element::<RawNode>()? {
            items.push(item);
        }
        Ok(RawValue::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<RawValue, A::Error> {
        let mut entries = Vec::new();
        while let Some(k) = a.next_key::<RawNode>()? {
            let v = a.next_value::<RawNode>()?;
            entries.push((k, v));
        }
        Ok(RawValue::Map(entries))
    }
}

impl RawNode {
    /// Attaches the source text of scalars. The depth is bounded by the
    /// parser's budget, so the recursion is too.
    fn finish(self, text: &str) -> Node {
        let span = self.span;
        let raw = || {
            let (a, n) = span?;
            text.get(a..a.checked_add(n)?).map(str::to_string)
        };
        let (raw, value) = match self.value {
            RawValue::Scalar(v) => (raw(), v),
            RawValue::Seq(items) => (
                None,
                Value::Seq(items.into_iter().map(|n| n.finish(text)).collect()),
            ),
            RawValue::Map(entries) => (
                None,
                Value::Map(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.finish(text), v.finish(text)))
                        .collect(),
                ),
            ),
        };
        Node {
            pos: self.pos,
            raw,
            value,
        }
    }
}

/// The parser's options: our own duplicate-key check (so that every
/// duplicate is reported with both places), YAML 1.2 booleans only (so that
/// `restart: no` and `NAME: yes` stay text), numbers with leading zeros or
/// underscores kept as written, and a budget far below what could hurt the
/// init but far above any sensible unit file.
fn options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_reader_input_bytes: Some(MAX_FILE_SIZE + 1),
            max_events: 200_000,
            max_aliases: 1_000,
            max_anchors: 1_000,
            max_depth: 32,
            max_nodes: 100_000,
            max_documents: 2,
            max_total_scalar_bytes: 2 * MAX_FILE_SIZE,
            max_merge_keys: 1_000,
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: 20_000,
            max_replay_stack_depth: 16,
        },
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::PassThrough,
        strict_booleans: true,
        leading_zero_numbers_as_strings: true,
        underscored_numbers_as_strings: true,
        non_finite_float_policy: serde_saphyr::NonFiniteFloatPolicy::PassThrough,
        with_snippet: false,
    }
}

/// Parses `text` (the contents of `file`) as one YAML document. `Ok(None)`
/// for a document with no content (empty, or only comments); `Err` with a
/// positioned diagnostic for a file that is too large or not YAML.
pub(crate) fn parse(file: &str, text: &str) -> Result<Option<Node>, Diagnostic> {
    if text.len() > MAX_FILE_SIZE {
        return Err(Diagnostic::error(
            file,
            Pos::new(1, 1),
            format!(
                "the file is {} bytes; the limit is 1 MiB ({MAX_FILE_SIZE} bytes)",
                text.len()
            ),
        ));
    }
    match serde_saphyr::from_str_with_options::<Option<RawNode>>(text, options()) {
        Ok(root) => Ok(root.map(|n| n.finish(text))),
        Err(e) => Err(yaml_error(file, &e)),
    }
}

/// A parser error as a diagnostic at the parser's position.
fn yaml_error(file: &str, e: &serde_saphyr::Error) -> Diagnostic {
    use serde_saphyr::MessageFormatter;
    let pos = e.location().map_or(Pos::new(1, 1), |l| {
        Pos::new(clamp(l.line()), clamp(l.column()))
    });
    let pos = if pos.line == 0 { Pos::new(1, 1) } else { pos };
    let inner = e.without_snippet();
    let message = match inner {
        serde_saphyr::Error::MultipleDocuments { .. } => {
            "a second YAML document starts here; a file holds exactly one".to_string()
        }
        serde_saphyr::Error::Budget { breach, .. } => {
            format!("the YAML is too large or too deeply nested ({breach:?})")
        }
        serde_saphyr::Error::InvalidUtf8Input => "the file is not valid UTF-8".to_string(),
        other => {
            let text = serde_saphyr::DefaultMessageFormatter.format_message(other);
            format!("invalid YAML: {}", printable(&text))
        }
    };
    Diagnostic::error(file, pos, message)
}

/// `s` with control characters escaped, so that a message stays on one line.
pub(crate) fn printable(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The most diagnostics one file gets; the rest are counted in a last one.
pub const MAX_DIAGNOSTICS: usize = 100;

/// Where diagnostics of one file go.
pub(crate) struct Sink<'a> {
    /// The file, as the diagnostics name it.
    pub file: &'a str,
    /// Everything found so far (at most [`MAX_DIAGNOSTICS`]).
    pub diagnostics: Vec<Diagnostic>,
    /// Errors and warnings beyond the first [`MAX_DIAGNOSTICS`].
    dropped: (usize, usize),
}

impl<'a> Sink<'a> {
    /// An empty sink for `file`.
    pub fn new(file: &'a str) -> Sink<'a> {
        Sink {
            file,
            diagnostics: Vec::new(),
            dropped: (0, 0),
        }
    }

    /// Records a diagnostic (or counts it, past the limit).
    pub fn push(&mut self, d: Diagnostic) {
        if self.diagnostics.len() < MAX_DIAGNOSTICS {
            self.diagnostics.push(d);
        } else if d.is_error() {
            self.dropped.0 += 1;
        } else {
            self.dropped.1 += 1;
        }
    }

    /// True once further diagnostics are only counted.
    pub fn is_full(&self) -> bool {
        self.diagnostics.len() >= MAX_DIAGNOSTICS
    }

    /// Records an error.
    pub fn error(&mut self, pos: Pos, message: impl Into<String>) {
        self.push(Diagnostic::error(self.file, pos, message));
    }

    /// Records a warning.
    pub fn warning(&mut self, pos: Pos, message: impl Into<String>) {
        self.push(Diagnostic::warning(self.file, pos, message));
    }

    /// True when an error was recorded.
    pub fn has_errors(&self) -> bool {
        self.dropped.0 > 0 || self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The diagnostics in file order (stable: the same place keeps the order
    /// in which they were found), and a last one counting those left out.
    pub fn into_sorted(mut self) -> Vec<Diagnostic> {
        self.diagnostics.sort_by_key(|d| d.pos);
        let (errors, warnings) = self.dropped;
        if errors + warnings > 0 {
            let message = format!(
                "{errors} more errors and {warnings} more warnings in this file are not shown"
            );
            let last = self.diagnostics.last().map_or(Pos::default(), |d| d.pos);
            self.diagnostics.push(if errors > 0 {
                Diagnostic::error(self.file, last, message)
            } else {
                Diagnostic::warning(self.file, last, message)
            });
        }
        self.diagnostics
    }
}

/// One entry of a mapping whose key is a known name.
pub(crate) struct Entry<'n> {
    /// The key, one of the known names.
    pub key: &'static str,
    /// Where the key is.
    pub key_pos: Pos,
    /// The value.
    pub value: &'n Node,
}

/// Checks the keys of a mapping against `known` and returns the entries with
/// a known key, first occurrence of each. Reports keys that are not text,
/// unknown keys (with a suggestion), and repeated keys (naming where the
/// first one is). `what` names a key in messages ("key", "config key").
pub(crate) fn known_entries<'n>(
    entries: &'n [(Node, Node)],
    known: &[&'static str],
    what: &str,
    sink: &mut Sink<'_>,
) -> Vec<Entry<'n>> {
    let mut out: Vec<Entry<'n>> = Vec::new();
    let mut seen: HashMap<&str, Pos> = HashMap::new();
    for (k, v) in entries {
        let name = match &k.value {
            Value::Str(s) => s.as_str(),
            _ => {
                let shown = k.text().map(|t| format!(" `{t}`")).unwrap_or_default();
                sink.error(
                    k.pos,
                    format!("a {what} must be a name, found {}{shown}", k.kind()),
                );
                continue;
            }
        };
        if let Some(first) = seen.get(name) {
            sink.error(
                k.pos,
                format!(
                    "duplicate {what} `{}` (first given at line {}, column {})",
                    name.escape_debug(),
                    first.line,
                    first.col
                ),
            );
            continue;
        }
        seen.insert(name, k.pos);
        match known.iter().find(|&&n| n == name) {
            Some(&key) => out.push(Entry {
                key,
                key_pos: k.pos,
                value: v,
            }),
            None => {
                // Past the limit the message is only counted: skip the search.
                let hint = match (!sink.is_full()).then(|| suggest(name, known)).flatten() {
                    Some(s) => format!("; did you mean `{s}`?"),
                    None => String::new(),
                };
                sink.error(
                    k.pos,
                    format!("unknown {what} `{}`{hint}", name.escape_debug()),
                );
            }
        }
    }
    out
}

/// The candidate closest to `word`, if one is close enough to be a likely
/// typo: the comparison ignores case and treats `_` as `-`, and allows 1
/// edit for words up to 3 letters, 2 up to 6, 3 beyond.
pub(crate) fn suggest<'c>(word: &str, candidates: &[&'c str]) -> Option<&'c str> {
    let norm = |s: &str| -> Vec<char> {
        s.chars()
            .map(|c| {
                if c == '_' {
                    '-'
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect()
    };
    let w = norm(word);
    if w.is_empty() || w.len() > 64 {
        return None;
    }
    let limit = match w.len() {
        0..=3 => 1,
        4..=6 => 2,
        _ => 3,
    };
    // The distance is at least the difference in length: most candidates
    // are ruled out without filling a table.
    candidates
        .iter()
        .filter(|c| c.chars().count().abs_diff(w.len()) <= limit)
        .map(|&c| (distance(&w, &norm(c)), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Edit distance with adjacent transpositions (optimal string alignment).
fn distance(a: &[char], b: &[char]) -> usize {
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        d[i * w] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = best;
        }
    }
    d[a.len() * w + b.len()]
}

#[cfg(test)]
#[path = "yaml_tests.rs"]
mod tests;
