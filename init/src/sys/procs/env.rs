//! A child's environment: an ordered set of `KEY=VALUE` variables, and the
//! parser for environment files (docs/contract.md §3 `environment-files`, systemd's
//! `EnvironmentFile=`).
//!
//! The loop builds one [`Env`] per start: the init's own environment
//! ([`Env::from_current`], captured once), then each environment file
//! ([`Env::extend_file`]), then the unit's `environment` map, then
//! `NOTIFY_SOCKET` / `MAINPID` / `INIT_UNIT` — later settings replace
//! earlier ones — and last takes out what `UnsetEnvironment=` names. [`crate::sys::Sys::spawn`] turns it into the `envp` block
//! with two allocations. Nothing here does I/O.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// The `PATH` used to find a program when the environment has none (as
/// systemd's default for system services).
pub const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// A problem with a variable or an environment file. The caller adds the
/// file's path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvError {
    /// A name that is empty or holds `=` or NUL (for files: that is not
    /// `[A-Za-z_][A-Za-z0-9_]*`).
    #[error("invalid variable name {0:?}")]
    InvalidName(String),
    /// A value holding a NUL byte.
    #[error("variable {0}: value contains a NUL byte")]
    Nul(String),
    /// A line of an environment file that cannot be parsed.
    #[error("line {line}: {message}")]
    Syntax {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: &'static str,
    },
}

/// An environment: variables by name, each set once, iterated in name
/// order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    vars: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl Env {
    /// An empty environment.
    pub fn new() -> Env {
        Env::default()
    }

    /// The init's own environment (variables whose names are invalid are
    /// left out).
    pub fn from_current() -> Env {
        let mut env = Env::new();
        for (k, v) in std::env::vars_os() {
            // Cannot fail for the process's own environment, except for
            // odd names, which are dropped.
            let _ = env.set_bytes(k.as_bytes(), v.as_bytes());
        }
        env
    }

    /// Sets `key` to `value`, replacing any earlier value.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), EnvError> {
        self.set_bytes(key.as_bytes(), value.as_bytes())
    }

    /// [`Env::set`] for `OsStr` values such as paths.
    pub fn set_os(&mut self, key: &str, value: &OsStr) -> Result<(), EnvError> {
        self.set_bytes(key.as_bytes(), value.as_bytes())
    }

    /// Sets `key` to `value` given as bytes.
    pub fn set_bytes(&mut self, key: &[u8], value: &[u8]) -> Result<(), EnvError> {
        if key.is_empty() || key.contains(&b'=') || key.contains(&0) {
            return Err(EnvError::InvalidName(
                String::from_utf8_lossy(key).into_owned(),
            ));
        }
        if value.contains(&0) {
            return Err(EnvError::Nul(String::from_utf8_lossy(key).into_owned()));
        }
        match self.vars.get_mut(key) {
            Some(v) => {
                v.clear();
                v.extend_from_slice(value);
            }
            None => {
                self.vars.insert(key.to_vec(), value.to_vec());
            }
        }
        Ok(())
    }

    /// Removes `key`.
    pub fn remove(&mut self, key: &str) {
        self.vars.remove(key.as_bytes());
    }

    /// `UnsetEnvironment=`'s rule for one entry: `NAME` removes the
    /// variable; `NAME=value` removes it only if that is its value.
    pub fn unset(&mut self, entry: &str) {
        match entry.split_once('=') {
            Some((name, value)) => {
                if self.get(name) == Some(value.as_bytes()) {
                    self.remove(name);
                }
            }
            None => self.remove(entry),
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&[u8]> {
        self.vars.get(key.as_bytes()).map(Vec::as_slice)
    }

    /// The number of variables.
    pub fn len(&self) -> usize {
        self.vars.len()
    }

    /// Whether there are no variables.
    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }

    /// The variables in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.vars.iter().map(|(k, v)| (k.as_slice(), v.as_slice()))
    }

    /// Parses an environment file ([`parse_env_file`]) and sets each of its
    /// variables, in order. On error nothing is set.
    pub fn extend_file(&mut self, text: &[u8]) -> Result<(), EnvError> {
        for (k, v) in parse_env_file(text)? {
            self.set_bytes(&k, &v)?;
        }
        Ok(())
    }
}

/// One variable of an environment file: name and value, as bytes.
pub type EnvVar = (Vec<u8>, Vec<u8>);

/// Whether `name` is a variable name an environment file may set:
/// `[A-Za-z_][A-Za-z0-9_]*`.
fn valid_file_name(name: &[u8]) -> bool {
    match name.split_first() {
        Some((first, rest)) => {
            (first.is_ascii_alphabetic() || *first == b'_')
                && rest.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
        }
        None => false,
    }
}

