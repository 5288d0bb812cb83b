//! systemd command lines (`ExecStart=` and friends) and `Environment=`
//! assignments, split with systemd's rules.
//!
//! Words are separated by whitespace; `"…"` and `'…'` quote (anywhere in a
//! word); backslash escapes are C's (`\n`, `\t`, `\\`, `\"`, `\'`, `\s` for
//! a space, `\xHH`, `\NNN` octal, `\uHHHH`, `\UHHHHHHHH`) and a backslash
//! before whitespace keeps it. In command lines a lone `;` separates
//! commands and `\;` is a literal `;` word.

pub use crate::c_words::c_unescape;
use crate::c_words::{Lexer, Tok};
use crate::spec::{Command, Privileges};

fn valid_env_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Splits a command-line value (specifiers already expanded, continuation
/// lines already joined) into its commands, each with the flags of its
/// prefixes (`-`, `@`, `:`, `+`, `!`, `!!`). The error says why the line
/// is unusable. A line whose only fault is an invalid escape (`\(` in a
/// shell script's `find \( … \)`) is read again keeping such escapes as
/// written, as systemd corrects it; the flag says so, for a warning.
pub fn parse_exec(value: &str) -> Result<(Vec<Command>, bool), String> {
    match split_commands(Lexer::new(value)) {
        Ok(cmds) => Ok((cmds, false)),
        Err(strict) => {
            let mut lx = Lexer::new(value);
            lx.relax = true;
            split_commands(lx)
                .map(|cmds| (cmds, true))
                .map_err(|_| strict)
        }
    }
}

fn split_commands(mut lx: Lexer) -> Result<Vec<Command>, String> {
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
        if at && words.len() < 2 {
            return Err("the @ prefix needs argv[0] after the program".to_string());
        }
        // `!!` acts as `!` only on a kernel without ambient capabilities
        // (before Linux 4.3), where `AmbientCapabilities=` could not give
        // the unit's user what it needs; every kernel flotilla runs on has
        // them, so the unit's `User=` and `AmbientCapabilities=` apply.
        let privileges = if plus {
            Privileges::Full
        } else if bang == 1 {
            Privileges::NoUserChange
        } else {
            Privileges::Unit
        };
        let mut command = Command::new(words);
        command.ignore_failure = ignore;
        command.argv0 = at;
        command.privileges = privileges;
        command.expand_env = !colon;
        out.push(command);
    }
    Ok(out)
}

/// The words of a command with systemd's substitution of environment
/// variables, as the process is started (`lookup` gives a variable's
/// value): a word that is `$NAME` alone becomes the value split at blanks
/// (quotes in it group, as in a command line; nothing if it is unset or
/// empty); elsewhere `${NAME}` becomes the value as it is (empty if
/// unset), `${NAME:-default}` the default when it is unset or empty,
/// `${NAME:+alt}` `alt` when it is set and not empty; `$$` becomes `$`;
/// any other `$` stays.
///
/// ```
/// use flotilla_units::exec::expand_env;
/// let env = |n: &str| match n { "OPTS" => Some("-a 'b c'"), "X" => Some("1 2"), _ => None };
/// let argv: Vec<String> = ["/bin/x", "$OPTS", "--x=${X}", "$NONE", "${NONE:-d}", "$$X", "a$X"]
///     .iter().map(|s| s.to_string()).collect();
/// assert_eq!(expand_env(&argv, env), ["/bin/x", "-a", "b c", "--x=1 2", "d", "$X", "a$X"]);
/// ```
pub fn expand_env<'a>(argv: &[String], lookup: impl Fn(&str) -> Option<&'a str>) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    for w in argv {
        if let Some(name) = w
            .strip_prefix('$')
            .filter(|n| !n.starts_with('{') && !n.starts_with('$') && !n.is_empty())
        {
            // systemd splits the value as it splits a command line.
            let value = lookup(name).unwrap_or("");
            let mut lx = Lexer::new(value);
            while let Ok(Some(tok)) = lx.next_token(false) {
                if let Tok::Word(w) = tok {
                    out.push(w);
                }
            }
            continue;
        }
        out.push(expand_word(w, &lookup));
    }
    out
}

