//! systemd command lines (`ExecStart=` and friends) and `Environment=`
//! assignments, split with systemd's rules.
//!
//! Words are separated by whitespace; `"…"` and `'…'` quote (anywhere in a
//! word); backslash escapes are C's (`\n`, `\t`, `\\`, `\"`, `\'`, `\s` for
//! a space, `\xHH`, `\NNN` octal, `\uHHHH`, `\UHHHHHHHH`) and a backslash
//! before whitespace keeps it. In command lines a lone `;` separates
//! commands and `\;` is a literal `;` word.

use crate::spec::Command;

/// One command of a command line, with what could not be honoured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExecCommand {
    /// The command.
    pub command: Command,
    /// Warnings about prefixes and `$` expansions, as messages.
    pub warnings: Vec<String>,
}

enum Tok {
    Word(String),
    Sep,
}

fn is_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

struct Lexer {
    chars: Vec<char>,
    i: usize,
}

impl Lexer {
    fn new(s: &str) -> Lexer {
        Lexer {
            chars: s.chars().collect(),
            i: 0,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(is_ws) {
            self.i += 1;
        }
    }

    fn ends_word_at(&self, j: usize) -> bool {
        self.chars.get(j).is_none_or(|&c| is_ws(c))
    }

    fn next_token(&mut self, separators: bool) -> Result<Option<Tok>, String> {
        self.skip_ws();
        let Some(c) = self.peek() else {
            return Ok(None);
        };
        if separators {
            if c == ';' && self.ends_word_at(self.i + 1) {
                self.i += 1;
                return Ok(Some(Tok::Sep));
            }
            if c == '\\'
                && self.chars.get(self.i + 1) == Some(&';')
                && self.ends_word_at(self.i + 2)
            {
                self.i += 2;
                return Ok(Some(Tok::Word(";".to_string())));
            }
        }
        let mut word = String::new();
        let mut quote: Option<char> = None;
        loop {
            let Some(c) = self.peek() else {
                if quote.is_some() {
                    return Err("unterminated quote".to_string());
                }
                break;
            };
            match quote {
                None if is_ws(c) => break,
                None if c == '"' || c == '\'' => {
                    quote = Some(c);
                    self.i += 1;
                    continue;
                }
                Some(q) if c == q => {
                    quote = None;
                    self.i += 1;
                    continue;
                }
                _ => {}
            }
            self.i += 1;
            if c == '\\' {
                word.push(self.unescape()?);
            } else {
                word.push(c);
            }
        }
        Ok(Some(Tok::Word(word)))
    }

    /// The character of the escape after a backslash (already consumed).
    fn unescape(&mut self) -> Result<char, String> {
        let Some(c) = self.peek() else {
            return Err("trailing backslash".to_string());
        };
        self.i += 1;
        let simple = match c {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            's' => Some(' '),
            '\\' | '"' | '\'' => Some(c),
            c if is_ws(c) => Some(c),
            _ => None,
        };
        if let Some(s) = simple {
            return Ok(s);
        }
        let (radix, digits) = match c {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => {
                self.i -= 1;
                (8, 3)
            }
            _ => return Err(format!("invalid escape \\{c}")),
        };
        let start = self.i;
        let mut v: u32 = 0;
        for _ in 0..digits {
            let d = self.peek().and_then(|d| d.to_digit(radix));
            let Some(d) = d else {
                let got: String = self.chars[start - usize::from(radix == 16)..self.i]
                    .iter()
                    .collect();
                return Err(format!("invalid escape \\{got}"));
            };
            v = v * radix + d;
            self.i += 1;
        }
        if v == 0 {
            return Err("a NUL character (\\0) is not allowed".to_string());
        }
        if radix == 8 && v > 0o377 {
            return Err(format!("invalid octal escape \\{v:o}"));
        }
        char::from_u32(v).ok_or_else(|| format!("invalid character escape U+{v:X}"))
    }
}

fn valid_env_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Replaces `$$` by `$` and collects the variable references systemd would
/// substitute (`${NAME}` anywhere, `$NAME` as a whole word), except
/// `$MAINPID`.
fn scan_env(word: &str, refs: &mut Vec<String>) -> String {
    if let Some(name) = word.strip_prefix('$') {
        if valid_env_name(name) {
            if name != "MAINPID" {
                refs.push(word.to_string());
            }
            return word.to_string();
        }
    }
    let chars: Vec<char> = word.chars().collect();
    let mut out = String::with_capacity(word.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '$' {
            match chars.get(i + 1) {
                Some('$') => {
                    out.push('$');
                    i += 2;
                    continue;
                }
                Some('{') => {
                    if let Some(len) = chars[i + 2..].iter().position(|&c| c == '}') {
                        let name: String = chars[i + 2..i + 2 + len].iter().collect();
                        if name != "MAINPID" {
                            refs.push(format!("${{{name}}}"));
                        }
                        out.push_str(&format!("${{{name}}}"));
                        i += len + 3;
                        continue;
                    }
                }
                _ => {}
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Splits a command-line value (specifiers already expanded, continuation
/// lines already joined) into its commands. `key` (e.g. `ExecStart`) names
/// the setting in warnings. The error says why the line is unusable.
pub(crate) fn parse_exec(key: &str, value: &str) -> Result<Vec<ExecCommand>, String> {
    let mut lx = Lexer::new(value);
    let mut out = Vec::new();
    loop {
        lx.skip_ws();
        if lx.peek().is_none() {
            break;
        }
        let (mut ignore, mut at, mut colon, mut plus, mut bang) = (false, false, false, false, 0);
        while let Some(c) = lx.peek() {
            match c {
                '-' if !ignore => ignore = true,
                '@' if !at => at = true,
                ':' if !colon => colon = true,
                '+' if !plus && bang == 0 => plus = true,
                '!' if !plus && bang < 2 => bang += 1,
                _ => break,
            }
            lx.i += 1;
        }
        let mut words = Vec::new();
        while let Some(tok) = lx.next_token(true)? {
            match tok {
                Tok::Sep => break,
                Tok::Word(w) => words.push(w),
            }
        }
        if words.is_empty() || words[0].is_empty() {
            return Err("empty command".to_string());
        }
        let mut warnings = Vec::new();
        if at {
            if words.len() < 2 {
                return Err("the @ prefix needs argv[0] after the program".to_string());
            }
            let argv0 = words.remove(1);
            warnings.push(format!(
                "{key}=: the @ prefix is not supported, argv[0] {argv0:?} is dropped (argv[0] is the program)"
            ));
        }
        if plus || bang > 0 {
            let p = if plus {
                "+".to_string()
            } else {
                "!".repeat(bang)
            };
            warnings.push(format!(
                "{key}=: the {p} prefix is not supported, the command runs with the unit's User= and Group="
            ));
        }
        if !colon {
            let mut refs = Vec::new();
            words = words.iter().map(|w| scan_env(w, &mut refs)).collect();
            if let Some(first) = refs.first() {
                warnings.push(format!(
                    "{key}= uses {first}: environment variables are not substituted in commands (only $MAINPID), it is passed as written"
                ));
            }
        }
        out.push(ExecCommand {
            command: Command {
                argv: words.into(),
                ignore_failure: ignore,
            },
            warnings,
        });
    }
    Ok(out)
}

/// One word of an `Environment=` line: `Ok((name, value))` for a
/// `NAME=value` assignment, `Err(word)` for anything else.
pub(crate) type EnvWord = Result<(String, String), String>;

/// One `Environment=` line, word by word. The error says why the line is
/// unusable.
pub(crate) fn parse_environment(value: &str) -> Result<Vec<EnvWord>, String> {
    let mut lx = Lexer::new(value);
    let mut out = Vec::new();
    while let Some(tok) = lx.next_token(false)? {
        let Tok::Word(w) = tok else { continue };
        match w.split_once('=') {
            Some((k, v)) if valid_env_name(k) => out.push(Ok((k.to_string(), v.to_string()))),
            _ => out.push(Err(w)),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(v: &str) -> Result<Vec<Vec<String>>, String> {
        parse_exec("ExecStart", v)
            .map(|cs| cs.into_iter().map(|c| c.command.argv.to_vec()).collect())
    }

    #[test]
    fn splitting() {
        let cases: &[(&str, &[&[&str]])] = &[
            ("/bin/echo a  b", &[&["/bin/echo", "a", "b"]]),
            (r#"/bin/echo "a b" 'c d'"#, &[&["/bin/echo", "a b", "c d"]]),
            (
                r#"/bin/echo foo"bar baz"qux"#,
                &[&["/bin/echo", "foobar bazqux"]],
            ),
            (
                r#"/bin/echo "a\"b" 'c\'d'"#,
                &[&["/bin/echo", "a\"b", "c'd"]],
            ),
            (
                r"/bin/echo a\ b \x41\101\u00e9\s",
                &[&["/bin/echo", "a b", "AAé "]],
            ),
            (r"/bin/echo a\nb\tc\\", &[&["/bin/echo", "a\nb\tc\\"]]),
            ("/bin/a x ; /bin/b y", &[&["/bin/a", "x"], &["/bin/b", "y"]]),
            (r"/bin/a \; x;y", &[&["/bin/a", ";", "x;y"]]),
            ("/bin/a ';'", &[&["/bin/a", ";"]]),
            ("  /bin/a  ", &[&["/bin/a"]]),
            ("/bin/a\n  b", &[&["/bin/a", "b"]]),
            ("/bin/echo $$HOME $$", &[&["/bin/echo", "$HOME", "$"]]),
        ];
        for (input, want) in cases {
            let want: Vec<Vec<String>> = want
                .iter()
                .map(|c| c.iter().map(|s| s.to_string()).collect())
                .collect();
            assert_eq!(argv(input), Ok(want), "input {input:?}");
        }
    }

    #[test]
    fn splitting_errors() {
        let cases = [
            (r#"/bin/echo "abc"#, "unterminated quote"),
            ("/bin/echo 'abc", "unterminated quote"),
            (r"/bin/echo abc\", "trailing backslash"),
            (r"/bin/echo \q", r"invalid escape \q"),
            (r"/bin/echo \xZZ", r"invalid escape \x"),
            (r"/bin/echo \x4", r"invalid escape \x4"),
            (r"/bin/echo \000", r"a NUL character (\0) is not allowed"),
            (r"/bin/echo \777", r"invalid octal escape \777"),
            (
                r"/bin/echo \UFFFFFFFF",
                "invalid character escape U+FFFFFFFF",
            ),
            ("-", "empty command"),
            ("/bin/a ; ; /bin/b", "empty command"),
            ("\"\" a", "empty command"),
            ("@/bin/a", "the @ prefix needs argv[0] after the program"),
        ];
        for (input, want) in cases {
            assert_eq!(argv(input), Err(want.to_string()), "input {input:?}");
        }
    }

    #[test]
    fn prefixes() {
        let c = parse_exec("ExecStart", "-/bin/false").unwrap();
        assert!(c[0].command.ignore_failure);
        assert!(c[0].warnings.is_empty());
        let c = parse_exec("ExecStart", ":-/bin/echo $FOO").unwrap();
        assert!(c[0].command.ignore_failure);
        assert_eq!(*c[0].command.argv, ["/bin/echo", "$FOO"]);
        assert!(c[0].warnings.is_empty(), "':' disables substitution: exact");
        let c = parse_exec("ExecStart", "@/bin/sh mysh -c true").unwrap();
        assert_eq!(*c[0].command.argv, ["/bin/sh", "-c", "true"]);
        let c = parse_exec("ExecStart", "!!/bin/true").unwrap();
        assert_eq!(*c[0].command.argv, ["/bin/true"]);
        assert_eq!(c[0].warnings.len(), 1);
        // A repeated prefix character is part of the path.
        let c = parse_exec("ExecStart", "--/bin/x").unwrap();
        assert_eq!(*c[0].command.argv, ["-/bin/x"]);
    }

    #[test]
    fn env_references() {
        let c = parse_exec("ExecStop", "/bin/kill -HUP $MAINPID ${MAINPID}").unwrap();
        assert!(c[0].warnings.is_empty());
        let c = parse_exec("ExecStart", "/bin/echo --x=$FOO").unwrap();
        assert!(
            c[0].warnings.is_empty(),
            "$FOO inside a word is literal in systemd too"
        );
        let c = parse_exec("ExecStart", "/bin/echo a${FOO}b $BAR").unwrap();
        assert_eq!(*c[0].command.argv, ["/bin/echo", "a${FOO}b", "$BAR"]);
        assert_eq!(
            c[0].warnings,
            ["ExecStart= uses ${FOO}: environment variables are not substituted in commands (only $MAINPID), it is passed as written"]
        );
    }

    #[test]
    fn environment() {
        let got = parse_environment(r#"A=1 "B=2 3" C='x y' D= =bad 1X=2 noeq E=a=b"#).unwrap();
        let want: Vec<EnvWord> = vec![
            Ok(("A".into(), "1".into())),
            Ok(("B".into(), "2 3".into())),
            Ok(("C".into(), "x y".into())),
            Ok(("D".into(), "".into())),
            Err("=bad".into()),
            Err("1X=2".into()),
            Err("noeq".into()),
            Ok(("E".into(), "a=b".into())),
        ];
        assert_eq!(got, want);
        assert_eq!(
            parse_environment("A=\"x").unwrap_err(),
            "unterminated quote"
        );
        assert_eq!(
            parse_environment("A=x;y").unwrap(),
            vec![Ok(("A".into(), "x;y".into()))]
        );
    }
}