/// Parses an environment file: `KEY=VALUE` lines, as systemd's
/// `EnvironmentFile=` reads them.
///
/// - Blank lines and lines starting (after blanks) with `#` or `;` are
///   comments. An `export ` before the name is allowed.
/// - The value starts after blanks following `=`. Unquoted text ends at the
///   end of the line, trailing blanks removed; `\` escapes the next
///   character and `\` at the end of a line joins the next line.
/// - `'…'` is literal; `"…"` may span lines and honours `\"`, `\\`, `\$`,
///   `` \` `` and `\`-newline (other backslashes stay). Quoted and unquoted
///   pieces concatenate, as in a shell.
/// - A NUL byte, an invalid name or an unterminated quote is an error with
///   its line number.
pub fn parse_env_file(text: &[u8]) -> Result<Vec<EnvVar>, EnvError> {
    let mut out = Vec::new();
    let mut p = Cursor {
        text,
        pos: 0,
        line: 1,
    };
    loop {
        // Start of a line: skip blanks.
        while matches!(p.peek(), Some(b' ' | b'\t' | b'\r')) {
            p.bump();
        }
        let Some(c) = p.peek() else { break };
        let start_line = p.line;
        if c == b'\n' {
            p.bump();
            continue;
        }
        if c == b'#' || c == b';' {
            p.skip_line();
            continue;
        }
        // The name, up to `=`.
        let name_start = p.pos;
        while let Some(c) = p.peek() {
            if c == b'=' || c == b'\n' {
                break;
            }
            p.bump();
        }
        let raw_name = text.get(name_start..p.pos).unwrap_or_default();
        let mut name = raw_name.trim_ascii();
        if let Some(rest) = name.strip_prefix(b"export") {
            if rest.first().is_some_and(|c| *c == b' ' || *c == b'\t') {
                name = rest.trim_ascii();
            }
        }
        if p.peek() != Some(b'=') {
            return Err(EnvError::Syntax {
                line: start_line,
                message: "expected KEY=VALUE",
            });
        }
        p.bump();
        if !valid_file_name(name) {
            return Err(EnvError::InvalidName(
                String::from_utf8_lossy(name).into_owned(),
            ));
        }
        let value = parse_value(&mut p)?;
        if value.contains(&0) {
            return Err(EnvError::Nul(String::from_utf8_lossy(name).into_owned()));
        }
        out.push((name.to_vec(), value));
    }
    Ok(out)
}

struct Cursor<'a> {
    text: &'a [u8],
    pos: usize,
    line: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.pos += 1;
        if c == b'\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn skip_line(&mut self) {
        while let Some(c) = self.bump() {
            if c == b'\n' {
                break;
            }
        }
    }
}

/// One value, from after `=` to the end of its (last) line.
fn parse_value(p: &mut Cursor<'_>) -> Result<Vec<u8>, EnvError> {
    while matches!(p.peek(), Some(b' ' | b'\t')) {
        p.bump();
    }
    let mut value = Vec::new();
    // Length of `value` up to the last character that must not be trimmed
    // (quoted or escaped), so that trailing unquoted blanks can be cut.
    let mut keep = 0;
    loop {
        let line = p.line;
        match p.bump() {
            None | Some(b'\n') => break,
            Some(b'\\') => match p.bump() {
                None => break,
                Some(b'\n') => {}
                Some(c) => {
                    value.push(c);
                    keep = value.len();
                }
            },
            Some(b'\'') => {
                loop {
                    match p.bump() {
                        None => return Err(unterminated(line, "'")),
                        Some(b'\'') => break,
                        Some(c) => value.push(c),
                    }
                }
                keep = value.len();
            }
            Some(b'"') => {
                loop {
                    match p.bump() {
                        None => return Err(unterminated(line, "\"")),
                        Some(b'"') => break,
                        Some(b'\\') => match p.bump() {
                            None => return Err(unterminated(line, "\"")),
                            Some(b'\n') => {}
                            Some(c @ (b'"' | b'\\' | b'$' | b'`')) => value.push(c),
                            Some(c) => {
                                value.push(b'\\');
                                value.push(c);
                            }
                        },
                        Some(c) => value.push(c),
                    }
                }
                keep = value.len();
            }
            Some(c) => {
                value.push(c);
                if !matches!(c, b' ' | b'\t' | b'\r') {
                    keep = value.len();
                }
            }
        }
    }
    value.truncate(keep);
    Ok(value)
}

