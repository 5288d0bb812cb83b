//! The checks of a key's value, the same whichever syntax the value came
//! in (YAML, systemd's INI, the JSON of a transient unit): each says what
//! is wrong as an [`Invalid`], and each reader puts that in its own words
//! at its own place.

use crate::unit_name::valid_systemd_name;
use std::fmt;
use std::time::Duration;

/// What is wrong with a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    /// A unit or target name with a character outside `[A-Za-z0-9:_.@-]`,
    /// or empty.
    Name,
    /// Text with a NUL character.
    Nul,
    /// An empty path.
    EmptyPath,
    /// A path that does not start with `/`.
    RelativePath,
    /// A command without words.
    EmptyCommand,
    /// A command whose program is the empty word.
    EmptyProgram,
    /// A word of a command with a NUL character.
    NulInCommand,
    /// A regular expression that does not compile: why, and at which
    /// character the longest valid start of it ends (none when the whole
    /// expression is too big once compiled).
    Regex {
        /// Why, for people.
        why: String,
        /// The character the problem is at.
        at: Option<usize>,
    },
    /// A duration that must be longer than 0.
    Zero,
    /// A signal number outside 1 to 64.
    Signal,
    /// Not a whole number from 0 to 4294967295.
    Count,
    /// A user or group name that is empty, or has blanks or `:`.
    Account,
    /// An environment variable name that is empty, or has `=`, blanks or
    /// control characters.
    VariableName,
    /// Not a D-Bus well-known name.
    BusName,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Invalid::Name => write!(f, "a name has only letters, digits and `:_.@-`"),
            Invalid::Nul => write!(f, "it contains a NUL character"),
            Invalid::EmptyPath => write!(f, "an empty path"),
            Invalid::RelativePath => write!(f, "not an absolute path (starting with `/`)"),
            Invalid::EmptyCommand => write!(f, "empty command"),
            Invalid::EmptyProgram => write!(f, "the program name is empty"),
            Invalid::NulInCommand => write!(f, "a word contains a NUL character"),
            Invalid::Regex { why, .. } => write!(f, "bad regular expression: {why}"),
            Invalid::Zero => write!(f, "must be longer than 0"),
            Invalid::Signal => write!(f, "a signal is a number from 1 to 64"),
            Invalid::Count => write!(f, "not a whole number from 0 to 4294967295"),
            Invalid::Account => f.write_str(crate::account::INVALID),
            Invalid::VariableName => write!(
                f,
                "a variable name has no `=`, blanks or control characters"
            ),
            Invalid::BusName => write!(f, "not a D-Bus well-known name"),
        }
    }
}

/// A unit or target name (a systemd unit's may hold `\`).
pub fn name(s: &str) -> Result<(), Invalid> {
    if valid_systemd_name(s) {
        Ok(())
    } else {
        Err(Invalid::Name)
    }
}

/// A D-Bus well-known name: at most 255 characters, two or more elements
/// separated by `.`, each of `[A-Za-z0-9_-]` and not starting with a digit.
pub fn bus_name(v: &str) -> Result<(), Invalid> {
    let element = |e: &str| {
        !e.is_empty()
            && !e.starts_with(|c: char| c.is_ascii_digit())
            && e.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    if v.len() <= 255 && v.split('.').count() >= 2 && v.split('.').all(element) {
        Ok(())
    } else {
        Err(Invalid::BusName)
    }
}

/// Free text.
pub fn text(s: &str) -> Result<(), Invalid> {
    if s.contains('\0') {
        Err(Invalid::Nul)
    } else {
        Ok(())
    }
}

/// An absolute path.
pub fn path(s: &str) -> Result<(), Invalid> {
    if s.is_empty() {
        Err(Invalid::EmptyPath)
    } else if !s.starts_with('/') {
        Err(Invalid::RelativePath)
    } else {
        Ok(())
    }
}

/// The words of a command: a program, and no NUL anywhere.
pub fn command<'a>(words: impl IntoIterator<Item = &'a str>) -> Result<(), Invalid> {
    let mut words = words.into_iter();
    match words.next() {
        None => Err(Invalid::EmptyCommand),
        Some("") => Err(Invalid::EmptyProgram),
        Some(program) if program.contains('\0') || words.any(|w| w.contains('\0')) => {
            Err(Invalid::NulInCommand)
        }
        Some(_) => Ok(()),
    }
}

/// A duration that must be longer than 0.
pub fn timeout(d: Duration) -> Result<(), Invalid> {
    if d.is_zero() {
        Err(Invalid::Zero)
    } else {
        Ok(())
    }
}

/// A signal number.
pub fn signal(n: i32) -> Result<(), Invalid> {
    if (1..=64).contains(&n) {
        Ok(())
    } else {
        Err(Invalid::Signal)
    }
}

/// A count: a whole number from 0 to 2^32 - 1, in decimal digits.
pub fn count(s: &str) -> Result<u32, Invalid> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Invalid::Count);
    }
    s.parse().map_err(|_| Invalid::Count)
}

/// A user or group name or number ([`crate::account::valid`]).
pub fn account(s: &str) -> Result<(), Invalid> {
    if crate::account::valid(s) {
        Ok(())
    } else {
        Err(Invalid::Account)
    }
}

/// An environment variable's name.
pub fn variable_name(s: &str) -> Result<(), Invalid> {
    if s.is_empty()
        || s.chars()
            .any(|c| c == '=' || c.is_whitespace() || c.is_control())
    {
        Err(Invalid::VariableName)
    } else {
        Ok(())
    }
}

/// The most a `ready-grep` expression may take once compiled.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// The longest `ready-grep` expression, in characters. Locating the error
/// in a bad one compiles each of its prefixes, so its length bounds what a
/// bad unit file costs the loader (a few milliseconds at this length).
pub const REGEX_MAX_CHARS: usize = 1024;

/// A `ready-grep` expression, compiled as the init will (`regex-lite`),
/// with the size limit.
pub fn regex(pattern: &str) -> Result<(), Invalid> {
    let chars = pattern.chars().count();
    if chars > REGEX_MAX_CHARS {
        return Err(Invalid::Regex {
            why: format!(
                "the expression is {chars} characters long (the limit is {REGEX_MAX_CHARS})"
            ),
            at: Some(REGEX_MAX_CHARS),
        });
    }
    let Err(err) = compile_regex(pattern) else {
        return Ok(());
    };
    // `regex-lite` reports an error as text only: the size limit is told
    // apart by that text, the one place it is read.
    let text = err.to_string();
    if text == "compiled regex exceeded size limit" {
        return Err(Invalid::Regex {
            why: "the expression is too big once compiled (the limit is 1 MiB)".to_string(),
            at: None,
        });
    }
    Err(Invalid::Regex {
        why: text,
        at: Some(regex_error_offset(pattern)),
    })
}

fn compile_regex(pattern: &str) -> Result<(), regex_lite::Error> {
    regex_lite::RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map(drop)
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