/// One word with `${NAME}` (and its `:-`, `:+` forms) and `$$` replaced.
fn expand_word<'a>(word: &str, lookup: &impl Fn(&str) -> Option<&'a str>) -> String {
    if !word.contains('$') {
        return word.to_string();
    }
    let mut out = String::with_capacity(word.len());
    let mut rest = word;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some((inner, tail)) = after
            .strip_prefix('{')
            .and_then(|a| a.find('}').map(|end| (&a[..end], &a[end + 1..])))
        {
            let value = |n: &str| lookup(n).filter(|v| !v.is_empty());
            match inner.split_once(":-") {
                Some((n, default)) => out.push_str(value(n).unwrap_or(default)),
                None => match inner.split_once(":+") {
                    Some((n, alt)) => out.push_str(if value(n).is_some() { alt } else { "" }),
                    None => out.push_str(lookup(inner).unwrap_or("")),
                },
            }
            rest = tail;
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// One word of an `Environment=` line: `Ok((name, value))` for a
/// `NAME=value` assignment, `Err(word)` for anything else.
pub type EnvWord = Result<(String, String), String>;

/// One `Environment=` line, word by word. The error says why the line is
/// unusable.
pub fn parse_environment(value: &str) -> Result<Vec<EnvWord>, String> {
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
        parse_exec(v).map(|(cs, _)| cs.into_iter().map(|c| c.argv.to_vec()).collect())
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
            ("/bin/echo $$HOME $$", &[&["/bin/echo", "$$HOME", "$$"]]),
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
            (r#"/bin/echo "abc\"#, "trailing backslash"),
            ("-", "empty command"),
            ("/bin/a ; ; /bin/b", "empty command"),
            ("\"\" a", "empty command"),
            ("@/bin/a", "the @ prefix needs argv[0] after the program"),
        ];
        for (input, want) in cases {
            assert_eq!(argv(input), Err(want.to_string()), "input {input:?}");
        }
    }

    /// An invalid escape is kept as written, and the line said to have
    /// been corrected (systemd's TEST-34 unit: `find \( … \)` in a
    /// quoted `bash -c` script).
    #[test]
    fn invalid_escapes_are_kept_as_written() {
        let cases = [
            (r"/bin/echo \q", r"\q"),
            (r"/bin/echo \xZZ", r"\xZZ"),
            (r"/bin/echo \x4", r"\x4"),
            (r"/bin/echo \000", r"\000"),
            (r"/bin/echo \777", r"\777"),
            (r"/bin/echo \UFFFFFFFF", r"\UFFFFFFFF"),
            (r"/bin/echo abc\", r"abc\"),
            (
                r"/bin/sh -c 'find / \( -path /x \) \n'",
                "find / \\( -path /x \\) \n",
            ),
        ];
        for (input, want) in cases {
            let (cmds, corrected) = parse_exec(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert!(corrected, "{input}");
            assert_eq!(
                cmds[0].argv.to_vec().last().map(String::as_str),
                Some(want),
                "{input}"
            );
        }
        assert!(!parse_exec(r"/bin/echo \x41").unwrap().1);
    }

    #[test]
    fn prefixes() {
        let c = &parse_exec("-/bin/false").unwrap().0[0];
        assert!(c.ignore_failure && c.expand_env && !c.argv0);
        assert_eq!(c.privileges, Privileges::Unit);
        let c = &parse_exec(":-/bin/echo $FOO").unwrap().0[0];
        assert!(
            c.ignore_failure && !c.expand_env,
            "':' turns substitution off"
        );
        assert_eq!(c.argv, ["/bin/echo", "$FOO"]);
        let c = &parse_exec("@/bin/sh mysh -c true").unwrap().0[0];
        assert!(c.argv0);
        assert_eq!(c.argv, ["/bin/sh", "mysh", "-c", "true"]);
        let c = &parse_exec("!/bin/true").unwrap().0[0];
        assert_eq!(c.privileges, Privileges::NoUserChange);
        assert_eq!(c.argv, ["/bin/true"]);
        // `!!`: a no-op where the kernel has ambient capabilities.
        let c = &parse_exec("!!/bin/true").unwrap().0[0];
        assert_eq!(c.privileges, Privileges::Unit);
        assert_eq!(c.argv, ["/bin/true"]);
        let c = &parse_exec("!!!/bin/true").unwrap().0[0];
        assert_eq!(c.argv, ["!/bin/true"]);
        let c = &parse_exec("+-/bin/true").unwrap().0[0];
        assert_eq!(c.privileges, Privileges::Full);
        assert!(c.ignore_failure);
        // A repeated prefix character is part of the path.
        let c = &parse_exec("--/bin/x").unwrap().0[0];
        assert_eq!(c.argv, ["-/bin/x"]);
    }

    #[test]
    fn substitution() {
        let env = |n: &str| match n {
            "A" => Some("one two"),
            "E" => Some(""),
            "Q" => Some(r#"-o "x y" z"#),
            _ => None,
        };
        let words = |v: &[&str]| -> Vec<String> { v.iter().map(|s| s.to_string()).collect() };
        let cases: &[(&[&str], &[&str])] = &[
            (&["/bin/x", "$A"], &["/bin/x", "one", "two"]),
            (&["/bin/x", "$E", "$NONE", "y"], &["/bin/x", "y"]),
            (&["/bin/x", "$Q"], &["/bin/x", "-o", "x y", "z"]),
            (&["/bin/x", "${A}"], &["/bin/x", "one two"]),
            (&["/bin/x", "a${A}b${NONE}c"], &["/bin/x", "aone twobc"]),
            (
                &["/bin/x", "${NONE:-d e}", "${E:-f}", "${A:-g}"],
                &["/bin/x", "d e", "f", "one two"],
            ),
            (
                &["/bin/x", "${A:+set}", "${E:+set}", "${NONE:+set}"],
                &["/bin/x", "set", "", ""],
            ),
            (
                &["/bin/x", "$$", "$$A", "x$A", "${A", "$"],
                &["/bin/x", "$", "$A", "x$A", "${A", "$"],
            ),
            (&["$A"], &["one", "two"]),
        ];
        for (argv, want) in cases {
            assert_eq!(expand_env(&words(argv), env), words(want), "{argv:?}");
        }
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