fn unterminated(line: usize, quote: &'static str) -> EnvError {
    let message = if quote == "'" {
        "unterminated single quote"
    } else {
        "unterminated double quote"
    };
    EnvError::Syntax { line, message }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Vec<(String, String)>, EnvError> {
        parse_env_file(s.as_bytes()).map(|v| {
            v.into_iter()
                .map(|(k, v)| {
                    (
                        String::from_utf8_lossy(&k).into_owned(),
                        String::from_utf8_lossy(&v).into_owned(),
                    )
                })
                .collect()
        })
    }

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn unset_takes_out_a_name_or_an_exact_assignment() {
        let mut env = Env::new();
        env.set("LANG", "C.UTF-8").unwrap();
        env.set("LC_ALL", "C").unwrap();
        env.set("TERM", "vt220").unwrap();
        env.unset("LANG");
        env.unset("LC_ALL=POSIX");
        env.unset("TERM=vt220");
        env.unset("ABSENT");
        assert_eq!(env.get("LANG"), None);
        assert_eq!(env.get("LC_ALL"), Some(&b"C"[..]), "another value stays");
        assert_eq!(env.get("TERM"), None);
    }

    #[test]
    fn plain_lines_comments_and_blanks() {
        let got = parse("# comment\n; also\n\nA=1\n  B = two words  \nexport C=3\n").unwrap();
        assert_eq!(got, kv(&[("A", "1"), ("B", "two words"), ("C", "3")]));
    }

    #[test]
    fn quotes_and_escapes() {
        let got = parse("A='x  y'\nB=\"q\\\"uote \\$HOME \\n\"\nC=a\\ b\\\\\nD=pre\"mid\"post\n")
            .unwrap();
        assert_eq!(
            got,
            kv(&[
                ("A", "x  y"),
                ("B", "q\"uote $HOME \\n"),
                ("C", "a b\\"),
                ("D", "premidpost")
            ])
        );
    }

    #[test]
    fn continuations_and_multiline_quotes() {
        let got = parse("A=one \\\ntwo\nB=\"l1\nl2\"\nC=3").unwrap();
        assert_eq!(got, kv(&[("A", "one two"), ("B", "l1\nl2"), ("C", "3")]));
    }

    #[test]
    fn empty_values_and_crlf() {
        let got = parse("A=\r\nB=x\r\nC=\"\"\n").unwrap();
        assert_eq!(got, kv(&[("A", ""), ("B", "x"), ("C", "")]));
    }

    #[test]
    fn errors_carry_line_numbers() {
        assert_eq!(
            parse("A=1\nnot a pair\n"),
            Err(EnvError::Syntax {
                line: 2,
                message: "expected KEY=VALUE"
            })
        );
        assert_eq!(
            parse("A=1\n\nB=\"open\nstill\n"),
            Err(EnvError::Syntax {
                line: 3,
                message: "unterminated double quote"
            })
        );
        assert_eq!(parse("1A=x\n"), Err(EnvError::InvalidName("1A".into())));
        assert_eq!(parse("A-B=x\n"), Err(EnvError::InvalidName("A-B".into())));
        assert!(matches!(parse_env_file(b"A=x\0y\n"), Err(EnvError::Nul(_))));
    }

    #[test]
    fn later_settings_replace_earlier_ones() {
        let mut env = Env::new();
        env.set("PATH", "/bin").unwrap();
        env.extend_file(b"PATH=/usr/bin\nX=1\n").unwrap();
        env.set("X", "2").unwrap();
        assert_eq!(env.get("PATH"), Some(&b"/usr/bin"[..]));
        assert_eq!(env.get("X"), Some(&b"2"[..]));
        assert_eq!(env.len(), 2);
        env.remove("X");
        assert_eq!(env.get("X"), None);
    }

    #[test]
    fn bad_names_and_values_are_refused() {
        let mut env = Env::new();
        assert!(env.set("", "x").is_err());
        assert!(env.set("A=B", "x").is_err());
        assert!(env.set("A", "x\0").is_err());
        assert!(env.is_empty());
    }

    #[test]
    fn from_current_sees_the_process_environment() {
        // PATH is set for `cargo test`; this checks the capture, not PATH.
        let env = Env::from_current();
        assert_eq!(env.len(), std::env::vars_os().count());
    }

    proptest::proptest! {
        #[test]
        fn parser_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..256)) {
            let _ = parse_env_file(&bytes);
        }

        #[test]
        fn simple_pairs_round_trip(k in "[A-Za-z_][A-Za-z0-9_]{0,8}", v in "[a-z0-9/:.]{0,12}") {
            let got = parse(&format!("{k}={v}\n")).unwrap();
            proptest::prop_assert_eq!(got, vec![(k, v)]);
        }
    }
}
