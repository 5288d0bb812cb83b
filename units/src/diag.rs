//! Diagnostics: problems found in unit files, each naming file, line and column.
//!
//! Rendered as `FILE:LINE:COL: message` (or `FILE: message` when the position
//! is not known), the format compilers use, so editors can jump to it.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The unit set still loads; something is probably not what was meant.
    Warning,
    /// The unit (or, on reload, the whole set) is refused.
    Error,
}

/// A position in a file: 1-based line and column (0 when unknown).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub struct Pos {
    /// 1-based line, 0 when unknown.
    pub line: u32,
    /// 1-based column, 0 when unknown.
    pub col: u32,
}

impl Pos {
    /// A known position.
    pub fn new(line: u32, col: u32) -> Pos {
        Pos { line, col }
    }
}

/// One problem in a unit file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Diagnostic {
    /// The file, as given to the loader (usually a path inside the units directory).
    pub file: String,
    /// Where in the file.
    pub pos: Pos,
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong, lowercase, no trailing period.
    pub message: String,
}

impl Diagnostic {
    /// An error at `pos` in `file`.
    pub fn error(file: impl Into<String>, pos: Pos, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            file: file.into(),
            pos,
            severity: Severity::Error,
            message: one_line(message.into()),
        }
    }

    /// A warning at `pos` in `file`.
    pub fn warning(file: impl Into<String>, pos: Pos, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            file: file.into(),
            pos,
            severity: Severity::Warning,
            message: one_line(message.into()),
        }
    }

    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// A message on one line: a value quoted in it may come from a multi-line
/// YAML scalar, and a diagnostic is one `FILE:LINE:COL: message` line (for
/// editors and for `grep`), so line breaks and other control characters
/// (tabs aside) are written as escapes (`\n`, `\r`, `\u{1b}`).
fn one_line(message: String) -> String {
    if !message.chars().any(|c| c.is_control() && c != '\t') {
        return message;
    }
    let mut out = String::with_capacity(message.len() + 8);
    for c in message.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push(c),
            c if c.is_control() => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    out
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Warning => "warning: ",
            Severity::Error => "",
        };
        if self.pos.line == 0 {
            write!(f, "{}: {}{}", self.file, sev, self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}{}",
                self.file, self.pos.line, self.pos.col, sev, self.message
            )
        }
    }
}

/// Several files read as one, as a unit file and its drop-ins are: the
/// lines of each file are numbered after those of the files before it, so
/// that one [`Pos`] says both the file and the line. A reader of the merged
/// options (the systemd translator, the YAML unit checker) reports at such
/// positions in the first file; [`Joined::place`] moves each diagnostic to
/// the file and line it is about.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Joined {
    /// Each file and the number of lines before its first one.
    files: Vec<(String, u32)>,
    /// The number of lines of every file so far.
    lines: u32,
}

impl Joined {
    /// Adds a file with its text; returns how far its lines are moved.
    pub fn push(&mut self, file: &str, text: &str) -> u32 {
        let base = self.lines;
        let n = u32::try_from(text.matches('\n').count() + 1).unwrap_or(u32::MAX);
        self.files.push((file.to_string(), base));
        self.lines = self.lines.saturating_add(n);
        base
    }

    /// How far the lines of the `i`th file are moved (past the last file:
    /// the number of lines of all of them).
    pub fn base(&self, i: usize) -> u32 {
        self.files.get(i).map_or(self.lines, |(_, b)| *b)
    }

    /// `pos` of the file whose lines are moved by `base`, as a position of
    /// the whole (an unknown position stays unknown).
    pub fn shift(base: u32, pos: Pos) -> Pos {
        if pos.line == 0 {
            pos
        } else {
            Pos::new(pos.line.saturating_add(base), pos.col)
        }
    }

    /// The file and the position in it of a position of the whole; an
    /// unknown position belongs to the first file.
    pub fn locate(&self, pos: Pos) -> (&str, Pos) {
        let first = self.files.first().map_or("", |(f, _)| f.as_str());
        if pos.line == 0 {
            return (first, pos);
        }
        match self.files.iter().rev().find(|(_, base)| *base < pos.line) {
            Some((file, base)) => (file, Pos::new(pos.line - base, pos.col)),
            None => (first, pos),
        }
    }

    /// `d` (reported at a position of the whole) in its own file.
    pub fn place(&self, mut d: Diagnostic) -> Diagnostic {
        let (file, pos) = self.locate(d.pos);
        d.file = file.to_string();
        d.pos = pos;
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_line() {
        let d = Diagnostic::error(
            "f.yaml",
            Pos::new(6, 16),
            "unexpected `-` in `1m30s\n- net`",
        );
        assert_eq!(d.message, "unexpected `-` in `1m30s\\n- net`");
        assert_eq!(
            d.to_string(),
            "f.yaml:6:16: unexpected `-` in `1m30s\\n- net`"
        );
        let w = Diagnostic::warning("f.yaml", Pos::default(), "a\r\u{1b}b\tc");
        assert_eq!(w.message, "a\\r\\u{1b}b\tc");
        let plain = Diagnostic::error("f.yaml", Pos::default(), "no `x`");
        assert_eq!(plain.message, "no `x`");
    }

    #[test]
    fn joined_files_place_each_line_in_its_file() {
        let mut j = Joined::default();
        assert_eq!(j.push("a.service", "[Service]\nExecStart=/a\n"), 0);
        assert_eq!(j.push("a.service.d/x.conf", "[Service]\nNice=5"), 3);
        let at = |line| j.place(Diagnostic::error("a.service", Pos::new(line, 2), "m"));
        assert_eq!(at(2).to_string(), "a.service:2:2: m");
        assert_eq!(at(4).to_string(), "a.service.d/x.conf:1:2: m");
        assert_eq!(at(5).to_string(), "a.service.d/x.conf:2:2: m");
        assert_eq!(Joined::shift(3, Pos::new(2, 1)), Pos::new(5, 1));
        let nowhere = j.place(Diagnostic::error("a.service", Pos::default(), "m"));
        assert_eq!(nowhere.to_string(), "a.service: m");
    }
}
