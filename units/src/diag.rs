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
}
