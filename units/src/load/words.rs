//! Splitting a command line into words the way a POSIX shell does, without
//! running a shell.

/// Characters that a shell treats as operators. No shell runs the command,
/// so they would reach the program as plain words, which is never what was
/// meant: an unquoted one is an error that says so.
const OPERATORS: &[char] = &['|', '&', ';', '<', '>', '(', ')', '`'];

/// Splits `s` into words exactly as a POSIX shell splits a simple command,
/// with no expansion of any kind:
///
/// - words are separated by unquoted spaces and tabs;
/// - `'...'` keeps everything literally (a single quote cannot occur inside);
/// - `"..."` keeps everything literally except that a backslash escapes
///   `$`, `` ` ``, `"`, `\` and a newline (an escaped newline is removed);
///   any other backslash stays;
/// - outside quotes a backslash keeps the next character literally, and a
///   backslash-newline is removed (a line continuation);
/// - quotes glue to the text around them (`a"b c"d` is one word `ab cd`), and
///   `''` or `""` is an empty word;
/// - `$`, `*`, `?`, `[`, `~` are plain text: no variable expansion, no
///   globbing, no tilde expansion. `$MAINPID` stays as it is, for the init to
///   replace when it runs the command.
///
/// Errors: an unterminated quote, a backslash at the very end, an unquoted
/// newline followed by more text (a shell would run that as a second
/// command; newlines at the end are fine), an unquoted shell operator (`|`, `&`, `;`, `<`, `>`, `(`, `)`, `` ` ``) or an unquoted
/// `#` at the start of a word (a shell would start a comment there), and an
/// empty command.
///
/// ```
/// use flotilla_units::load::split_command;
/// assert_eq!(
///     split_command(r#"/bin/kill -USR1 $MAINPID"#).unwrap(),
///     ["/bin/kill", "-USR1", "$MAINPID"]
/// );
/// assert_eq!(split_command(r#"echo 'a b' "c \"d\"" e\ f"#).unwrap(), ["echo", "a b", "c \"d\"", "e f"]);
/// assert!(split_command("echo 'oops").is_err());
/// ```
pub fn split_command(s: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    // True once the current word has begun (even as an empty `''`).
    let mut in_word = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
                // A shell would end the command here and run what follows
                // as another one; trailing newlines (a YAML block scalar
                // ends with one) are fine.
                if chars.any(|c| !c.is_whitespace()) {
                    return Err(
                        "an unquoted newline would end the command in a shell; keep \
                                the command on one line (or end the line with `\\`)"
                            .to_string(),
                    );
                }
                break;
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(next) => {
                    word.push(next);
                    in_word = true;
                }
                None => {
                    return Err("the command ends with a backslash that escapes nothing".to_string())
                }
            },
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(q) => word.push(q),
                        None => return Err("unterminated single quote (')".to_string()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.peek() {
                            Some('\n') => {
                                chars.next();
                            }
                            Some(&e @ ('$' | '`' | '"' | '\\')) => {
                                chars.next();
                                word.push(e);
                            }
                            _ => word.push('\\'),
                        },
                        Some(q) => word.push(q),
                        None => return Err("unterminated double quote (\")".to_string()),
                    }
                }
            }
            '#' if !in_word => {
                return Err(
                    "unquoted `#` at the start of a word (a shell would start a comment \
                     there); quote it"
                        .to_string(),
                )
            }
            c if OPERATORS.contains(&c) => {
                return Err(format!(
                    "unquoted `{c}`: no shell runs the command, so shell operators do not \
                     work; quote it, or run the command with `/bin/sh -c '...'`"
                ))
            }
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        return Err("empty command".to_string());
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::split_command;

    fn ok(s: &str) -> Vec<String> {
        match split_command(s) {
            Ok(w) => w,
            Err(e) => panic!("{s:?}: {e}"),
        }
    }

    fn err(s: &str) -> String {
        match split_command(s) {
            Ok(w) => panic!("{s:?} split into {w:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn plain_words() {
        assert_eq!(ok("/usr/bin/maddy run"), ["/usr/bin/maddy", "run"]);
        assert_eq!(ok("  a \t b c  \n\n"), ["a", "b", "c"]);
        assert_eq!(
            ok("/bin/kill -TERM $MAINPID"),
            ["/bin/kill", "-TERM", "$MAINPID"]
        );
        assert_eq!(
            ok("echo ${MAINPID} $HOME ~ *.txt [ab]?"),
            ["echo", "${MAINPID}", "$HOME", "~", "*.txt", "[ab]?"]
        );
        assert_eq!(ok("a=b c#d"), ["a=b", "c#d"]);
    }

    #[test]
    fn single_quotes_keep_everything() {
        assert_eq!(
            ok(r#"echo 'a  b' '$x' '\n' '"'"#),
            ["echo", "a  b", "$x", "\\n", "\""]
        );
        assert_eq!(ok("echo '' x"), ["echo", "", "x"]);
        assert_eq!(ok("echo 'a'b'c'"), ["echo", "abc"]);
        assert_eq!(ok("echo '|;&#'"), ["echo", "|;&#"]);
        assert_eq!(ok("echo 'multi\nline'"), ["echo", "multi\nline"]);
    }

    #[test]
    fn double_quotes_and_their_escapes() {
        assert_eq!(ok(r#"echo "a  b""#), ["echo", "a  b"]);
        assert_eq!(ok(r#"echo "\$ \` \" \\""#), ["echo", "$ ` \" \\"]);
        // Other backslashes stay.
        assert_eq!(ok(r#"echo "\n\a\'""#), ["echo", "\\n\\a\\'"]);
        // An escaped newline disappears.
        assert_eq!(ok("echo \"a\\\nb\""), ["echo", "ab"]);
        assert_eq!(ok(r#"echo "" x"#), ["echo", "", "x"]);
        assert_eq!(ok(r#"echo "$MAINPID""#), ["echo", "$MAINPID"]);
        assert_eq!(ok(r#"echo a"b c"d"#), ["echo", "ab cd"]);
        assert_eq!(
            ok(r#"sh -c "echo 'hi' | cat""#),
            ["sh", "-c", "echo 'hi' | cat"]
        );
    }

    #[test]
    fn backslash_outside_quotes() {
        assert_eq!(ok(r"echo a\ b"), ["echo", "a b"]);
        assert_eq!(
            ok(r#"echo \'x\' \"y\" \\ \$z"#),
            ["echo", "'x'", "\"y\"", "\\", "$z"]
        );
        assert_eq!(
            ok(r"find . -exec rm {} \;"),
            ["find", ".", "-exec", "rm", "{}", ";"]
        );
        assert_eq!(ok("echo a\\\nb"), ["echo", "ab"]);
        assert_eq!(ok("echo \\\n x"), ["echo", "x"]);
        assert_eq!(ok(r"echo \#x"), ["echo", "#x"]);
    }

    #[test]
    fn errors() {
        assert_eq!(err(""), "empty command");
        assert_eq!(err(" \t\n"), "empty command");
        assert_eq!(
            err("a\nb"),
            "an unquoted newline would end the command in a shell; keep the command on one \
             line (or end the line with `\\`)"
        );
        assert_eq!(err("\\\n"), "empty command");
        assert_eq!(err("echo 'oops"), "unterminated single quote (')");
        assert_eq!(err("echo \"oops"), "unterminated double quote (\")");
        assert_eq!(err("echo \"oops\\\""), "unterminated double quote (\")");
        assert_eq!(
            err("echo x\\"),
            "the command ends with a backslash that escapes nothing"
        );
        assert_eq!(
            err("foo | logger"),
            "unquoted `|`: no shell runs the command, so shell operators do not work; quote \
             it, or run the command with `/bin/sh -c '...'`"
        );
        for op in ["a;b", "a && b", "a > f", "a<f", "$(date)", "`date`", "a &"] {
            assert!(err(op).starts_with("unquoted `"), "{op}");
        }
        assert_eq!(
            err("foo # comment"),
            "unquoted `#` at the start of a word (a shell would start a comment there); quote it"
        );
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC*") {
            let _ = split_command(&s);
        }

        /// Words made only of safe characters, joined by spaces, come back unchanged.
        #[test]
        fn plain_words_round_trip(words in proptest::collection::vec("[A-Za-z0-9/._=:,+-]{1,12}", 1..8)) {
            proptest::prop_assert_eq!(split_command(&words.join(" ")), Ok(words));
        }

        /// Any words, each single-quoted (with `'\''` for a quote), come back unchanged.
        #[test]
        fn quoted_words_round_trip(words in proptest::collection::vec("\\PC{0,12}", 1..6)) {
            let line: Vec<String> = words.iter().map(|w| format!("'{}'", w.replace('\'', r"'\''"))).collect();
            proptest::prop_assert_eq!(split_command(&line.join(" ")), Ok(words));
        }
    }
}
