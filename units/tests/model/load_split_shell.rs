//! `split_command` against a real POSIX shell: for random command lines
//! built from quotes, backslashes, blanks and text, the words must be the
//! ones `/bin/sh` gives to a program (printed with `printf '%s\0'`). Inputs
//! where a shell would expand something (`$`, globs with `set -f` off, `~`)
//! are not generated: `split_command` keeps those literally by design.

use flotilla_units::load::split_command;
use proptest::prelude::*;
use std::process::Command;

/// The words `/bin/sh` splits `line` into, or `None` if the shell rejects it.
/// No `PATH`, so that nothing but the `printf` builtin could run.
fn shell_words(line: &str) -> Option<Vec<String>> {
    let script = format!("set -f; printf '%s\\0' {line}");
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(&script)
        .env_clear()
        .env("PATH", "/nonexistent")
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    // `printf` with no argument still prints the format once.
    let mut words: Vec<String> = text.split('\0').map(str::to_string).collect();
    words.pop();
    Some(words)
}

fn have_shell() -> bool {
    shell_words("a").as_deref() == Some(&["a".to_string()][..])
}

#[test]
fn known_cases_agree_with_the_shell() {
    if !have_shell() {
        eprintln!("no /bin/sh: skipped");
        return;
    }
    for line in [
        r#"a 'b c' "d e""#,
        r#"a\ b "c\"d" 'e'\''f'"#,
        r#""\a\b\\\`""#,
        "a\\\nb \"c\\\nd\"",
        r#"x"y"'z' "" ''"#,
        "\t a \t b  c\n\n",
        r#"find . -exec rm {} \;"#,
        r#"echo a=b --x=\"y\""#,
    ] {
        assert_eq!(split_command(line).ok(), shell_words(line), "{line:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_lines_agree_with_the_shell(
        parts in proptest::collection::vec(
            prop_oneof![
                Just("'".to_string()),
                Just("\"".to_string()),
                Just("\\".to_string()),
                Just(" ".to_string()),
                Just("\t".to_string()),
                Just("\n".to_string()),
                Just("\\\n".to_string()),
                Just("\\\"".to_string()),
                Just("\\\\".to_string()),
                // No letters but `x`: no random word can name a command or a
                // shell builtin, should a line ever reach the shell unsplit.
                "[x0-9=,.:/+-]{1,3}",
                Just("é".to_string()),
            ],
            1..14,
        )
    ) {
        if !have_shell() {
            return Ok(());
        }
        let line: String = parts.concat();
        let ours = split_command(&line);
        if ours.as_ref().is_err_and(|e| e.starts_with("an unquoted newline")) {
            // The shell would run a second command: not something to try.
            return Ok(());
        }
        let theirs = shell_words(&line);
        match (&ours, &theirs) {
            (Ok(words), Some(sh)) => prop_assert_eq!(words, sh, "{:?}", line),
            // An unterminated quote: both refuse.
            (Err(e), None) if e.starts_with("unterminated") => {}
            // A trailing backslash: we refuse, the shell guesses; an empty
            // line: we refuse, `printf` prints its format once.
            (Err(e), _) if e.starts_with("the command ends") || e == "empty command" => {}
            _ => prop_assert!(false, "{:?}: ours {:?}, sh {:?}", line, ours, theirs),
        }
    }
}
